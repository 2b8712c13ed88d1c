"""Jobs carry their origin (``wf_job.origin``): ``real``, ``scenario``, ``workflow-batch`` or
``imported``, so an eval's own jobs (and their seeded decisions) never pass for the corpus of
human decisions. Existing jobs are ``real``, except those an eval scenario seeded before this
revision (created by the ``eval-operator`` user with the title ``scenario NAME``), which are
``scenario``.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add wf_job.origin (default real), mark the scenario-seeded jobs, index it."""
    op.add_column(
        "wf_job", sa.Column("origin", sa.String(20), nullable=False, server_default="real")
    )
    op.execute(
        "UPDATE wf_job SET origin = 'scenario' WHERE title LIKE 'scenario %' AND created_by IN "
        "(SELECT id FROM wf_user WHERE name = 'eval-operator')"
    )
    op.create_index("ix_wf_job_origin", "wf_job", ["origin"])


def downgrade() -> None:
    """Drop wf_job.origin."""
    op.drop_index("ix_wf_job_origin", table_name="wf_job")
    with op.batch_alter_table("wf_job") as batch:
        batch.drop_column("origin")
