"""The history folder: ``<root>/<suite>/<UTC timestamp>_<run id>.json`` plus ``baseline.json``.

The root is ``$AGENTIC_EVAL_HISTORY_DIR``, default ``evals/history`` (reviewable in git). Files
are written atomically as canonical JSON. Reading treats them as untrusted input: a file that is
unreadable, truncated, not JSON, of an unknown format version, invalid, or whose content does not
match its name is a :class:`HistoryError` naming it, never skipped.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.history.entry import SAFE_NAME, HistoryEntry
from agentic_eval.recordings.files import RecordingError, read_bounded, write_atomic

HISTORY_DIR_ENV = "AGENTIC_EVAL_HISTORY_DIR"
DEFAULT_HISTORY_DIR = Path("evals") / "history"
BASELINE_FILE = "baseline.json"
_ENTRY_NAME = re.compile(r"^(\d{8}T\d{6}\.\d{6}Z)_(.+)\.json$")
_STAMP = "%Y%m%dT%H%M%S.%fZ"

M = TypeVar("M", bound=BaseModel)


class HistoryError(Exception):
    """A history file is unreadable or invalid, or a run cannot be found (one line)."""


@dataclass(frozen=True)
class StoredEntry:
    """An entry and the file it was read from."""

    path: Path
    entry: HistoryEntry


def history_dir() -> Path:
    """``$AGENTIC_EVAL_HISTORY_DIR``, default ``evals/history`` (relative to the working dir)."""
    value = os.environ.get(HISTORY_DIR_ENV, "").strip()
    return Path(value) if value else DEFAULT_HISTORY_DIR


def entry_name(entry: HistoryEntry) -> str:
    """``<UTC start, to the microsecond>_<run id>.json``: names sort in time order."""
    return f"{entry.started_at.strftime(_STAMP)}_{entry.run_id}.json"


def suite_dir(suite: str, root: Path | None = None) -> Path:
    """The folder of one suite's history.

    Raises:
        HistoryError: When ``suite`` cannot name a folder.
    """
    if not SAFE_NAME.match(suite):
        raise HistoryError(f"{suite!r} is not a suite name")
    return (root or history_dir()) / suite


def write_entry(entry: HistoryEntry, root: Path | None = None) -> Path:
    """Write ``entry`` atomically as canonical JSON; returns its path.

    Raises:
        HistoryError: When the file cannot be written.
    """
    path = suite_dir(entry.suite, root) / entry_name(entry)
    try:
        write_atomic(path, canonical_file_text(entry))
    except OSError as exc:
        raise HistoryError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def read_model(model: type[M], path: Path, what: str) -> M:
    """Read and validate a versioned history file.

    Raises:
        HistoryError: Naming the file: unreadable, not JSON (truncated), unknown version, invalid.
    """
    try:
        raw = read_bounded(path)
    except RecordingError as exc:
        raise HistoryError(str(exc).replace("no recording at", "no such file:")) from None
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise HistoryError(
            f"{path}: not a valid {what}: truncated or not JSON ({detail})"
        ) from None
    mapping: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    version = mapping.get("schema_version")
    expected = model.model_fields["schema_version"].default
    if version != expected:
        raise HistoryError(
            f"{path}: {what} format version {version!r} is not the supported {expected} "
            "(written by another version of agentic-eval?)"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise HistoryError(f"{path}: invalid {what} at {loc}: {err['msg']}") from None
    except RecursionError:
        raise HistoryError(f"{path}: invalid {what}: nested too deeply") from None


def read_entry(path: Path) -> HistoryEntry:
    """Read one history entry (any file name).

    Raises:
        HistoryError: Naming the file.
    """
    return read_model(HistoryEntry, path, "history entry")


def _check_name(path: Path, entry: HistoryEntry, suite: str) -> None:
    if entry.suite != suite:
        raise HistoryError(f"{path}: holds a run of {entry.suite!r}, not of {suite!r}")
    if path.name != entry_name(entry):
        raise HistoryError(
            f"{path}: its name does not match its content (expected {entry_name(entry)})"
        )


def load_history(suite: str, root: Path | None = None) -> list[StoredEntry]:
    """Every entry of a suite, oldest first (by start time, then run id).

    Raises:
        HistoryError: For any file that cannot be read, is invalid, or is misnamed; for a run
            recorded twice.
    """
    folder = suite_dir(suite, root)
    if not folder.is_dir():
        return []
    found: list[StoredEntry] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.suffix != ".json" or path.name == BASELINE_FILE:
            continue
        if not _ENTRY_NAME.match(path.name):
            raise HistoryError(
                f"{path}: not a history entry name (<UTC timestamp>_<run id>.json); "
                "move it out of the history folder"
            )
        entry = read_entry(path)
        _check_name(path, entry, suite)
        found.append(StoredEntry(path, entry))
    found.sort(key=lambda s: (s.entry.started_at, s.entry.run_id))
    seen: dict[str, Path] = {}
    for s in found:
        if s.entry.run_id in seen:
            raise HistoryError(f"{s.path}: run {s.entry.run_id} is also in {seen[s.entry.run_id]}")
        seen[s.entry.run_id] = s.path
    return found


def history_suites(root: Path | None = None) -> list[str]:
    """Suites with a history folder, sorted."""
    base = root or history_dir()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and SAFE_NAME.match(p.name))
