"""The governed workflow runtime: users, templates, jobs, steps, transitions, claims, attempts,
decisions (``wf_*`` tables). Only adds tables: existing runs, samples and history are untouched.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_LIVE = "status = 'live'"


def _seq() -> sa.Column[int]:
    return sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True)


def _id() -> sa.Column[str]:
    return sa.Column("id", sa.String(36), nullable=False, unique=True)


def _at(name: str, nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _step_fk() -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["job_id", "step_key"], ["wf_step.job_id", "wf_step.key"], ondelete="CASCADE"
    )


def upgrade() -> None:
    """Create the workflow tables and the one-live-claim-per-step index."""
    op.create_table(
        "wf_user",
        _seq(),
        _id(),
        sa.Column("name", sa.Text(), nullable=False, unique=True),
        sa.Column("role", sa.String(20), nullable=False),
        _at("created_at"),
    )
    op.create_table(
        "wf_template",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        _at("created_at"),
    )
    op.create_table(
        "wf_job",
        _seq(),
        _id(),
        sa.Column(
            "template_key",
            sa.String(200),
            sa.ForeignKey("wf_template.key"),
            nullable=False,
            index=True,
        ),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("requirements", sa.JSON(), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(36), sa.ForeignKey("wf_user.id"), nullable=False),
        _at("created_at"),
        sa.Column("revision", sa.Integer(), nullable=False),
    )
    op.create_table(
        "wf_step",
        _seq(),
        sa.Column(
            "job_id", sa.String(36), sa.ForeignKey("wf_job.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        _at("created_at"),
        sa.UniqueConstraint("job_id", "key", name="uq_wf_step_job_key"),
        sa.UniqueConstraint("job_id", "position", name="uq_wf_step_job_position"),
    )
    op.create_table(
        "wf_transition",
        _seq(),
        _id(),
        sa.Column(
            "job_id",
            sa.String(36),
            sa.ForeignKey("wf_job.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("step_key", sa.String(200), nullable=True),
        sa.Column("actor_id", sa.String(36), sa.ForeignKey("wf_user.id"), nullable=False),
        _at("at"),
        sa.Column("from_state", sa.String(20), nullable=False),
        sa.Column("to_state", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
    )
    op.create_table(
        "wf_claim",
        _seq(),
        _id(),
        sa.Column("job_id", sa.String(36), nullable=False, index=True),
        sa.Column("step_key", sa.String(200), nullable=False),
        sa.Column("attempt_id", sa.String(36), nullable=False, unique=True),
        sa.Column("claimant_id", sa.String(36), sa.ForeignKey("wf_user.id"), nullable=False),
        _at("claimed_at"),
        _at("released_at", nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        _step_fk(),
    )
    op.create_index(
        "uq_wf_claim_live_step",
        "wf_claim",
        ["job_id", "step_key"],
        unique=True,
        sqlite_where=sa.text(_LIVE),
        postgresql_where=sa.text(_LIVE),
    )
    op.create_table(
        "wf_attempt",
        _seq(),
        _id(),
        sa.Column("job_id", sa.String(36), nullable=False, index=True),
        sa.Column("step_key", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("claim_id", sa.String(36), sa.ForeignKey("wf_claim.id"), nullable=False),
        _at("started_at"),
        _at("finished_at", nullable=True),
        sa.Column("output", sa.JSON(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("feedback", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        _step_fk(),
        sa.UniqueConstraint("job_id", "step_key", "number", name="uq_wf_attempt_step_number"),
    )
    op.create_table(
        "wf_decision",
        _seq(),
        _id(),
        sa.Column(
            "attempt_id",
            sa.String(36),
            sa.ForeignKey("wf_attempt.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("job_id", sa.String(36), nullable=False, index=True),
        sa.Column("step_key", sa.String(200), nullable=False),
        sa.Column("operator_id", sa.String(36), sa.ForeignKey("wf_user.id"), nullable=False),
        sa.Column("decision", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        _at("at"),
    )


def downgrade() -> None:
    """Drop the workflow tables, children first."""
    op.drop_table("wf_decision")
    op.drop_table("wf_attempt")
    op.drop_index("uq_wf_claim_live_step", table_name="wf_claim")
    op.drop_table("wf_claim")
    op.drop_table("wf_transition")
    op.drop_table("wf_step")
    op.drop_table("wf_job")
    op.drop_table("wf_template")
    op.drop_table("wf_user")
