"""Find a run by what a user types: a run id (or a unique prefix of one) or an entry file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agentic_eval.history.files import (
    HistoryError,
    StoredEntry,
    history_dir,
    history_suites,
    load_history,
    read_entry,
)
from agentic_eval.history.series import BASELINE_REF

MIN_PREFIX = 4


def looks_like_file(ref: str) -> bool:
    """Whether ``ref`` names a file rather than a run id."""
    return ref.endswith(".json") or "/" in ref or "\\" in ref


def find_run(
    ref: str, suites: Iterable[str] | None = None, root: Path | None = None
) -> StoredEntry:
    """The run ``ref`` names.

    Args:
        ref: An entry file's path, a run id, or a unique prefix of one (at least 4 characters).
        suites: Where to look for run ids (default: every suite with a history).
        root: The history root (default: :func:`history_dir`).

    Raises:
        HistoryError: When the file is unreadable, or no run or several runs match.
    """
    if looks_like_file(ref):
        path = Path(ref)
        return StoredEntry(path, read_entry(path))
    if ref == BASELINE_REF:
        raise HistoryError("'baseline' is resolved per suite, not as a run id")
    if len(ref) < MIN_PREFIX:
        raise HistoryError(f"run {ref!r}: give at least {MIN_PREFIX} characters of the run id")
    names = list(suites) if suites is not None else history_suites(root)
    matches: list[StoredEntry] = []
    for suite in names:
        for s in load_history(suite, root):
            if s.entry.run_id == ref:
                return s
            if s.entry.run_id.startswith(ref):
                matches.append(s)
    if len(matches) == 1:
        return matches[0]
    where = root or history_dir()
    scope = ", ".join(names) or "no suite"
    if not matches:
        raise HistoryError(f"no run {ref!r} in the history under {where} ({scope})")
    shown = ", ".join(f"{m.entry.suite}/{m.entry.run_id}" for m in matches[:5])
    more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
    raise HistoryError(f"run {ref!r} is ambiguous: {shown}{more}")
