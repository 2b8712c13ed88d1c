"""Baselines: the known-good run of a suite, in ``<history>/<suite>/baseline.json``.

The marker names the run and its entry file; it is small, canonical JSON, reviewable in git.
``report --base baseline`` diffs against it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.core.messages import Frozen
from agentic_eval.history.files import (
    BASELINE_FILE,
    HistoryError,
    StoredEntry,
    entry_name,
    load_history,
    read_model,
    suite_dir,
)
from agentic_eval.recordings.files import write_atomic

BASELINE_SCHEMA_VERSION = 1


class Baseline(Frozen):
    """The marker of a suite's known-good run."""

    schema_version: Literal[1] = Field(default=BASELINE_SCHEMA_VERSION, description="Format.")
    suite: str = Field(description="Suite name.")
    run_id: str = Field(description="The known-good run.")
    file: str = Field(description="Its entry file's name, in the suite's history folder.")
    promoted_at: datetime = Field(description="When it was promoted (UTC).")

    @field_validator("promoted_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("timestamps must carry a time zone (UTC)")
        return value.astimezone(UTC)


def baseline_path(suite: str, root: Path | None = None) -> Path:
    """Where a suite's baseline marker lives."""
    return suite_dir(suite, root) / BASELINE_FILE


def read_baseline(suite: str, root: Path | None = None) -> Baseline | None:
    """The suite's baseline marker, or None when none was promoted.

    Raises:
        HistoryError: When the marker is unreadable or invalid, naming it.
    """
    path = baseline_path(suite, root)
    if not path.exists():
        return None
    marker = read_model(Baseline, path, "baseline")
    if marker.suite != suite:
        raise HistoryError(f"{path}: names suite {marker.suite!r}, not {suite!r}")
    return marker


def promote(
    stored: StoredEntry, root: Path | None = None, now: datetime | None = None
) -> tuple[Path, Baseline]:
    """Mark a run of the history as its suite's known-good run.

    Raises:
        HistoryError: When the run is not in the suite's history folder under ``root``.
    """
    e = stored.entry
    in_history = {s.entry.run_id for s in load_history(e.suite, root)}
    if e.run_id not in in_history:
        where = suite_dir(e.suite, root)
        raise HistoryError(
            f"run {e.run_id} is not in the history under {where}; promote a run from it"
        )
    marker = Baseline(
        suite=e.suite, run_id=e.run_id, file=entry_name(e), promoted_at=now or datetime.now(UTC)
    )
    path = baseline_path(e.suite, root)
    try:
        write_atomic(path, canonical_file_text(marker))
    except OSError as exc:
        raise HistoryError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path, marker


def baseline_entry(suite: str, history: list[StoredEntry], root: Path | None = None) -> StoredEntry:
    """The entry the suite's baseline names.

    Raises:
        HistoryError: When no baseline was promoted, or its run is no longer in the history.
    """
    marker = read_baseline(suite, root)
    if marker is None:
        raise HistoryError(
            f"{suite}: no baseline promoted (agentic-eval baseline promote RUN); "
            f"looked for {baseline_path(suite, root)}"
        )
    for s in history:
        if s.entry.run_id == marker.run_id:
            if s.path.name != marker.file:
                raise HistoryError(
                    f"{baseline_path(suite, root)}: names run {marker.run_id} but the file "
                    f"{marker.file!r}, while that run is in {s.path.name!r}: the marker was edited"
                )
            return s
    raise HistoryError(
        f"{baseline_path(suite, root)}: baseline run {marker.run_id} ({marker.file}) is not in "
        "the history any more"
    )
