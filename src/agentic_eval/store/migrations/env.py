"""Alembic environment: runs on the connection the store hands over (see store.db.migrate)."""

from __future__ import annotations

from alembic import context

# imported for its effect: the wf_ tables join Base.metadata
import agentic_eval.store.workflow_tables  # noqa: F401  # pyright: ignore[reportUnusedImport]
from agentic_eval.store.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
