"""Initial schema: eval_run and eval_sample.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the tables."""
    op.create_table(
        "eval_run",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("domain", sa.String(100), nullable=False, index=True),
        sa.Column("agent", sa.String(200), nullable=False),
        sa.Column("agent_kind", sa.String(20), nullable=False),
        sa.Column("backend", sa.String(50), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("approval_mode", sa.String(20), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("samples", sa.Integer, nullable=False),
        sa.Column("passed", sa.Integer, nullable=False),
        sa.Column("check_failed", sa.Integer, nullable=False),
        sa.Column("error", sa.Integer, nullable=False),
        sa.Column("transient", sa.Integer, nullable=False),
        sa.Column("hard_gate_failures", sa.Integer, nullable=False),
        sa.Column("failure_rate", sa.Float, nullable=True),
        sa.Column("gate", sa.String(20), nullable=True),
        sa.Column("scorecard_sha256", sa.String(64), nullable=True),
        sa.Column("reproduced", sa.Boolean, nullable=True),
        sa.Column("package_version", sa.String(40), nullable=False),
    )
    op.create_table(
        "eval_sample",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id",
            sa.String(36),
            sa.ForeignKey("eval_run.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False, index=True),
        sa.Column("failure_reason", sa.Text, nullable=False),
        sa.Column("failure_where", sa.String(200), nullable=False),
        sa.Column("checks", sa.JSON, nullable=False),
        sa.Column("hard_gate_failed", sa.Boolean, nullable=False),
        sa.Column("unapproved_attempts", sa.Integer, nullable=False),
        sa.Column("unapproved_executions", sa.Integer, nullable=False),
        sa.Column("turns", sa.Integer, nullable=False),
        sa.Column("tool_calls", sa.Integer, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
        sa.Column("transcript_ref", sa.String(500), nullable=True),
        sa.Column("reproduced", sa.Boolean, nullable=True),
        sa.UniqueConstraint("run_id", "case_id", name="uq_eval_sample_run_case"),
    )


def downgrade() -> None:
    """Drop the tables."""
    op.drop_table("eval_sample")
    op.drop_table("eval_run")
