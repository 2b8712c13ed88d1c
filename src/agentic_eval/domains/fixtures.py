"""Where a domain's fixtures come from, and one-line errors when they are invalid.

Real customer data never enters the repository: ``$EVAL_FIXTURE_DIR/<domain>/<file>`` replaces
the committed, anonymised file of the same name when it exists.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

FIXTURE_DIR_ENV = "EVAL_FIXTURE_DIR"
MAX_FIXTURE_BYTES = 64 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)


class FixtureError(Exception):
    """A fixture file is missing, unreadable or does not fit its model (one line, naming it)."""


def fixture_dir() -> Path | None:
    """``$EVAL_FIXTURE_DIR``, when set."""
    root = os.environ.get(FIXTURE_DIR_ENV, "").strip()
    return Path(root) if root else None


def fixture_file(domain: str, committed: Path) -> Path:
    """The fixture file in use: the external one when present, else the committed one."""
    root = fixture_dir()
    if root is not None:
        candidate = root / domain / committed.name
        if candidate.exists() or candidate.is_symlink():
            return candidate  # even when it is no regular file: refused on load, never replaced
    return committed


def load_fixture_file(model: type[M], path: Path) -> M:
    """Read and validate a fixture file.

    Raises:
        FixtureError: One line naming the file and, for invalid data, the first bad field.
    """
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise FixtureError(f"{path}: not a regular file")
        if info.st_size > MAX_FIXTURE_BYTES:
            raise FixtureError(f"{path}: larger than {MAX_FIXTURE_BYTES} bytes")
        raw = path.read_bytes()
    except FixtureError:
        raise
    except OSError as exc:
        raise FixtureError(f"{path}: cannot read the fixtures ({exc.strerror or exc})") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise FixtureError(f"{path}: invalid fixtures at {loc}: {err['msg']}{more}") from None
