"""Batch rows made cheaper to write and to count.

- An index holding what the gate counts of a run's samples (outcome, hard-gate flag, case,
  corpus verdict) beside the run id, so the gate, pass^k and the hard gates are read from the
  index alone. Without it each count read every sample row of the run, and on SQLite a row's
  last columns (the corpus verdict among them) lie past its transcript, on its overflow pages.
- ``eval_request_template``: each distinct request template (the tool list and system prompt:
  most of a scripted transcript's bytes) once, by sha256; a sample row's transcript may be
  stored without it (``request_template``, ``request_at`` say which and where it goes). Rows
  stored before this revision are whole (both NULL).

- On PostgreSQL 14 and later (built with lz4), a transcript is compressed with lz4 rather than
  the default pglz, which cost the server about 0.1 ms of CPU per sample of a scripted batch
  (on a machine whose cores the batch's processes share with it). Values already stored keep
  their compression; it is invisible to readers.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import DBAPIError

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

COLUMNS = ["run_id", "case_id", "outcome", "hard_gate_failed", "case_verdict"]


def upgrade() -> None:
    """Create ix_eval_sample_gate, eval_request_template and the two sample columns."""
    op.create_index("ix_eval_sample_gate", "eval_sample", COLUMNS)
    op.create_table(
        "eval_request_template",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("template", sa.Text(), nullable=False),
    )
    with op.batch_alter_table("eval_sample") as table:
        table.add_column(sa.Column("request_template", sa.String(64), nullable=True))
        table.add_column(sa.Column("request_at", sa.Integer(), nullable=True))
    _transcript_compression("lz4")


def _transcript_compression(method: str) -> None:
    """Compress new transcripts with ``method`` on a PostgreSQL that has it (others: as is)."""
    conn = op.get_bind()
    version = conn.dialect.server_version_info
    if conn.dialect.name != "postgresql" or not version or int(version[0]) < 14:
        return
    savepoint = conn.begin_nested()
    try:
        conn.execute(
            sa.text(f"ALTER TABLE eval_sample ALTER COLUMN transcript SET COMPRESSION {method}")
        )
    except DBAPIError:  # a server built without lz4: pglz it stays
        savepoint.rollback()
    else:
        savepoint.commit()


def downgrade() -> None:
    """Put every stored transcript back whole, then drop them."""
    _transcript_compression("default")
    conn = op.get_bind()
    kept = conn.execute(sa.text("SELECT sha256, template FROM eval_request_template"))
    templates = {sha: template for sha, template in kept}
    rows = conn.execute(
        sa.text(
            "SELECT id, transcript, request_template, request_at FROM eval_sample "
            "WHERE request_template IS NOT NULL"
        )
    ).all()
    op.drop_index("ix_eval_sample_gate", table_name="eval_sample")
    for sample_id, text, sha, at in rows:
        whole = text[:at] + templates[sha] + text[at:]
        conn.execute(
            sa.text("UPDATE eval_sample SET transcript = :t WHERE id = :i"),
            {"t": whole, "i": sample_id},
        )
    with op.batch_alter_table("eval_sample") as table:
        table.drop_column("request_at")
        table.drop_column("request_template")
    op.drop_table("eval_request_template")
