"""An index holding what the gate counts of a run's samples: its outcome, hard-gate flag, case
and corpus verdict beside the run id, so the gate, pass^k and the hard gates are read from the
index alone.

Without it each count read every sample row of the run, and on SQLite a row's last columns
(the corpus verdict among them) lie past its transcript, on the row's overflow pages: at
10,000 samples of 26 KB transcripts, every count walked 260 MB of pages.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

COLUMNS = ["run_id", "case_id", "outcome", "hard_gate_failed", "case_verdict"]


def upgrade() -> None:
    """Create ix_eval_sample_gate."""
    op.create_index("ix_eval_sample_gate", "eval_sample", COLUMNS)


def downgrade() -> None:
    """Drop it."""
    op.drop_index("ix_eval_sample_gate", table_name="eval_sample")
