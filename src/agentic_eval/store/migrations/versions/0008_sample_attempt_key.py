"""A sample is keyed (run, case, epoch, attempt): the attempt (a workflow step's rejection round)
joins the unique key, so two attempts of one case and epoch in one run are two rows, never one
merged into the other. Existing rows all hold attempt 1, so they keep their keys.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """(run, case, sample) unique -> (run, case, sample, attempt) unique."""
    with op.batch_alter_table("eval_sample") as sample:
        sample.drop_constraint("uq_eval_sample_run_case_sample", type_="unique")
        sample.create_unique_constraint(
            "uq_eval_sample_run_case_sample_attempt", ["run_id", "case_id", "sample", "attempt"]
        )


def downgrade() -> None:
    """Back to (run, case, sample): later attempts of a case and epoch are dropped first."""
    op.execute(
        "DELETE FROM eval_sample WHERE attempt > 1 AND EXISTS (SELECT 1 FROM eval_sample AS o "
        "WHERE o.run_id = eval_sample.run_id AND o.case_id = eval_sample.case_id "
        "AND o.sample = eval_sample.sample AND o.attempt < eval_sample.attempt)"
    )
    with op.batch_alter_table("eval_sample") as sample:
        sample.drop_constraint("uq_eval_sample_run_case_sample_attempt", type_="unique")
        sample.create_unique_constraint(
            "uq_eval_sample_run_case_sample", ["run_id", "case_id", "sample"]
        )
