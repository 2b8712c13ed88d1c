"""A run with everything around it: store rows, heartbeat, recording, comparison with the commit.

Takes task specs, not a domain: a domain's cases, a workflow scenario or a corpus job all arrive
the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agentic_eval.backends.base import ModelBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.core.scorecard import CaseResult, GateSummary, ProducedBy, Scorecard
from agentic_eval.evaluation.gate import build_scorecard, gate_summary
from agentic_eval.evaluation.runner import CaseCallback, CaseRun, TasksRun, produced_by, run_tasks
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.evaluation.sinks import (
    RecordingSink,
    ReplaySink,
    RunEnd,
    RunSink,
    StoreSink,
    merge_reports,
)
from agentic_eval.recordings.compare import scorecard_sha256
from agentic_eval.recordings.record import RecordingBackend
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store
from agentic_eval.tasks.spec import TaskSpec

BackendMode = Literal["replay", "scripted", "live"]
RunStatus = Literal["finished", "interrupted"]
HEARTBEAT_SECONDS = 20.0


@dataclass(frozen=True)
class SessionResult:
    """A suite run plus what the harness concluded about it."""

    suite: str
    scorecard: Scorecard
    gate: GateSummary
    """The gate as read back from the store's sample rows."""
    run: TasksRun
    mode: BackendMode
    run_id: str
    status: RunStatus
    planned: int
    reproduced: bool | None
    """Replay: every sample reproduced in every field, and the committed scorecard too."""
    fidelity: tuple[int, int] | None
    """Replay: (samples reproduced in every field, samples)."""
    problems: tuple[str, ...] = field(default=())
    """Replay: what was not reproduced (first differing fields)."""
    recorded_to: Path | None = None
    left_alone: tuple[Path, ...] = field(default=())
    """Recording: files in the agent folder that are not this agent's transcripts."""


async def run_session(
    suite: str,
    specs: Sequence[TaskSpec[Any]],
    backend: ModelBackend,
    settings: RunSettings,
    mode: BackendMode,
    *,
    store: Store,
    backend_spec: BackendSpec | None = None,
    concurrency: int = 1,
    on_case: CaseCallback | None = None,
    full: bool = True,
    should_stop: Callable[[], bool] | None = None,
    worker: str | None = None,
) -> SessionResult:
    """Run ``specs``, write run and samples to the store, then record or compare.

    Args:
        suite: The suite (domain) name.
        specs: The samples to run.
        backend: The backend (a :class:`RecordingBackend` records, a :class:`ReplayBackend`
            compares with the committed scorecard).
        settings: Run settings.
        mode: replay, scripted or live (stored with the run).
        store: Where run and samples go.
        backend_spec: The backend's serialisable description (stored on the run row).
        concurrency: Samples in flight.
        on_case: Progress callback.
        full: Whether ``specs`` cover the whole case file (a filtered run compares per case and
            leaves other cases' recordings alone).
        should_stop: Polled before each sample starts; once true the run stops starting new
            samples and ends ``interrupted``.
        worker: Who runs it (stored on the rows).
    """
    produced = produced_by(backend, settings.approval_mode)
    run_id = store.start_run(
        suite,
        produced,
        mode,
        datetime.now(UTC),
        settings={"model": settings.model, **settings.parameters().model_dump(mode="json")},
        backend_spec=backend_spec.model_dump(mode="json") if backend_spec else None,
        planned_samples=len(specs),
        worker=worker,
    )
    sinks: list[RunSink] = [StoreSink(store, run_id, backend, suite, worker)]
    sinks.extend(backend_sinks(backend, full))

    def persist(case_run: CaseRun) -> None:
        for sink in sinks:
            sink.sample(case_run)
        if on_case is not None:
            on_case(case_run)

    beat = asyncio.create_task(heartbeat_loop(store, run_id))
    try:
        with frozen_heap():
            result = await run_tasks(
                specs,
                backend,
                settings,
                concurrency=concurrency,
                on_case=persist,
                should_stop=should_stop,
            )
    except BaseException:  # cancelled (second Ctrl-C), or a run-stopping error
        beat.cancel()
        for sink in sinks:
            sink.flush()
        store.finish_run(run_id, None, datetime.now(UTC), None, "interrupted")
        raise
    beat.cancel()
    for sink in sinks:
        sink.flush()
    return finish_session(
        store,
        run_id,
        Ending(
            suite=suite,
            produced=produced,
            mode=mode,
            settings=settings,
            runs=result.cases,
            started_at=result.started_at,
            finished_at=result.finished_at,
            keys=frozenset((s.case_id, s.sample) for s in specs),
            full=full,
            stopped=len(result.cases) < len(specs),
            mark=next((s.external_fixtures for s in specs if s.external_fixtures), None),
        ),
        sinks,
    )


def backend_sinks(backend: ModelBackend, full: bool) -> list[RunSink]:
    """The sinks a backend object given to :func:`run_session` implies (a run from a stored
    plan takes them from its backend spec instead: :func:`agentic_eval.batch.plan_sinks`)."""
    if isinstance(backend, ReplayBackend):
        return [ReplaySink(backend.directory)]
    if isinstance(backend, RecordingBackend):
        return [RecordingSink(backend.root, full)]
    return []


@dataclass(frozen=True)
class Ending:
    """A run whose samples are all in (or that stopped): what its scorecard is built from."""

    suite: str
    produced: ProducedBy
    mode: BackendMode
    settings: RunSettings
    runs: Sequence[CaseRun]
    """Every sample of the run, in case then sample order."""
    started_at: datetime
    finished_at: datetime
    keys: frozenset[tuple[str, int]]
    """The (case, sample) keys the run planned."""
    full: bool
    stopped: bool
    mark: str | None
    """The real-fixture mark of the run's specs, if any."""
    gate: GateSummary | None = None
    """The gate, when the caller read it already (a batch's upper-bound gate); else it is read
    from the store's rows."""


def stored_gate(
    store: Store,
    run_id: str,
    max_failure_rate: float,
    max_transient: float,
    counts: Mapping[str, int] | None = None,
) -> GateSummary:
    """The run's gate from its sample rows: GROUP BY counts and the hard gates that failed.

    ``counts``: :meth:`Store.gate_counts` of the run, when the caller has just read them."""
    if counts is None:
        counts = store.gate_counts(run_id)
    return gate_summary(
        sum(counts[k] for k in ("passed", "check_failed", "error", "transient")),
        counts["check_failed"],
        counts["error"],
        counts["transient"],
        max_failure_rate,
        max_transient,
        hard_gates_failed=store.hard_gates_failed(run_id),
        hard_gate_failures=counts["hard_gate_failures"],
    )


def finish_session(
    store: Store, run_id: str, end: Ending, sinks: Sequence[RunSink]
) -> SessionResult:
    """Build the scorecard of ``end.runs``, read the gate from the store, close every sink and
    finish the run row."""
    s = end.settings

    def build(results: Iterable[CaseResult]) -> Scorecard:
        return build_scorecard(
            end.suite,
            end.produced,
            results,
            max_failure_rate=s.max_failure_rate,
            max_transient=s.max_transient,
            external_fixtures=end.mark,
        )

    scorecard = build(r.result for r in end.runs)
    gate = end.gate or stored_gate(store, run_id, s.max_failure_rate, s.max_transient)
    told = RunEnd(
        suite=end.suite,
        agent=end.produced.agent,
        scorecard=scorecard,
        runs=end.runs,
        complete=end.full and not end.stopped,
        stopped=end.stopped,
        keys=end.keys,
        build=build,
    )
    try:
        report = merge_reports([sink.close(told) for sink in sinks])
    except BaseException:
        store.finish_run(run_id, scorecard, end.finished_at, None, "interrupted")
        raise
    status: RunStatus = "interrupted" if end.stopped else "finished"
    digest = report.digest or scorecard_sha256(scorecard)
    store.finish_run(run_id, scorecard, end.finished_at, report.reproduced, status, digest)
    return SessionResult(
        suite=end.suite,
        scorecard=scorecard,
        gate=gate,
        run=TasksRun(tuple(end.runs), end.started_at, end.finished_at),
        mode=end.mode,
        run_id=run_id,
        status=status,
        planned=len(end.keys),
        reproduced=report.reproduced,
        fidelity=report.fidelity,
        problems=report.problems,
        recorded_to=report.recorded_to,
        left_alone=report.left_alone,
    )


async def heartbeat_loop(store: Store, run_id: str) -> None:
    """Move the run's heartbeat while it runs, even when one sample takes minutes."""
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        with contextlib.suppress(Exception):
            store.heartbeat(run_id)


YOUNG_THRESHOLD = 10_000
"""Allocations between two young collections while samples run (the interpreter's default is
700): a sample allocates thousands of objects, nearly all freed by reference counting."""


@contextlib.contextmanager
def frozen_heap() -> Generator[None]:
    """Keep the cyclic GC from rescanning what existed before the run (loaded recordings, the
    case file, the modules and their schemas): full collections over those long-lived objects
    cost as much as the replay itself. Objects made during the run are collected as usual,
    their young generation less often (:data:`YOUNG_THRESHOLD`): at the default a collection
    ran every few tool calls, a tenth of a scripted sample's time in all. The thresholds are
    restored after."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
