"""Real customer data never enters the repository.

Fixtures under ``$EVAL_FIXTURE_DIR`` are real data. Whatever is derived from them (a transcript,
a scorecard, a case file, a history entry) carries the mark ``"external_fixtures": "<sha256 of
the fixtures>"``; committed, anonymised data never does. :func:`marked_files` finds marked files
(and files under a fixture folder) among those git tracks: the guard a test and CI run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

MARK = "external_fixtures"
"""The key every file derived from real fixtures carries, with the fixtures' sha256."""
REAL_DATA_KEY = '"real_data": true'
"""A real fixture file may declare itself so; such a file must not be tracked either."""
_NEEDLE = f'"{MARK}"'.encode()


def inside_git_work_tree(path: Path) -> bool:
    """Whether ``path`` (existing or not) lies inside a git work tree."""
    current = path.absolute()
    while True:
        if (current / ".git").exists():
            return True
        if current.parent == current:
            return False
        current = current.parent


def marked_files(root: Path, tracked: Iterable[str], fixture_dir: Path | None) -> list[str]:
    """Tracked files that hold real data: under the fixture folder, or carrying a mark.

    Args:
        root: The repository's top folder.
        tracked: Paths git tracks, relative to ``root``.
        fixture_dir: ``$EVAL_FIXTURE_DIR``, when set.

    Returns:
        One line per offending file, saying why.
    """
    found: list[str] = []
    real_root = fixture_dir.resolve() if fixture_dir is not None else None
    for rel in tracked:
        path = root / rel
        resolved = path.resolve()
        if real_root is not None and (resolved == real_root or real_root in resolved.parents):
            found.append(f"{rel}: lies under EVAL_FIXTURE_DIR ({fixture_dir})")
            continue
        if path.suffix != ".json" or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if _NEEDLE in data:
            found.append(f"{rel}: derived from external fixtures (carries {MARK!r})")
        elif REAL_DATA_KEY.encode() in data.replace(b'"real_data":true', REAL_DATA_KEY.encode()):
            found.append(f"{rel}: declares itself real data ({REAL_DATA_KEY})")
    return found


def fixture_dir_env() -> Path | None:
    """``$EVAL_FIXTURE_DIR`` when set."""
    value = os.environ.get("EVAL_FIXTURE_DIR", "").strip()
    return Path(value) if value else None
