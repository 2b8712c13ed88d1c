"""The store's schema version: Alembic's newest migration, the database's, and the upgrade."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).parent / "migrations"


def head_revision() -> str:
    """The newest migration, as Alembic's script directory has it."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


def current_revision(conn: Connection) -> str | None:
    """The database's migration (None: never migrated)."""
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def upgrade(conn: Connection, target: str = "head") -> None:
    """Run the migrations up to ``target`` in the caller's transaction."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, target)
