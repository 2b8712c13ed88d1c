"""Samples, not cases: sample index, attempt, worker and times per sample, (run, case, sample)
unique; typed settings, backend spec, planned samples and heartbeat per run; unbounded text.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the columns; existing samples become sample 0, attempt 1.

    ``eval_run`` is only added to (on SQLite, rebuilding the parent table would cascade-delete
    the samples; SQLite ignores string lengths anyway), ``eval_sample`` is rebuilt in batch mode
    to swap its unique key.
    """
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.add_column("eval_run", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("eval_run", sa.Column("settings", sa.JSON(), nullable=True))
    op.add_column("eval_run", sa.Column("backend_spec", sa.JSON(), nullable=True))
    op.add_column(
        "eval_run",
        sa.Column("planned_samples", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column("eval_run", sa.Column("worker", sa.Text(), nullable=True))
    if not sqlite:
        for name in ("domain", "agent", "backend", "model", "package_version"):
            op.alter_column("eval_run", name, type_=sa.Text(), existing_nullable=False)
    with op.batch_alter_table("eval_sample") as sample:
        sample.drop_constraint("uq_eval_sample_run_case", type_="unique")
        sample.alter_column("case_id", type_=sa.Text(), existing_nullable=False)
        sample.alter_column("failure_where", type_=sa.Text(), existing_nullable=False)
        sample.alter_column("transcript_ref", type_=sa.Text(), existing_nullable=True)
        sample.add_column(sa.Column("sample", sa.Integer(), nullable=False, server_default="0"))
        sample.add_column(sa.Column("attempt", sa.Integer(), nullable=False, server_default="1"))
        sample.add_column(sa.Column("worker_id", sa.Text(), nullable=True))
        sample.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
        sample.add_column(sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True))
        sample.add_column(sa.Column("transcript", sa.Text(), nullable=True))
        sample.create_unique_constraint(
            "uq_eval_sample_run_case_sample", ["run_id", "case_id", "sample"]
        )


def downgrade() -> None:
    """Back to one row per case."""
    with op.batch_alter_table("eval_sample") as sample:
        sample.drop_constraint("uq_eval_sample_run_case_sample", type_="unique")
        for name in ("transcript", "finished_at", "started_at", "worker_id", "attempt", "sample"):
            sample.drop_column(name)
        sample.create_unique_constraint("uq_eval_sample_run_case", ["run_id", "case_id"])
    for name in ("worker", "planned_samples", "backend_spec", "settings", "heartbeat_at"):
        op.drop_column("eval_run", name)
