"""A run with everything around it: store rows, heartbeat, recording, comparison with the commit.

Takes task specs, not a domain: a domain's cases, a workflow scenario or a corpus job all arrive
the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agentic_eval.backends.base import ModelBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.core.scorecard import GateSummary, Scorecard
from agentic_eval.evaluation.gate import build_scorecard, case_result, gate_summary
from agentic_eval.evaluation.persist import SampleBuffer, sample_row
from agentic_eval.evaluation.runner import CaseCallback, CaseRun, TasksRun, produced_by, run_tasks
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.compare import (
    compare_scorecard_hashed,
    rewrite_scorecard,
    scorecard_sha256,
)
from agentic_eval.recordings.layout import agent_dir
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
    buffer = SampleBuffer(store, run_id)

    def persist(case_run: CaseRun) -> None:
        r = case_run.result
        ref = backend.transcript_ref(suite, r.case_id, r.sample)
        buffer.add(sample_row(case_run, ref, worker))
        if on_case is not None:
            on_case(case_run)

    beat = asyncio.create_task(heartbeat_loop(store, run_id))
    try:
        with _frozen_heap():
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
        buffer.flush()
        store.finish_run(run_id, None, datetime.now(UTC), None, "interrupted")
        raise
    beat.cancel()
    buffer.flush()
    stopped = len(result.cases) < len(specs)
    mark = next((s.external_fixtures for s in specs if s.external_fixtures), None)
    scorecard = build_scorecard(
        suite,
        produced,
        (r.result for r in result.cases),
        max_failure_rate=settings.max_failure_rate,
        max_transient=settings.max_transient,
        external_fixtures=mark,
    )
    counts = store.gate_counts(run_id)
    gate = gate_summary(
        sum(counts[k] for k in ("passed", "check_failed", "error", "transient")),
        counts["check_failed"],
        counts["error"],
        counts["transient"],
        settings.max_failure_rate,
        settings.max_transient,
        hard_gates_failed=scorecard.gate.hard_gates_failed,
        hard_gate_failures=counts["hard_gate_failures"],
    )
    reproduced: bool | None = None
    fidelity: tuple[int, int] | None = None
    problems: list[str] = []
    recorded_to: Path | None = None
    left_alone: list[Path] = []
    digest: str | None = None
    if isinstance(backend, ReplayBackend):
        fidelity = (sum(1 for c in result.cases if c.reproduced), len(result.cases))
        problems = [c.problem for c in result.cases if not c.reproduced and c.problem]
        same, problem, digest = compare_scorecard_hashed(
            backend.directory, scorecard, full and not stopped
        )
        if not same:
            problems.append(problem)
        reproduced = same and fidelity[0] == fidelity[1] and not stopped
    if isinstance(backend, RecordingBackend) and not stopped:
        directory = agent_dir(backend.root, suite, produced.agent)
        keys = {(s.case_id, s.sample) for s in specs} if full else None

        def build(results: Any) -> Scorecard:
            return build_scorecard(
                suite,
                produced,
                results,
                max_failure_rate=settings.max_failure_rate,
                max_transient=settings.max_transient,
                external_fixtures=mark,
            )

        try:
            recorded_to, foreign = rewrite_scorecard(
                directory, suite, produced.agent, keys, build, case_result
            )
        except BaseException:
            store.finish_run(run_id, scorecard, result.finished_at, None, "interrupted")
            raise
        left_alone = foreign
    status: RunStatus = "interrupted" if stopped else "finished"
    if digest is None:
        digest = scorecard_sha256(scorecard)
    store.finish_run(run_id, scorecard, result.finished_at, reproduced, status, digest)
    return SessionResult(
        suite=suite,
        scorecard=scorecard,
        gate=gate,
        run=result,
        mode=mode,
        run_id=run_id,
        status=status,
        planned=len(specs),
        reproduced=reproduced,
        fidelity=fidelity,
        problems=tuple(problems),
        recorded_to=recorded_to,
        left_alone=tuple(left_alone),
    )


async def heartbeat_loop(store: Store, run_id: str) -> None:
    """Move the run's heartbeat while it runs, even when one sample takes minutes."""
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        with contextlib.suppress(Exception):
            store.heartbeat(run_id)


@contextlib.contextmanager
def _frozen_heap() -> Generator[None]:
    """Keep the cyclic GC from rescanning what existed before the run (loaded recordings, the
    case file): full collections over those long-lived objects cost as much as the replay itself.
    Objects made during the run are collected as usual."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
