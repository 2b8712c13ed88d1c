"""Persistence of runs and samples (SQLAlchemy 2, Alembic migrations)."""

from agentic_eval.store.db import Store, StoreError, database_url, home_dir
from agentic_eval.store.models import EvalRun, EvalSample

__all__ = ["EvalRun", "EvalSample", "Store", "StoreError", "database_url", "home_dir"]
