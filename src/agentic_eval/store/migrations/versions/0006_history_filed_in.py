"""History entries remember where they were filed: ``history_entry.filed_in`` is the history
folder the entry file was written to (NULL: the run wrote no file, e.g. ``--no-history``), so an
entry file deleted from that folder is noticed by the store that recorded it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add history_entry.filed_in."""
    op.add_column("history_entry", sa.Column("filed_in", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop history_entry.filed_in."""
    with op.batch_alter_table("history_entry") as batch:
        batch.drop_column("filed_in")
