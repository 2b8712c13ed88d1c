"""A domain run with everything around it: store rows, recording, comparison with the commit."""

from __future__ import annotations

import contextlib
import gc
import json
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentic_eval.backends.base import ModelBackend
from agentic_eval.backends.record import RecordingBackend
from agentic_eval.backends.recordings import (
    SCORECARD_FILE,
    RecordingError,
    agent_dir,
    list_transcripts,
    read_scorecard,
    read_transcript,
    write_atomic,
)
from agentic_eval.backends.replay import ReplayBackend
from agentic_eval.core.canonical import canonical_file_text, canonical_json, first_difference
from agentic_eval.core.scorecard import Scorecard
from agentic_eval.domains.base import CaseSpec, Domain
from agentic_eval.evaluation.gate import build_scorecard, case_result
from agentic_eval.evaluation.persist import sample_row
from agentic_eval.evaluation.runner import (
    BackendMode,
    CaseCallback,
    CaseRun,
    DomainRun,
    RunSettings,
    produced_by,
    run_domain,
)
from agentic_eval.store.db import Store


@dataclass(frozen=True)
class SessionResult:
    """A domain run plus what the harness concluded about it."""

    run: DomainRun
    mode: BackendMode
    run_id: str
    reproduced: bool | None
    """Replay: whether the committed scorecard was reproduced byte for byte."""
    fidelity: tuple[int, int] | None
    """Replay: (cases whose recorded verdict was reproduced exactly, cases)."""
    problem: str
    """Replay: why the scorecard was not reproduced (first differing field), else empty."""
    recorded_to: Path | None


async def run_session(
    domain: Domain[Any],
    cases: Sequence[CaseSpec],
    backend: ModelBackend,
    settings: RunSettings,
    mode: BackendMode,
    *,
    store: Store,
    concurrency: int = 1,
    on_case: CaseCallback | None = None,
    full: bool = True,
) -> SessionResult:
    """Run ``cases``, write run and samples to the store, then record or compare.

    Args:
        domain: The domain.
        cases: The cases to run.
        backend: The backend (a :class:`RecordingBackend` records, a :class:`ReplayBackend`
            compares with the committed scorecard).
        settings: Run settings.
        mode: replay, scripted or live (stored with the run).
        store: Where run and samples go.
        concurrency: Cases in flight.
        on_case: Progress callback.
        full: Whether ``cases`` is the whole case file (a filtered run compares per case and
            leaves other cases' recordings alone).
    """
    produced = produced_by(backend, settings.approval_mode)
    run_id = store.start_run(domain.name, produced, mode, datetime.now(UTC))
    recorder = backend if isinstance(backend, RecordingBackend) else None

    buffer = SampleBuffer(store, run_id)

    def persist(case_run: CaseRun) -> None:
        ref = backend.transcript_ref(domain.name, case_run.result.case_id)
        buffer.add(sample_row(case_run, ref))
        if on_case is not None:
            on_case(case_run)

    try:
        with _frozen_heap():
            result = await run_domain(
                domain, cases, backend, settings, concurrency=concurrency, on_case=persist
            )
    finally:
        buffer.flush()
    reproduced: bool | None = None
    fidelity: tuple[int, int] | None = None
    problem = ""
    recorded_to: Path | None = None
    if isinstance(backend, ReplayBackend):
        fidelity = (sum(1 for c in result.cases if c.reproduced), len(result.cases))
        reproduced, problem = _compare(backend.directory, result.scorecard, full)
    if recorder is not None:
        recorded_to = _write_scorecard(recorder.root, domain, result, settings, cases, full)
    store.finish_run(run_id, result.scorecard, result.finished_at, reproduced)
    return SessionResult(result, mode, run_id, reproduced, fidelity, problem, recorded_to)


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


class SampleBuffer:
    """Writes sample rows in small batches: at most ``max_rows`` rows or ``max_age`` seconds old.

    A row per transaction costs more than a whole replayed case; batching keeps the store off the
    hot path while a crash loses at most the last fraction of a second (and the caller flushes in
    ``finally``, so an exception or Ctrl-C loses nothing).
    """

    def __init__(self, store: Store, run_id: str, max_rows: int = 200, max_age: float = 0.5):
        self.store, self.run_id = store, run_id
        self.max_rows, self.max_age = max_rows, max_age
        self.rows: list[dict[str, Any]] = []
        self.since = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        """Queue a row; flush when the batch is full or old."""
        self.rows.append(row)
        if len(self.rows) >= self.max_rows or time.monotonic() - self.since >= self.max_age:
            self.flush()

    def flush(self) -> None:
        """Write the queued rows."""
        if self.rows:
            self.store.add_samples(self.run_id, self.rows)
            self.rows = []
        self.since = time.monotonic()


def _compare(directory: Path, scorecard: Scorecard, full: bool) -> tuple[bool, str]:
    path_ = directory / SCORECARD_FILE
    if full:
        # canonical_file_text is a pure function of the data, so equal canonical data means equal
        # bytes; comparing the compact forms keeps this at C speed for large batches.
        try:
            committed_data = json.loads(path_.read_bytes())
        except FileNotFoundError:
            return False, f"no committed scorecard at {path_}"
        except ValueError as exc:
            return False, f"{path_}: not JSON ({exc})"
        if canonical_json(committed_data) == canonical_json(scorecard):
            return True, ""
    try:
        committed = read_scorecard(path_)
    except RecordingError as exc:
        return False, str(exc)
    if full:
        path = first_difference(committed, scorecard)
        return False, f"scorecard differs from {directory / SCORECARD_FILE} at {path}"
    by_id = {c.case_id: c for c in committed.cases}
    for case in scorecard.cases:
        path = first_difference(by_id.get(case.case_id), case)
        if path is not None:
            return False, f"case {case.case_id} differs from the committed scorecard at {path}"
    return True, ""


def _write_scorecard(
    root: Path,
    domain: Domain[Any],
    result: DomainRun,
    settings: RunSettings,
    cases: Sequence[CaseSpec],
    full: bool,
) -> Path:
    """Write the agent folder's scorecard from every transcript in it; drop stale ones."""
    directory = agent_dir(root, domain.name, result.scorecard.produced_by.agent)
    wanted = {c.id for c in cases}
    if full:
        for path in list_transcripts(directory):
            if path.stem not in wanted:
                path.unlink()
    results = [case_result(read_transcript(p)) for p in list_transcripts(directory)]
    scorecard = build_scorecard(
        domain.name,
        result.scorecard.produced_by,
        results,
        max_failure_rate=settings.max_failure_rate,
        max_transient=settings.max_transient,
    )
    path = directory / SCORECARD_FILE
    write_atomic(path, canonical_file_text(scorecard))
    return path
