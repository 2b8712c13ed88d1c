"""Whose code raised: a domain's (its plugin package or eval file) or ours.

A domain's hooks run inside every command (``agents()`` when an agent is chosen, ``mutants()``
for the kill matrix, ``fixtures()`` and ``build_cases()`` when cases load, ``roster()`` for
``list agents``, a one-file domain's decorated functions...). When one of them raises, the
command cannot go on, but the fault is the domain author's, not a bug of agentic-eval: the user
needs the file, the line and the function, in one line, and exit 2, as for any broken input.

:func:`domain_fault` reads an exception's traceback against the code of the domains loaded in
this process (a plugin's whole top-level package, an eval file); built-in domains are ours.
Nothing is loaded to answer: only domains already registered are looked at.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any

from agentic_eval.core.text import exception_text
from agentic_eval.domains.base import Domain

_OURS = "agentic_eval"


def _code_root(domain: Domain[Any]) -> str | None:
    """The file or folder holding ``domain``'s own code (None: it is one of ours)."""
    from agentic_eval.domains.onefile.loading import eval_file_of

    path = eval_file_of(domain)
    if path is not None:
        return str(path)
    top = type(domain).__module__.partition(".")[0]
    if top == _OURS:
        return None
    module = sys.modules.get(top)
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return None
    file = os.path.realpath(file)
    is_package = Path(file).name == "__init__.py"
    return str(Path(file).parent) if is_package else file


def _roots() -> dict[str, str]:
    """Each loaded domain's code root -> its name."""
    from agentic_eval.domains.registry import loaded_domains

    roots: dict[str, str] = {}
    for name, domain in loaded_domains().items():
        root = _code_root(domain)
        if root is not None:
            roots.setdefault(root, name)
    return roots


def _owner(filename: str, roots: dict[str, str]) -> str | None:
    real = os.path.realpath(filename)
    for root, name in roots.items():
        if real == root or real.startswith(root + os.sep):
            return name
    return None


def domain_fault(exc: BaseException) -> str | None:
    """One line naming the domain, file, line and function whose code raised ``exc`` (the
    innermost frame of a loaded domain's code in its traceback, or in what it was raised
    from), or None when no domain's code is on it (then it is ours)."""
    roots = _roots()
    if not roots:
        return None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        hit = None
        for frame in traceback.extract_tb(current.__traceback__):
            name = _owner(frame.filename, roots)
            if name is not None:
                hit = (name, frame)
        if hit is not None:
            name, frame = hit
            what = exception_text(exc)
            shown = _shown(frame.filename)
            return f"domain {name}: {what} (raised in {frame.name}(), {shown}:{frame.lineno})"
        current = current.__cause__ or current.__context__
    return None


def _shown(filename: str) -> str:
    """A path as short as it can be said: relative to the working folder when inside it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if rel.startswith(os.pardir) else rel
