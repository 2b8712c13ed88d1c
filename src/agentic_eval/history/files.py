"""The history folder: ``<root>/<suite>/<UTC timestamp>_<run id>.json`` plus ``baseline.json``.

The root is ``$AGENTIC_EVAL_HISTORY_DIR``, default ``history`` in the tool's own folder beside the
store that recorded the runs (``.agentic-eval/history``, ignored by git); a team that reviews its
history in git points the variable at a folder of the repository (``evals/history``). Files
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
from typing import Any, TypeVar, get_args

import orjson
from pydantic import BaseModel, ValidationError

from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.history.consistency import inconsistency
from agentic_eval.history.entry import (
    SAFE_NAME,
    HistoryEntry,
    SeriesKey,
    entry_digest,
    series_key,
)
from agentic_eval.recordings.files import RecordingError, read_bounded, write_atomic
from agentic_eval.store.home import home_dir, make_home

HISTORY_DIR_ENV = "AGENTIC_EVAL_HISTORY_DIR"
HISTORY_FOLDER = "history"
"""The history folder inside ``$AGENTIC_EVAL_HOME``, unless ``$AGENTIC_EVAL_HISTORY_DIR`` is set."""
BASELINE_FILE = "baseline.json"
_ENTRY_NAME = re.compile(r"^(\d{8}T\d{6}\.\d{6}Z)_(.+)\.json$")
_STAMP = "%Y%m%dT%H%M%S.%fZ"

M = TypeVar("M", bound=BaseModel)


class HistoryError(Exception):
    """A history file is unreadable or invalid, or a run cannot be found (one line)."""


@dataclass(frozen=True)
class StoredEntry:
    """An entry and the file it was read from (or written to), with that file's sha256."""

    path: Path
    entry: HistoryEntry
    sha256: str = ""


def history_dir() -> Path:
    """``$AGENTIC_EVAL_HISTORY_DIR``, default ``$AGENTIC_EVAL_HOME/history`` (``.agentic-eval/
    history`` in the working directory)."""
    value = os.environ.get(HISTORY_DIR_ENV, "").strip()
    return Path(value) if value else home_dir() / HISTORY_FOLDER


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


def append_entry(entry: HistoryEntry, root: Path | None = None) -> StoredEntry:
    """Chain ``entry`` to the newest entry of its series (``previous_sha256``) and write it
    atomically as canonical JSON.

    Entries of the suite that cannot be read are not chained to (and are reported when the
    history is read). A format-1 entry is written as given.

    Raises:
        HistoryError: When the file cannot be written.
    """
    folder = suite_dir(entry.suite, root)
    if entry.schema_version >= 2:
        tip = _series_tip(folder, series_key(entry))
        entry = entry.model_copy(update={"previous_sha256": tip})
    path = folder / entry_name(entry)
    text = canonical_file_text(entry)
    try:
        if folder.parent == home_dir() / HISTORY_FOLDER:  # the tool's own folder: ignored by git
            make_home(home_dir())
        write_atomic(path, text)
    except OSError as exc:
        raise HistoryError(f"cannot write {path}: {exc.strerror or exc}") from None
    return StoredEntry(path, entry, entry_digest(text))


def write_entry(entry: HistoryEntry, root: Path | None = None) -> Path:
    """:func:`append_entry`, returning the path written."""
    return append_entry(entry, root).path


def _series_tip(folder: Path, key: SeriesKey) -> str | None:
    """The digest of the end of the series' chain: its entry that no other entry follows (the
    one finished last, if a concurrent write forked the chain).

    Every entry file of the suite is read, but only parsed as JSON (the fields that place it in
    its series), not validated: this runs on every write. Unreadable files are passed over;
    reading the history reports them."""
    if not folder.is_dir():
        return None
    members: list[tuple[str, str, str | None]] = []  # (finished_at, digest, previous)
    for path in folder.iterdir():
        if not _ENTRY_NAME.match(path.name):
            continue
        try:
            raw = read_bounded(path)
            data = orjson.loads(raw)
            card = data["scorecard"]["produced_by"]
            found = (data["suite"], card["agent"], card["approval_mode"], data["producer"]["kind"])
            if found == key and data.get("schema_version", 1) >= 2:
                members.append(
                    (str(data["finished_at"]), entry_digest(raw), data.get("previous_sha256"))
                )
            elif found == key:
                members.append((str(data["finished_at"]), entry_digest(raw), None))
        except (RecordingError, orjson.JSONDecodeError, KeyError, TypeError):
            continue
    followed = {previous for _, _, previous in members}
    tips = [m for m in members if m[1] not in followed] or members
    return max(tips)[1] if tips else None


def read_model(model: type[M], path: Path, what: str) -> M:
    """Read and validate a versioned history file.

    Raises:
        HistoryError: Naming the file: unreadable, not JSON (truncated), unknown version, invalid.
    """
    return _read_model(model, path, what)[0]


def _read_model(model: type[M], path: Path, what: str) -> tuple[M, bytes]:
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
    supported = get_args(model.model_fields["schema_version"].annotation)
    if version not in supported or isinstance(version, bool):
        shown = " or ".join(str(v) for v in supported)
        raise HistoryError(
            f"{path}: {what} format version {version!r} is not the supported {shown} "
            "(written by another version of agentic-eval?)"
        )
    bad = _unencodable(data)
    if bad is not None:
        raise HistoryError(
            f"{path}: invalid {what} at {bad}: holds a lone surrogate (\\u escape of half a "
            "character), which no file or terminal can hold"
        )
    try:
        return model.model_validate(data), raw
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise HistoryError(f"{path}: invalid {what} at {loc}: {err['msg']}") from None
    except RecursionError:
        raise HistoryError(f"{path}: invalid {what}: nested too deeply") from None


def _unencodable(data: Any) -> str | None:
    """The path of the first string (key or value) that is not valid Unicode text."""
    try:
        orjson.dumps(data)
        return None
    except (orjson.JSONEncodeError, TypeError):
        pass
    stack: list[tuple[str, Any]] = [("<root>", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where
        elif isinstance(value, dict):
            mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
            for k, v in mapping.items():
                key = str(k)
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    return f"{where} (a key)"
                stack.append((key if where == "<root>" else f"{where}.{key}", v))
        elif isinstance(value, list):
            items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(items))
    return None


def _read_stored(path: Path) -> StoredEntry:
    entry, raw = _read_model(HistoryEntry, path, "history entry")
    problem = inconsistency(entry)
    if problem is not None:
        raise HistoryError(f"{path}: refused: the entry disagrees with itself: {problem}")
    return StoredEntry(path, entry, entry_digest(raw))


def read_entry(path: Path) -> HistoryEntry:
    """Read one history entry (any file name), refusing one that disagrees with itself
    (:func:`agentic_eval.history.consistency.inconsistency`).

    Raises:
        HistoryError: Naming the file (and the field, for an inconsistent entry).
    """
    return _read_stored(path).entry


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
        stored = _read_stored(path)
        _check_name(path, stored.entry, suite)
        found.append(stored)
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
