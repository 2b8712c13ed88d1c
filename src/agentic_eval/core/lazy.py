"""Names a package exports, loaded on first use (PEP 562), so importing one submodule does not
import the rest of its package with it: what keeps ``agentic-eval --help`` fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, where: Mapping[str, tuple[str, str]], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps each exported name to the module
    and attribute it comes from; a loaded name is kept in ``namespace`` (the package's globals),
    so it is looked up once.

    Example::

        __getattr__ = lazy_exports(__name__, _WHERE, globals())
    """

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where[name]
        value = getattr(importlib.import_module(module), attribute)
        namespace[name] = value
        return value

    return __getattr__
