"""Finish a run from the store alone: its samples read back from their rows, its scorecard
rebuilt from them, the sinks its stored backend spec implies closed, the run row finished.

Whatever ran the samples (this process, an earlier one that was stopped, Celery workers), the
run ends the same way, so a resumed run's scorecard equals an uninterrupted one's.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from agentic_eval.batch.plan import RunPlan
from agentic_eval.batch.readback import ShardRows, as_utc, stored_runs
from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.scorecard import ProducedBy
from agentic_eval.evaluation.reconcile import Reconciled
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.session import Ending, SessionResult, finish_session, frozen_heap
from agentic_eval.evaluation.sinks import RecordingSink, ReplaySink, RunSink
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalRun


class FinishedSink(Protocol):
    """Told the finished run, after every sample sink closed (the history files its entry)."""

    def finished(self, result: SessionResult) -> object:
        """Take the finished (or stopped) run."""
        ...


def plan_sinks(plan: RunPlan) -> list[RunSink]:
    """The sinks a plan's backend spec implies, beside the store's: a replay compares with
    the recording (a domain's scorecard too), a recording rewrites the recording's scorecard."""
    spec = plan.backend
    if spec.kind == "replay" and spec.recordings is not None:
        directory = agent_dir(Path(spec.recordings), plan.suite, spec.agent or "reference")
        return [ReplaySink(directory, scorecard=plan.kind == "suite")]
    if spec.record and spec.recordings is not None:
        return [RecordingSink(Path(spec.recordings), plan.full)]
    return []


def corpus_mark(plan: RunPlan) -> str | None:
    """A corpus plan over jobs people worked (origin real or imported): the sha256 of its
    selection, marking the run as derived from real data (its history entry is then never
    written into a git work tree); None for any other plan."""
    if plan.corpus is None:
        return None
    from agentic_eval.workflow.records import HUMAN_ORIGINS

    if not set(plan.corpus.origins) & set(HUMAN_ORIGINS):
        return None
    return hashlib.sha256(canonical_json(plan.corpus).encode("utf-8")).hexdigest()


def produced_of(run: EvalRun) -> ProducedBy:
    """What produced the run's samples, as its row says."""
    kind: Literal["scripted", "model"] = "scripted" if run.agent_kind == "scripted" else "model"
    return ProducedBy(
        agent=run.agent,
        agent_kind=kind,
        backend=run.backend,
        model=run.model,
        approval_mode=run.approval_mode,  # pyright: ignore[reportArgumentType]
    )


def finish_plan(
    store: Store,
    run_id: str,
    sinks: Iterable[RunSink] | None = None,
    *,
    stopped: bool = False,
    read: ShardRows | None = None,
) -> SessionResult:
    """Finish the run from its rows: ``interrupted`` when ``stopped`` or when a planned sample
    has no row, else ``finished``; ``sinks`` default to the plan's (:func:`plan_sinks`);
    ``read``: the rows read already as the child processes stored them (the rest is read here).

    Raises:
        BatchError: No such run, or no plan.
    """
    from agentic_eval.batch.run import BatchError, plan_of, plan_specs

    run = store.run(run_id)
    if run is None:
        raise BatchError(f"no run {run_id} in the store")
    plan = plan_of(run)
    if read is not None and read.run_id == run_id:
        runs = read.every_run(store)
    else:
        with frozen_heap():  # every row read back is kept: no collection rescans them
            runs = stored_runs(store, run_id)
    have = {(c.result.case_id, c.result.sample) for c in runs}
    keys = frozenset((k.case, k.epoch) for k in plan.keys)
    specs, _ = plan_specs(plan)
    mode = plan.backend.kind
    end = Ending(
        suite=plan.suite,
        produced=produced_of(run),
        mode=mode,
        settings=plan.settings(),
        runs=runs,
        started_at=as_utc(run.started_at),
        finished_at=datetime.now(UTC),
        keys=keys,
        full=plan.full,
        stopped=stopped or not keys <= have,
        mark=corpus_mark(plan)
        or next((s.external_fixtures for s in specs if s.external_fixtures), None),
    )
    return finish_session(store, run_id, end, plan_sinks(plan) if sinks is None else list(sinks))


def sweep_abandoned(store: Store) -> list[tuple[EvalRun, Reconciled]]:
    """Every ``running`` run whose process died (its heartbeat stopped): the samples it recorded
    but never stored added from their transcripts, then marked ``abandoned`` (``--resume``
    can still finish it). Returns each run with what was recovered."""
    from agentic_eval.evaluation.reconcile import reconcile_run

    swept: list[tuple[EvalRun, Reconciled]] = []
    for dead in store.abandoned_runs():
        kept = reconcile_run(store, dead)
        store.finish_run(dead.id, None, dead.heartbeat_at or dead.started_at, None, "abandoned")
        store.recount(dead.id)
        swept.append((dead, kept))
    return swept


async def run_plan(
    store: Store,
    run_id: str,
    *,
    on_case: Callable[[CaseRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    worker: str | None = None,
    after: Sequence[FinishedSink] = (),
    processes: int = 1,
) -> SessionResult:
    """Run the run's planned samples the store does not hold yet, then finish it from its rows
    (:func:`finish_plan`) and tell ``after`` (the history): a first run and a resumed one end
    alike. ``processes`` > 1 runs them in that many child processes
    (:func:`~agentic_eval.batch.processes.run_on_processes`; ``on_case`` is then not called).

    Raises:
        BatchError: No such run, no plan, a case gone from the suite, a child process that
            failed.
        AuthenticationFailed: At the first refusal of credentials (live, in this process).
    """
    from agentic_eval.batch.processes import run_on_processes
    from agentic_eval.batch.run import BatchError, plan_of, run_samples

    run = store.run(run_id)
    if run is None:
        raise BatchError(f"no run {run_id} in the store")
    sinks = plan_sinks(plan_of(run))
    read = None
    try:
        if processes > 1:
            ran = await run_on_processes(store, run_id, processes, should_stop=should_stop)
            read = ran.read
        else:
            await run_samples(
                store, run_id, on_case=on_case, should_stop=should_stop, worker=worker, sinks=sinks
            )
    except BaseException:
        with contextlib.suppress(Exception):
            store.finish_run(run_id, None, datetime.now(UTC), None, "interrupted")
        raise
    stopped = bool(should_stop and should_stop())
    result = finish_plan(store, run_id, sinks, stopped=stopped, read=read)
    for sink in after:
        sink.finished(result)
    return result
