"""The corpus: a retrieval keeps the title its tool gave and whether the source was found (a
404 is what the first attempt saw too), and a sample of a corpus run is stamped with the job it
replayed and that job's first human verdict.

Retrievals kept before this revision have no title (NULL) and were all found.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add wf_retrieval.title and .found, eval_sample.source_job_id and .case_verdict."""
    with op.batch_alter_table("wf_retrieval") as table:
        table.add_column(sa.Column("title", sa.Text(), nullable=True))
        table.add_column(sa.Column("found", sa.Boolean(), nullable=False, server_default=sa.true()))
    with op.batch_alter_table("eval_sample") as table:
        table.add_column(sa.Column("source_job_id", sa.String(36), nullable=True))
        table.add_column(sa.Column("case_verdict", sa.String(20), nullable=True))


def downgrade() -> None:
    """Drop them."""
    with op.batch_alter_table("eval_sample") as table:
        table.drop_column("case_verdict")
        table.drop_column("source_job_id")
    with op.batch_alter_table("wf_retrieval") as table:
        table.drop_column("found")
        table.drop_column("title")
