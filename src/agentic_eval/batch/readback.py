"""A run's sample rows read back as finished samples (:class:`CaseRun`, without transcripts):
what finishing a run rebuilds its scorecard from.

:class:`ShardRows` reads the rows of the local executor's child processes while they still run
(each child's rows above the last id read: one child's commits come in order of id), so that
finishing the run reads only what came after: reading 10,000 rows back was most of the
parent's serial finish.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Row

from agentic_eval.core.messages import trusted
from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.core.scorecard import CaseResult
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.session import frozen_heap
from agentic_eval.store.db import Store


class RowRuns:
    """Sample rows made into finished samples. Equal checks and outcomes, which most rows
    repeat, are validated once and shared (they are frozen)."""

    def __init__(self) -> None:
        """Nothing read yet."""
        self.runs: list[CaseRun] = []
        self._checks_of: dict[bytes, CheckResult] = {}
        self._texts: dict[str, tuple[CheckResult, ...]] = {}
        self._outcomes: dict[tuple[str, str, str], Outcome] = {}

    def add(self, rows: Iterable[Row[Any]]) -> int:
        """Add ``rows`` (as :meth:`Store.sample_results` reads them; all or, on an error,
        none); the highest row id among them (0: none)."""
        rows = list(rows)
        self.runs.extend(self.made(rows))
        return max((r.id for r in rows), default=0)

    def made(self, rows: Iterable[Row[Any]]) -> list[CaseRun]:
        """``rows`` made into finished samples, not added."""
        return [self._run(r) for r in rows]

    def _run(self, r: Row[Any]) -> CaseRun:
        checks = self._texts.get(r.checks_json)
        if checks is None:
            found_checks: list[CheckResult] = []
            for c in json.loads(r.checks_json):
                key = orjson.dumps(c, option=orjson.OPT_SORT_KEYS)
                found = self._checks_of.get(key)
                if found is None:
                    found = self._checks_of[key] = CheckResult.model_validate(c)
                found_checks.append(found)
            checks = self._texts[r.checks_json] = tuple(found_checks)
        said = (r.outcome, r.failure_reason, r.failure_where)
        outcome = self._outcomes.get(said)
        if outcome is None:
            outcome = self._outcomes[said] = Outcome(
                kind=r.outcome,
                reason=r.failure_reason,
                where=r.failure_where,
            )
        result = trusted(
            CaseResult,
            {
                "case_id": r.case_id,
                "sample": r.sample,
                "outcome": outcome,
                "checks": checks,
                "hard_gate_failed": r.hard_gate_failed,
                "unapproved_attempts": r.unapproved_attempts,
                "unapproved_executions": r.unapproved_executions,
                "turns": r.turns,
                "tool_calls": r.tool_calls,
                "case_verdict": r.case_verdict,
            },
        )
        started = as_utc(r.started_at or r.finished_at or datetime.now(UTC))
        return CaseRun(
            transcript=None,
            result=result,
            started_at=started,
            finished_at=as_utc(r.finished_at or started),
            duration_ms=r.duration_ms,
            input_tokens=r.input_tokens,
            output_tokens=r.output_tokens,
            reproduced=r.reproduced,
            attempt=r.attempt,
        )

    def in_order(self, more: Iterable[CaseRun] = ()) -> list[CaseRun]:
        """Every sample added, and ``more``, in case then sample then attempt order."""
        runs = [*self.runs, *more]
        runs.sort(key=lambda c: (c.result.case_id, c.result.sample, c.attempt))
        return runs


class ShardRows:
    """The rows the named workers store for a run, read as they come (:meth:`catch_up`), then
    with every other row of the run (:meth:`every_run`)."""

    def __init__(self, run_id: str, workers: Iterable[str]) -> None:
        """Read ``workers``' rows of ``run_id`` (none read yet)."""
        self.run_id = run_id
        self._after = dict.fromkeys(workers, 0)
        self._rows = RowRuns()

    def catch_up(self, store: Store) -> None:
        """Read each worker's rows stored since the last call."""
        with frozen_heap():  # every row read back is kept: no collection rescans them
            for worker, after in self._after.items():
                rows = store.sample_results(self.run_id, worker=worker, after=after)
                self._after[worker] = max(after, self._rows.add(rows))

    def every_run(self, store: Store) -> list[CaseRun]:
        """Every stored sample of the run: the workers' rows not read yet, and the rows of no
        worker or of others (an earlier run's, resumed), in case then sample order."""
        self.catch_up(store)
        with frozen_heap():
            others = self._rows.made(store.sample_results(self.run_id, besides=list(self._after)))
        return self._rows.in_order(others)


def stored_runs(store: Store, run_id: str) -> list[CaseRun]:
    """Every stored sample of the run, rebuilt from its row (read without its transcript), in
    case then sample order."""
    rows = RowRuns()
    rows.add(store.sample_results(run_id))
    return rows.in_order()


def as_utc(moment: datetime) -> datetime:
    """``moment``, read as UTC when it has no time zone (SQLite keeps none)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
