"""Read what an export needs from the store: the run, its samples with their transcripts, and
its gate, read from the sample rows as the batch gate is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.core.scorecard import GateSummary
from agentic_eval.core.settings import RunParameters
from agentic_eval.core.transcript import Transcript
from agentic_eval.evaluation.session import stored_gate
from agentic_eval.recordings.files import RecordingError, read_transcript
from agentic_eval.store.db import Store, database_url
from agentic_eval.store.models import EvalRun, EvalSample


class ExportError(Exception):
    """The run cannot be exported (no such run, a transcript missing or changed)."""


class UnknownRunError(ExportError):
    """No run with that id (or no run at all) in the store: a usage error."""


@dataclass(frozen=True)
class StoredSample:
    """One sample row of the run with its transcript and its results as stored."""

    row: EvalSample
    transcript: Transcript
    outcome: Outcome
    checks: tuple[CheckResult, ...]
    source: str
    """Where the transcript came from: its recording file, or ``store``."""


@dataclass(frozen=True)
class StoredRun:
    """A run as the store holds it, ready to be written in another tool's format."""

    run: EvalRun
    parameters: RunParameters
    samples: tuple[StoredSample, ...]
    gate: GateSummary


def utc(moment: datetime | None) -> datetime | None:
    """The moment as an aware UTC datetime (SQLite hands back naive UTC ones)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def open_store() -> Store:
    """The configured store; a SQLite store that does not exist yet is never created just to
    be read.

    Raises:
        UnknownRunError: The SQLite file does not exist: nothing has run here.
        StoreError: The database cannot be opened.
    """
    url = database_url()
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if not path.is_file():
            raise UnknownRunError(f"the store holds no run yet ({path} does not exist)")
    return Store(url)


def pick_run(store: Store, run_id: str | None) -> EvalRun:
    """The run ``run_id``, or the latest run of the store when it is None.

    Raises:
        UnknownRunError: No such run, or the store holds no run.
    """
    if run_id is None:
        latest = store.runs(limit=1)
        if not latest:
            raise UnknownRunError("the store holds no run yet (run one with `agentic-eval run`)")
        return latest[0]
    store.migrate()
    run = store.run(run_id)
    if run is None:
        raise UnknownRunError(f"no run {run_id!r} in the store")
    return run


def _transcript(row: EvalSample, base: Path) -> tuple[Transcript, str]:
    where = f"sample {row.case_id}@{row.sample} of run {row.run_id}"
    if row.transcript is not None:
        try:
            return Transcript.model_validate_json(row.transcript), "store"
        except ValidationError as exc:
            raise ExportError(
                f"{where}: the stored transcript is invalid: {exc.errors()[0]['msg']}"
            ) from None
    if row.transcript_ref is None:
        raise ExportError(f"{where}: the store holds no transcript of it and names no file")
    path = Path(row.transcript_ref)
    path = path if path.is_absolute() else base / path
    try:
        t = read_transcript(path)
    except RecordingError as exc:
        raise ExportError(
            f"{where}: {exc} (a relative recording path is read from the directory the run "
            "was made in: run the export there)"
        ) from None
    if (t.case_id, t.sample, t.attempt) != (row.case_id, row.sample, row.attempt) or (
        t.verdict.outcome.kind != row.outcome
    ):
        raise ExportError(
            f"{where}: the recording {path} has changed since the run (it ends "
            f"{t.verdict.outcome.kind}, the run stored {row.outcome})"
        )
    return t, path.as_posix()


def load_run(store: Store, run: EvalRun, base: Path | None = None) -> StoredRun:
    """The run with every sample's transcript (from the row, or from the recording it names,
    relative paths read from ``base``, default the working directory) and its gate.

    Raises:
        ExportError: A transcript is missing, unreadable, or no longer the one the run used.
    """
    base = Path.cwd() if base is None else base
    try:
        parameters = RunParameters.model_validate(
            {k: v for k, v in (run.settings or {}).items() if k != "model"}
        )
    except ValidationError as exc:
        raise ExportError(f"run {run.id}: its stored settings are invalid: {exc}") from None
    samples: list[StoredSample] = []
    for row in store.samples(run.id):
        transcript, source = _transcript(row, base)
        outcome = Outcome(
            kind=row.outcome,  # pyright: ignore[reportArgumentType]
            reason=row.failure_reason,
            where=row.failure_where,
        )
        checks = tuple(CheckResult.model_validate(c) for c in row.checks)
        samples.append(StoredSample(row, transcript, outcome, checks, source))
    gate = stored_gate(store, run.id, parameters.max_failure_rate, parameters.max_transient)
    return StoredRun(run, parameters, tuple(samples), gate)
