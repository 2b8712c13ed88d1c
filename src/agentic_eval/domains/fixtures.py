"""Where a domain's fixtures come from, and one-line errors when they are invalid.

Real customer data never enters the repository: ``$EVAL_FIXTURE_DIR/<domain>/<file>`` replaces
the committed, anonymised file of the same name when it exists.

What is read from there marks its domain as using real fixtures (:func:`reads_external`), with
no code of the domain's own: ``$EVAL_FIXTURE_DIR/<domain>/`` holding any file, or any file under
``$EVAL_FIXTURE_DIR`` read through :func:`fixture_file`, :func:`load_fixture_file` or a
:class:`FixtureLoader`. :meth:`Domain.external_fixtures` asks it, so every case file,
transcript, scorecard and history entry derived from it carries the mark ``guard`` looks for.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # imported where fixtures are validated: a domain is listed without pydantic
    from pydantic import BaseModel

FIXTURE_DIR_ENV = "EVAL_FIXTURE_DIR"
MAX_FIXTURE_BYTES = 64 * 1024 * 1024

M = TypeVar("M", bound="BaseModel")


class FixtureError(Exception):
    """A fixture file is missing, unreadable or does not fit its model (one line, naming it)."""


def fixture_dir() -> Path | None:
    """``$EVAL_FIXTURE_DIR``, when set."""
    root = os.environ.get(FIXTURE_DIR_ENV, "").strip()
    return Path(root) if root else None


_read_external: set[tuple[str, str]] = set()
"""(``$EVAL_FIXTURE_DIR``, domain) of every file read from there in this process (the domain is
the file's first folder): a read under one real-fixture folder says nothing of another."""


def _note_read(path: Path) -> None:
    """Remember which domain's folder of ``$EVAL_FIXTURE_DIR`` ``path`` lies in, if any."""
    root = fixture_dir()
    if root is None:
        return
    try:
        parts = path.absolute().relative_to(root.absolute()).parts
    except ValueError:
        return
    if len(parts) > 1:
        _read_external.add((str(root), parts[0]))


def reads_external(domain: str) -> bool:
    """Whether ``domain`` uses real fixtures: ``$EVAL_FIXTURE_DIR/<domain>/`` holds a file, or
    this process read one of its files through the loaders of this module."""
    root = fixture_dir()
    if root is None:
        return False
    if (str(root), domain) in _read_external:
        return True
    folder = root / domain
    try:
        return folder.is_dir() and any(True for _ in folder.iterdir())
    except OSError:  # unreadable: whatever it holds may be real, so say so
        return True


def fixture_file(domain: str, committed: Path) -> Path:
    """The fixture file in use: the external one when present, else the committed one."""
    root = fixture_dir()
    if root is not None:
        candidate = root / domain / committed.name
        if candidate.exists() or candidate.is_symlink():
            _read_external.add((str(root), domain))
            return candidate  # even when it is no regular file: refused on load, never replaced
    return committed


def load_fixture_file(model: type[M], path: Path) -> M:
    """Read and validate a fixture file.

    Raises:
        FixtureError: One line naming the file and, for invalid data, the first bad field.
    """
    from pydantic import ValidationError

    _note_read(path)
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


T = TypeVar("T")


def find_by_id(items: Iterable[T], key: str, id_of: Callable[[T], str]) -> T:
    """The item whose id is ``key``.

    Raises:
        KeyError: When there is none.
    """
    for item in items:
        if id_of(item) == key:
            return item
    raise KeyError(key)


def unique_ids(kind: str, ids: Iterable[str]) -> set[str]:
    """The ids as a set.

    Raises:
        ValueError: Naming the duplicated ids, when there are any.
    """
    counts = Counter(ids)
    dupes = sorted(k for k, n in counts.items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate {kind} ids: {dupes}")
    return set(counts)


class FixtureLoader(Generic[M]):
    """Loads a domain's fixture file (the external one when present), validated and cached per
    file version (path, modification time, size): treat what it returns as read-only."""

    def __init__(self, model: type[M], domain: str, committed: Path) -> None:
        self.model, self.domain, self.committed = model, domain, committed
        self._cache: dict[tuple[str, int, int], M] = {}

    def path(self) -> Path:
        """The fixture file in use: ``$EVAL_FIXTURE_DIR/<domain>/<name>`` or the committed."""
        return fixture_file(self.domain, self.committed)

    def __call__(self) -> M:
        """The fixtures in use.

        Raises:
            FixtureError: One line naming the file and the first invalid field.
        """
        path = self.path()
        try:
            info = path.stat()
        except OSError:
            return load_fixture_file(self.model, path)  # raises the one-line error
        key = (str(path), info.st_mtime_ns, info.st_size)
        hit = self._cache.get(key)
        if hit is None:
            hit = load_fixture_file(self.model, path)
            if len(self._cache) >= 4:
                self._cache.clear()
            self._cache[key] = hit
        return hit
