"""SQLite's write-ahead log when several processes write one run: who checkpoints it.

By default the connection whose commit takes the log past 1,000 pages copies it into the
database file and syncs both (a checkpoint), waiting on the disk meanwhile. The local
``--processes`` executor's children run samples on every core, so their commits hand that wait
to the parent, which is idle: a child's connection does not checkpoint
(:func:`defer_checkpoints`), and the parent checkpoints as their rows come in
(:func:`checkpoint`). Durability is unchanged (``synchronous=NORMAL``: a commit is in the log,
a checkpoint syncs), and so is everything a reader sees: a checkpoint moves committed pages,
whoever runs it. Any other database: both do nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, event


def defer_checkpoints(engine: Engine) -> None:
    """Make ``engine``'s SQLite connections leave checkpoints to another connection (one
    that calls :func:`checkpoint`); call before its first connection."""
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _no_autocheckpoint)


def _no_autocheckpoint(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


def checkpoint(engine: Engine) -> None:
    """Copy what the log holds into a SQLite database file, without waiting for any reader or
    writer (a passive checkpoint: what another connection still reads is copied later)."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").all()
