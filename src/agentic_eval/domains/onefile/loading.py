"""Import an eval file by path and find the domains it defines (no package, no entry point).

``agentic-eval run path/to/my_eval.py`` names a file where a registered domain's name would go.
The file is imported under a module name of its own (one per path), every
:class:`~agentic_eval.domains.base.Domain` instance at its top level is a domain it defines, and
those are registered like any plugin's, so every command after that point treats them alike.
Importing the same unchanged file again returns the same domains.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from agentic_eval.domains.base import Domain
from agentic_eval.domains.registry import all_domains, register_domain, unregister_domain

EVAL_FILE_SUFFIX = ".py"

_loaded: dict[Path, tuple[tuple[int, int], list[Domain[Any]]]] = {}


class EvalFileError(Exception):
    """An eval file that cannot be used: missing, not Python, raising, or defining no domain
    (one line, naming the file and, where there is one, the line)."""


def is_eval_file(name: str) -> bool:
    """Whether a DOMAIN argument names an eval file rather than a registered domain."""
    return name.endswith(EVAL_FILE_SUFFIX)


def _module_name(path: Path) -> str:
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    return f"agentic_eval_evalfile_{stem}_{digest}"


def _where(exc: BaseException, path: Path, shown: str) -> str:
    """``file:line`` of the innermost frame of the eval file in the exception's traceback."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == str(path):
            line = frame.lineno
    return f"{shown}:{line}" if line is not None else shown


def _import(path: Path, shown: str) -> list[Domain[Any]]:
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EvalFileError(f"{shown}: cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and dataclasses resolve the file's names through it
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        in_file = exc.filename in (None, str(path))
        where = shown if in_file else str(exc.filename)
        where = f"{where}:{exc.lineno}" if exc.lineno else where
        raise EvalFileError(f"{where}: syntax error: {exc.msg}") from None
    except Exception as exc:
        sys.modules.pop(name, None)
        from agentic_eval.agent.tools import describe_exception

        raise EvalFileError(
            f"{_where(exc, path, shown)}: importing the eval file raised {describe_exception(exc)}"
        ) from None
    found: list[Domain[Any]] = []
    for value in vars(module).values():
        if isinstance(value, Domain) and all(value is not d for d in found):
            found.append(value)  # pyright: ignore[reportUnknownArgumentType]
    if not found:
        raise EvalFileError(
            f"{shown}: defines no domain (create one at the top level with "
            "`agentic_eval.domain(...)`, or a Domain instance)"
        )
    return found


def load_eval_file(name: str | Path) -> list[Domain[Any]]:
    """The domains an eval file defines, registered (imported once per file version).

    Raises:
        EvalFileError: The file is missing, not a file, does not compile or raises on import,
            defines no domain, or defines one whose name another domain already has.
    """
    path = Path(name).expanduser()
    try:
        path = path.resolve(strict=True)
        info = path.stat()
    except OSError:
        raise EvalFileError(f"{name}: no such eval file") from None
    if not path.is_file():
        raise EvalFileError(f"{name}: not a file")
    version = (info.st_mtime_ns, info.st_size)
    hit = _loaded.get(path)
    registered = all_domains() if hit is not None else {}
    if hit is not None and hit[0] == version and all(registered.get(d.name) is d for d in hit[1]):
        return list(hit[1])
    if hit is not None:  # the file changed (or its domains were unregistered): they give way
        for old in hit[1]:
            if registered.get(old.name) is old:
                unregister_domain(old.name)
    domains = _import(path, str(name))
    all_domains()  # plugins first: a file's domain may not take a plugin's name
    for d in domains:
        try:
            register_domain(d)
        except (TypeError, ValueError) as exc:
            for done in domains:
                if done is not d:
                    unregister_domain(done.name)
                else:
                    break
            raise EvalFileError(f"{name}: {exc}") from None
    _loaded[path] = (version, domains)
    return list(domains)


def eval_file_of(domain: Domain[Any]) -> Path | None:
    """The eval file that defined ``domain`` (None: it is not from one)."""
    for path, (_, domains) in _loaded.items():
        if any(d is domain for d in domains):
            return path
    return None
