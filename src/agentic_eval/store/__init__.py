"""Persistence of runs and samples (SQLAlchemy 2, Alembic migrations).

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.store.db import Store, StoreError, database_url, home_dir
    from agentic_eval.store.models import EvalRun, EvalSample

_WHERE: dict[str, tuple[str, str]] = {
    "Store": ("agentic_eval.store.db", "Store"),
    "StoreError": ("agentic_eval.store.db", "StoreError"),
    "database_url": ("agentic_eval.store.db", "database_url"),
    "home_dir": ("agentic_eval.store.db", "home_dir"),
    "EvalRun": ("agentic_eval.store.models", "EvalRun"),
    "EvalSample": ("agentic_eval.store.models", "EvalSample"),
}

__all__ = ["EvalRun", "EvalSample", "Store", "StoreError", "database_url", "home_dir"]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
