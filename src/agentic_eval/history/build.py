"""Turn a finished session into a history entry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.domains.base import CaseFileError, Domain
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.evaluation.session import SessionResult
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.history.entry import (
    HistoryEntry,
    Producer,
    ProducerKind,
    RecordingRef,
    ReplayResult,
    RunConfig,
    SampleFacts,
)
from agentic_eval.history.files import StoredEntry, append_entry
from agentic_eval.history.fingerprints import fingerprints, recording_ref
from agentic_eval.recordings.layout import LabelError, agent_dir
from agentic_eval.tasks.spec import TaskSpec


def _recording(result: SessionResult, spec: BackendSpec | None) -> RecordingRef | None:
    """The recording a replay served, or the one a recorded run wrote."""
    if result.recorded_to is not None:
        return recording_ref(result.recorded_to.parent)
    if spec is None or spec.recordings is None or not (spec.kind == "replay" or spec.record):
        return None
    label = spec.agent if spec.kind == "replay" else result.scorecard.produced_by.agent
    try:
        return recording_ref(agent_dir(Path(spec.recordings), result.suite, label))
    except LabelError:
        return None


def _complete(domain: Domain[Any] | None, specs: Sequence[TaskSpec[Any]]) -> bool:
    if domain is None:
        return False
    try:
        every = {c.id for c in domain.load_cases()}
    except (CaseFileError, FixtureError):
        return False
    return every == {s.case.id for s in specs}


def entry_from_session(
    result: SessionResult,
    domain: Domain[Any] | None,
    specs: Sequence[TaskSpec[Any]],
    settings: RunSettings,
    backend_spec: BackendSpec | None = None,
    *,
    repository: Path | None = None,
) -> HistoryEntry:
    """The history entry of a finished (or interrupted) session.

    Args:
        result: What ``run_session`` returned.
        domain: The domain the specs came from (None for suites that are not domains: then no
            fixtures hash).
        specs: The specs the session was given.
        settings: The settings the session ran with.
        backend_spec: The backend spec the session was given (names the recording a replay
            served, the provider of a live run).
        repository: Where to read the git commit from (default: the working directory).
    """
    produced = result.scorecard.produced_by
    kind: ProducerKind
    if result.mode == "replay":
        kind = "replay"
    else:
        kind = "scripted" if produced.agent_kind == "scripted" else "model"
    live = backend_spec is not None and backend_spec.kind == "live"
    producer = Producer(
        kind=kind,
        agent=produced.agent,
        agent_kind=produced.agent_kind,
        backend=produced.backend,
        model=produced.model,
        provider=backend_spec.provider if live and backend_spec else None,
        base_url=backend_spec.base_url if live and backend_spec else None,
        recording=_recording(result, backend_spec),
    )
    replay = None
    if result.fidelity is not None:
        replay = ReplayResult(
            reproduced=bool(result.reproduced),
            samples_reproduced=result.fidelity[0],
            samples=result.fidelity[1],
            problems=result.problems,
        )
    facts = tuple(
        SampleFacts(
            case_id=r.result.case_id,
            sample=r.result.sample,
            seconds=round(r.duration_ms / 1000, 6),
            reproduced=r.reproduced,
            problem=r.problem
            or (
                f"{r.result.outcome.kind}: {r.result.outcome.reason}"
                if r.reproduced is False
                else ""
            ),
            detail=r.detail,
        )
        for r in result.run.cases
    )
    return HistoryEntry(
        sample_facts=facts,
        run_id=result.run_id,
        suite=result.suite,
        started_at=result.run.started_at,
        finished_at=result.run.finished_at,
        status=result.status,
        producer=producer,
        config=RunConfig(
            mode=result.mode,
            model=settings.model,
            parameters=settings.parameters(),
            backend=backend_spec,
            planned_samples=result.planned,
            complete=_complete(domain, specs),
        ),
        fingerprints=fingerprints(specs, domain, start=repository),
        scorecard=result.scorecard,
        gate=result.gate,
        replay=replay,
    )


def record_session(
    result: SessionResult,
    domain: Domain[Any] | None,
    specs: Sequence[TaskSpec[Any]],
    settings: RunSettings,
    backend_spec: BackendSpec | None = None,
    *,
    root: Path | None = None,
) -> StoredEntry:
    """Build the session's history entry and write it under ``root`` (default: the history
    folder, ``$AGENTIC_EVAL_HISTORY_DIR``).

    Raises:
        HistoryError: When the entry cannot be written.
    """
    entry = entry_from_session(result, domain, specs, settings, backend_spec)
    return append_entry(entry, root)
