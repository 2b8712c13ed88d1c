"""What each attempt's tools retrieved: ``wf_retrieval`` (attempt, position, source, sha256) over
``wf_source_text`` (the text, stored once per sha256), so a replay of a job serves the text its
first attempt saw. Attempts made before this revision have no retrievals on record.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create wf_source_text and wf_retrieval."""
    op.create_table(
        "wf_source_text",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("text", sa.Text(), nullable=False),
    )
    op.create_table(
        "wf_retrieval",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "attempt_id",
            sa.String(36),
            sa.ForeignKey("wf_attempt.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(64), sa.ForeignKey("wf_source_text.sha256"), nullable=False),
        sa.UniqueConstraint("attempt_id", "position", name="uq_wf_retrieval_attempt_position"),
    )
    op.create_index("ix_wf_retrieval_attempt_id", "wf_retrieval", ["attempt_id"])


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ix_wf_retrieval_attempt_id", table_name="wf_retrieval")
    op.drop_table("wf_retrieval")
    op.drop_table("wf_source_text")
