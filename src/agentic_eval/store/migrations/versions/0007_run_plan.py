"""A run is a stored plan: ``eval_run.plan`` holds the versioned RunPlan (what to run, the exact
sample keys, the backend spec, the run parameters), so a worker or ``--resume`` rebuilds the run
from the store alone. NULL for runs started before plans were stored.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add eval_run.plan."""
    op.add_column("eval_run", sa.Column("plan", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop eval_run.plan."""
    with op.batch_alter_table("eval_run") as batch:
        batch.drop_column("plan")
