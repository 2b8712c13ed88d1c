"""Baselines: the known-good run of each series, in ``<history>/<suite>/baselines/``.

A series is a suite's runs by one agent, in one approval mode, produced the same way
(:func:`agentic_eval.history.entry.series_key`), so each agent is compared with its own
known-good run. A marker names the run and its entry file; it is small, canonical JSON,
reviewable in git. ``report --base baseline`` diffs each series against its marker; a series
without one is reported as such. The suite-wide ``<suite>/baseline.json`` of earlier versions is
still read, as the baseline of its run's series.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.core.messages import Frozen
from agentic_eval.history.entry import SeriesKey, series_key
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

BASELINE_SCHEMA_VERSION = 2
"""2 names the series (agent, approval mode, producer kind); 1 was one marker per suite."""
BASELINES_FOLDER = "baselines"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class Baseline(Frozen):
    """The marker of a series' known-good run."""

    schema_version: Literal[1, 2] = Field(default=BASELINE_SCHEMA_VERSION, description="Format.")
    suite: str = Field(description="Suite name.")
    run_id: str = Field(description="The known-good run.")
    file: str = Field(description="Its entry file's name, in the suite's history folder.")
    promoted_at: datetime = Field(description="When it was promoted (UTC).")
    agent: str | None = Field(default=None, description="The series' agent (format 2).")
    approval_mode: str | None = Field(default=None, description="Its approval mode (format 2).")
    producer_kind: str | None = Field(default=None, description="scripted, model or replay.")

    @field_validator("promoted_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("timestamps must carry a time zone (UTC)")
        return value.astimezone(UTC)


def _part(text: str) -> str:
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", text)


def baseline_path(key: SeriesKey, root: Path | None = None) -> Path:
    """Where a series' baseline marker lives: ``<suite>/baselines/<agent>.<mode>.<kind>.json``
    (characters other than letters, digits, ``_.-`` written as ``%XX``)."""
    suite, agent, mode, kind = key
    name = ".".join(_part(p) for p in (agent, mode, kind)) + ".json"
    return suite_dir(suite, root) / BASELINES_FOLDER / name.lstrip(".")


def legacy_path(suite: str, root: Path | None = None) -> Path:
    """The suite-wide marker of format 1."""
    return suite_dir(suite, root) / BASELINE_FILE


def _find(marker: Baseline, path: Path, history: list[StoredEntry]) -> StoredEntry:
    for s in history:
        if s.entry.run_id == marker.run_id:
            if s.path.name != marker.file:
                raise HistoryError(
                    f"{path}: names run {marker.run_id} but the file {marker.file!r}, while that "
                    f"run is in {s.path.name!r}: the marker was edited"
                )
            return s
    raise HistoryError(
        f"{path}: baseline run {marker.run_id} ({marker.file}) is not in the history any more"
    )


def read_baselines(
    suite: str, history: list[StoredEntry], root: Path | None = None
) -> dict[SeriesKey, StoredEntry]:
    """Each series' baseline entry (a series without a marker is absent).

    Raises:
        HistoryError: When a marker is unreadable or invalid, names another suite or series, or
            names a run the history no longer holds.
    """
    found: dict[SeriesKey, StoredEntry] = {}
    legacy = legacy_path(suite, root)
    if legacy.exists():
        marker = read_model(Baseline, legacy, "baseline")
        if marker.suite != suite:
            raise HistoryError(f"{legacy}: names suite {marker.suite!r}, not {suite!r}")
        stored = _find(marker, legacy, history)
        found[series_key(stored.entry)] = stored
    folder = suite_dir(suite, root) / BASELINES_FOLDER
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.name.startswith(".") or path.suffix != ".json":
                continue
            marker = read_model(Baseline, path, "baseline")
            if marker.suite != suite:
                raise HistoryError(f"{path}: names suite {marker.suite!r}, not {suite!r}")
            stored = _find(marker, path, history)
            key = series_key(stored.entry)
            if baseline_path(key, root).name != path.name:
                raise HistoryError(
                    f"{path}: its run {marker.run_id} is of series {key[1:]}, which is filed as "
                    f"{baseline_path(key, root).name}: the marker was moved or edited"
                )
            found[key] = stored  # a series' own marker wins over the suite-wide one
    return found


def baseline_ids(suite: str, history: list[StoredEntry], root: Path | None = None) -> set[str]:
    """The run ids that are some series' baseline (for marking them in listings)."""
    return {s.entry.run_id for s in read_baselines(suite, history, root).values()}


def promote(
    stored: StoredEntry, root: Path | None = None, now: datetime | None = None
) -> tuple[Path, Baseline]:
    """Mark a run of the history as its series' known-good run.

    Raises:
        HistoryError: When the run is not in the suite's history folder under ``root``.
    """
    e = stored.entry
    history = load_history(e.suite, root)
    if e.run_id not in {s.entry.run_id for s in history}:
        where = suite_dir(e.suite, root)
        raise HistoryError(
            f"run {e.run_id} is not in the history under {where}; promote a run from it"
        )
    _, agent, mode, kind = key = series_key(e)
    marker = Baseline(
        suite=e.suite,
        run_id=e.run_id,
        file=entry_name(e),
        promoted_at=now or datetime.now(UTC),
        agent=agent,
        approval_mode=mode,
        producer_kind=kind,
    )
    path = baseline_path(key, root)
    try:
        write_atomic(path, canonical_file_text(marker))
    except OSError as exc:
        raise HistoryError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path, marker
