"""What the viewer's pages show, read from the store: runs grouped by series, a run with its
samples (failed first) and, for a planned run, its confidence bound and pass^k, one sample, and
the diff of two runs computed by the same function ``report`` calls.

Everything read here is untrusted text: the pages escape it (:mod:`agentic_eval.report.escape`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import select

from agentic_eval.batch.run import BatchError, summary
from agentic_eval.core.transcript import Transcript
from agentic_eval.evaluation.confidence import bound_lines, pass_hat_lines
from agentic_eval.history.diff import diff_runs
from agentic_eval.history.entry import HistoryEntry, SeriesKey
from agentic_eval.history.files import StoredEntry
from agentic_eval.history.series import series_label
from agentic_eval.recordings.files import RecordingError, read_transcript
from agentic_eval.report.build import diff_view
from agentic_eval.report.views import DiffView
from agentic_eval.store.db import Store, StoreError
from agentic_eval.store.models import EvalRun, EvalSample

MAX_RUNS = 5000
"""Runs read for the index page (the newest ones)."""


class NotFound(Exception):
    """An id the store does not hold (the page is a 404)."""


class BadRequest(Exception):
    """A request the viewer cannot answer as asked (the page is a 400)."""


@dataclass(frozen=True)
class RunRow:
    """A run as listed: what produced it and its cached counts and gate."""

    id: str
    domain: str
    agent: str
    agent_kind: str
    mode: str
    backend: str
    model: str
    approval_mode: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    samples: int
    planned_samples: int
    passed: int
    check_failed: int
    error: int
    transient: int
    hard_gate_failures: int
    failure_rate: float | None
    gate: str | None

    @property
    def producer(self) -> str:
        """What produced it: the mode, then the backend and model."""
        return f"{self.mode} · {self.backend} · {self.model}"

    @property
    def kind(self) -> str:
        """replay, scripted or model: how the history tells series apart."""
        return "replay" if self.mode == "replay" else self.agent_kind

    @property
    def series(self) -> SeriesKey:
        """Its series, as the history keys it (:func:`agentic_eval.history.series_key`)."""
        return (self.domain, self.agent, self.approval_mode, self.kind)

    @property
    def pass_rate(self) -> float:
        """Passed samples over all samples (0 when there are none)."""
        return self.passed / self.samples if self.samples else 0.0


_RUN_COLUMNS = (
    EvalRun.id,
    EvalRun.domain,
    EvalRun.agent,
    EvalRun.agent_kind,
    EvalRun.mode,
    EvalRun.backend,
    EvalRun.model,
    EvalRun.approval_mode,
    EvalRun.started_at,
    EvalRun.finished_at,
    EvalRun.status,
    EvalRun.samples,
    EvalRun.planned_samples,
    EvalRun.passed,
    EvalRun.check_failed,
    EvalRun.error,
    EvalRun.transient,
    EvalRun.hard_gate_failures,
    EvalRun.failure_rate,
    EvalRun.gate,
)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _run_row(v: Any) -> RunRow:
    """A row of :data:`_RUN_COLUMNS` (read by name)."""
    return RunRow(
        id=v.id,
        domain=v.domain,
        agent=v.agent,
        agent_kind=v.agent_kind,
        mode=v.mode,
        backend=v.backend,
        model=v.model,
        approval_mode=v.approval_mode,
        started_at=_aware(v.started_at),
        finished_at=None if v.finished_at is None else _aware(v.finished_at),
        status=v.status,
        samples=v.samples,
        planned_samples=v.planned_samples,
        passed=v.passed,
        check_failed=v.check_failed,
        error=v.error,
        transient=v.transient,
        hard_gate_failures=v.hard_gate_failures,
        failure_rate=v.failure_rate,
        gate=v.gate,
    )


@dataclass(frozen=True)
class Series:
    """Runs of one suite by one agent, in one approval mode, produced the same way (replay,
    scripted or model), as ``report`` groups them; oldest first."""

    key: SeriesKey
    runs: tuple[RunRow, ...]

    @property
    def domain(self) -> str:
        """The suite."""
        return self.key[0]

    @property
    def agent(self) -> str:
        """The agent's label."""
        return self.key[1]

    @property
    def label(self) -> str:
        """``agent (approval mode, producer kind)``, as ``report`` heads a series."""
        return series_label(self.key)

    @property
    def latest(self) -> RunRow:
        """The newest run."""
        return self.runs[-1]

    def previous(self, run_id: str) -> RunRow | None:
        """The run before ``run_id`` in this series (None for the first)."""
        ids = [r.id for r in self.runs]
        i = ids.index(run_id)
        return self.runs[i - 1] if i > 0 else None


def all_series(store: Store) -> list[Series]:
    """Every series of the newest :data:`MAX_RUNS` runs, by suite then agent."""
    stmt = select(*_RUN_COLUMNS).order_by(EvalRun.started_at.desc()).limit(MAX_RUNS)
    with store.engine.connect() as conn:
        rows = [_run_row(v) for v in conn.execute(stmt)]
    groups: dict[SeriesKey, list[RunRow]] = {}
    for r in sorted(rows, key=lambda r: (r.started_at, r.id)):
        groups.setdefault(r.series, []).append(r)
    return [Series(key, tuple(runs)) for key, runs in sorted(groups.items())]


def run_row(store: Store, run_id: str) -> RunRow:
    """One run.

    Raises:
        NotFound: No such run.
    """
    with store.engine.connect() as conn:
        found = conn.execute(select(*_RUN_COLUMNS).where(EvalRun.id == run_id)).first()
    if found is None:
        raise NotFound(f"no run {run_id} in the store")
    return _run_row(found)


def series_of(store: Store, run: RunRow) -> Series:
    """The series ``run`` belongs to."""
    stmt = (
        select(*_RUN_COLUMNS)
        .where(
            EvalRun.domain == run.domain,
            EvalRun.agent == run.agent,
            EvalRun.approval_mode == run.approval_mode,
        )
        .order_by(EvalRun.started_at, EvalRun.id)
    )
    with store.engine.connect() as conn:
        rows = [_run_row(v) for v in conn.execute(stmt)]
    return Series(run.series, tuple(r for r in rows if r.series == run.series))


@dataclass(frozen=True)
class SampleRow:
    """A sample as the run page lists it (no transcript)."""

    id: int
    case_id: str
    sample: int
    attempt: int
    outcome: str
    failure_reason: str
    hard_gate_failed: bool
    failed_checks: tuple[tuple[str, bool], ...]
    """(name, hard gate) of each failed check."""
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    duration_ms: float
    unapproved_attempts: int
    unapproved_executions: int

    @property
    def failed(self) -> bool:
        """Not passed (transient included), or a hard gate failed."""
        return self.outcome != "passed" or self.hard_gate_failed

    @property
    def name(self) -> str:
        """``case``, ``case@epoch``, and ``#attempt`` past the first attempt."""
        name = self.case_id if self.sample == 0 else f"{self.case_id}@{self.sample}"
        return name if self.attempt == 1 else f"{name}#{self.attempt}"


def check_dicts(checks: object) -> list[dict[str, Any]]:
    """A sample row's ``checks`` column as a list of check dicts (anything else left out)."""
    items = cast(list[object], checks) if isinstance(checks, list) else []
    return [cast(dict[str, Any], c) for c in items if isinstance(c, dict)]


def _failed_checks(checks: object) -> tuple[tuple[str, bool], ...]:
    return tuple(
        (str(c.get("name")), bool(c.get("hard_gate")))
        for c in check_dicts(checks)
        if not c.get("passed")
    )


@dataclass(frozen=True)
class RunPage:
    """A run, its gate and statistics, and its samples, failed first."""

    run: RunRow
    series: Series
    gate_reason: str
    statistics: tuple[str, ...]
    """The confidence bound and pass^k lines (as ``batch`` prints them)."""
    flaky: tuple[str, ...]
    samples: tuple[SampleRow, ...]
    plan_problem: str
    """Why the bound and pass^k are not shown ('' when they are)."""


def run_page(store: Store, run_id: str) -> RunPage:
    """The run page's data.

    Raises:
        NotFound: No such run.
    """
    run = run_row(store, run_id)
    cols = (
        EvalSample.id,
        EvalSample.case_id,
        EvalSample.sample,
        EvalSample.attempt,
        EvalSample.outcome,
        EvalSample.failure_reason,
        EvalSample.hard_gate_failed,
        EvalSample.checks,
        EvalSample.turns,
        EvalSample.tool_calls,
        EvalSample.input_tokens,
        EvalSample.output_tokens,
        EvalSample.duration_ms,
        EvalSample.unapproved_attempts,
        EvalSample.unapproved_executions,
    )
    stmt = select(*cols).where(EvalSample.run_id == run_id)
    with store.engine.connect() as conn:
        rows = [
            SampleRow(
                id=i,
                case_id=case,
                sample=s,
                attempt=a,
                outcome=o,
                failure_reason=why,
                hard_gate_failed=bool(hard),
                failed_checks=_failed_checks(checks),
                turns=t,
                tool_calls=tc,
                input_tokens=it,
                output_tokens=ot,
                duration_ms=ms,
                unapproved_attempts=ua,
                unapproved_executions=ue,
            )
            for i, case, s, a, o, why, hard, checks, t, tc, it, ot, ms, ua, ue in conn.execute(stmt)
        ]
    rows.sort(key=lambda r: (not r.failed, r.case_id, r.sample, r.attempt))
    statistics: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()
    reason, problem = "", ""
    try:
        s = summary(store, run_id)
    except (BatchError, StoreError, LookupError, ValueError) as exc:
        problem = str(exc)
    else:
        statistics = (*bound_lines(s.gate), *pass_hat_lines(s.epochs))
        flaky = s.epochs.flaky
        reason = s.gate.reason
    return RunPage(run, series_of(store, run), reason, statistics, flaky, tuple(rows), problem)


@dataclass(frozen=True)
class SamplePage:
    """One sample row, its run, and its transcript (or why it is not shown)."""

    run: RunRow
    row: EvalSample
    transcript: Transcript | None
    source: str
    """Where the transcript was read from, or why it is not shown."""


def _transcript(row: EvalSample) -> tuple[Transcript | None, str]:
    if row.transcript is not None:
        try:
            return Transcript.model_validate_json(row.transcript), "the store"
        except ValidationError as exc:
            return None, f"the stored transcript is invalid: {exc.errors()[0]['msg']}"
    if not row.transcript_ref:
        return None, "the store holds no transcript of this sample"
    path = Path(row.transcript_ref)
    try:
        t = read_transcript(path)
    except RecordingError as exc:
        return None, str(exc)
    if (t.case_id, t.sample, t.attempt) != (row.case_id, row.sample, row.attempt) or (
        t.verdict.outcome.kind != row.outcome
    ):
        return None, f"{path} no longer holds this sample's transcript (it changed since the run)"
    return t, path.as_posix()


def sample_page(store: Store, sample_id: int) -> SamplePage:
    """The sample page's data.

    Raises:
        NotFound: No such sample.
    """
    row = store.sample(sample_id)
    if row is None:
        raise NotFound(f"no sample {sample_id} in the store")
    transcript, source = _transcript(row)
    return SamplePage(run_row(store, row.run_id), row, transcript, source)


def _entry(store: Store, texts: dict[str, str], run_id: str) -> StoredEntry:
    if run_id not in texts:
        run_row(store, run_id)  # NotFound for an unknown run
        raise NotFound(
            f"run {run_id} has no history entry in the store (it did not finish, used real "
            "fixtures, or was gated on the upper bound): it cannot be compared"
        )
    try:
        entry = HistoryEntry.model_validate_json(texts[run_id])
    except ValidationError as exc:
        raise BadRequest(f"run {run_id}: its stored history entry is invalid: {exc}") from None
    return StoredEntry(Path(f"{run_id}.json"), entry)


def run_diff(store: Store, base_id: str, head_id: str) -> DiffView:
    """The two runs' stored history entries compared by :func:`agentic_eval.history.diff_runs`
    (what ``report --base BASE --head HEAD`` compares), as the report's view.

    Raises:
        NotFound: A run the store does not hold, or one without a history entry.
        BadRequest: Runs of different suites.
    """
    texts = store.history_texts([base_id, head_id])
    base, head = _entry(store, texts, base_id), _entry(store, texts, head_id)
    try:
        diff = diff_runs(base.entry, head.entry)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    return diff_view(diff, base, head)
