"""History entries in the store: each run's scorecard with its configuration and fingerprints.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create history_entry."""
    op.create_table(
        "history_entry",
        sa.Column(
            "run_id",
            sa.String(36),
            sa.ForeignKey("eval_run.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("suite", sa.Text(), nullable=False, index=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("entry", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
    )


def downgrade() -> None:
    """Drop history_entry."""
    op.drop_table("history_entry")
