"""Claims are leases: ``wf_claim`` gains ``lease_expires_at``, ``heartbeat_at`` and ``holder``,
and the ``agentic-eval`` system user who releases expired claims is created. Only adds: claims
already in the table keep every value (a live one, having no expiry, counts as expired, which is
what a claim whose process died before leases existed is).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_SYSTEM_ID = "00000000-0000-4000-8000-000000000001"
_SYSTEM_NAME = "agentic-eval"


def upgrade() -> None:
    """Add the lease columns and the system user."""
    # plain ADD COLUMN (nullable, no default) on both SQLite and PostgreSQL: no table rebuild,
    # so the partial unique index on live claims stays as 0004 made it
    op.add_column("wf_claim", sa.Column("lease_expires_at", sa.DateTime(timezone=True)))
    op.add_column("wf_claim", sa.Column("heartbeat_at", sa.DateTime(timezone=True)))
    op.add_column("wf_claim", sa.Column("holder", sa.Text()))
    users = sa.table(
        "wf_user",
        sa.column("id", sa.String(36)),
        sa.column("name", sa.Text()),
        sa.column("role", sa.String(20)),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    bind = op.get_bind()
    if bind.execute(sa.select(users.c.id).where(users.c.id == _SYSTEM_ID)).first() is not None:
        return
    name = _SYSTEM_NAME
    if bind.execute(sa.select(users.c.id).where(users.c.name == name)).first() is not None:
        name = f"{_SYSTEM_NAME} (system)"  # someone already took the plain name
    row = {"id": _SYSTEM_ID, "name": name, "role": "system", "created_at": datetime.now(UTC)}
    op.bulk_insert(users, [row])


def downgrade() -> None:
    """Drop the lease columns (the system user stays: transitions may name it)."""
    # plain DROP COLUMN (SQLite 3.35+): a batch rebuild could lose the partial index's WHERE
    op.drop_column("wf_claim", "holder")
    op.drop_column("wf_claim", "heartbeat_at")
    op.drop_column("wf_claim", "lease_expires_at")
