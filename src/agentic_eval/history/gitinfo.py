"""The working tree's HEAD commit, read from ``.git`` without running git.

Handles a plain repository, a worktree or submodule (``.git`` is a file naming the git folder,
whose ``commondir`` holds the shared refs), a detached HEAD, and refs packed into
``packed-refs``. Anything unexpected means "unknown" (None), never an exception: a history entry
is still written outside a repository.
"""

from __future__ import annotations

import re
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_MAX_BYTES = 4 * 1024 * 1024


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def git_dir(start: Path) -> Path | None:
    """The git folder of the repository holding ``start`` (walking up), or None."""
    try:
        here = start.resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = _read(dot) or ""
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                target = target if target.is_absolute() else folder / target
                return target if target.is_dir() else None
            return None
    return None


def _common_dir(gdir: Path) -> Path:
    text = _read(gdir / "commondir")
    if text is None or not text.strip():
        return gdir
    common = Path(text.strip())
    return common if common.is_absolute() else gdir / common


def _resolve_ref(gdir: Path, ref: str) -> str | None:
    if ".." in ref.split("/"):
        return None
    for base in dict.fromkeys((gdir, _common_dir(gdir))):
        text = _read(base / ref)
        if text is not None:
            value = text.strip()
            return value if _SHA.match(value) else None
    for base in dict.fromkeys((gdir, _common_dir(gdir))):
        for line in (_read(base / "packed-refs") or "").splitlines():
            parts = line.strip().split(" ", 1)
            if len(parts) == 2 and parts[1] == ref and _SHA.match(parts[0]):
                return parts[0]
    return None


def git_commit(start: Path | None = None) -> str | None:
    """The commit HEAD points at in the repository holding ``start`` (default: the working
    directory), or None outside a repository, on an unborn branch, or when unreadable."""
    gdir = git_dir(start or Path.cwd())
    if gdir is None:
        return None
    head = (_read(gdir / "HEAD") or "").strip()
    if _SHA.match(head):
        return head
    if head.startswith("ref:"):
        return _resolve_ref(gdir, head.removeprefix("ref:").strip())
    return None
