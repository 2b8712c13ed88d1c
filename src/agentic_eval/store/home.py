"""The tool's own folder (``$AGENTIC_EVAL_HOME``, default ``.agentic-eval``): made on first use
with a ``.gitignore`` that ignores everything in it, as pytest does for ``.pytest_cache``, so a
store and a local history never show up in ``git status`` of the repository they sit in."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "AGENTIC_EVAL_HOME"
GITIGNORE = "# Written by agentic-eval: the store and local history are not for git.\n*\n"


def home_dir() -> Path:
    """``$AGENTIC_EVAL_HOME``, default ``.agentic-eval`` in the working directory."""
    return Path(os.environ.get(HOME_ENV, ".agentic-eval"))


def make_home(folder: Path) -> None:
    """Create ``folder`` (and its parents); a folder this call created gets the ``.gitignore``
    (a folder that already existed is the user's, and is left as it is).

    Raises:
        OSError: When the folder or the file cannot be written.
    """
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        try:
            with ignore.open("x", encoding="utf-8") as f:
                f.write(GITIGNORE)
        except FileExistsError:  # another process wrote it first
            pass
