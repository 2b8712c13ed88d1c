"""SQLite's log when the `--processes` children write: they leave checkpoints to the parent."""

from __future__ import annotations

from pathlib import Path

from agentic_eval.store import Store
from agentic_eval.store.wal import checkpoint, defer_checkpoints


def _pragma(store: Store, sql: str) -> tuple[int, ...]:
    with store.engine.connect() as conn:
        return tuple(conn.exec_driver_sql(sql).one())


def test_a_deferring_connection_leaves_the_log_to_checkpoint(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/store.db"
    parent = Store(url)
    parent.migrate()
    child = Store(url, migrated=True)
    defer_checkpoints(child.engine)
    assert _pragma(child, "PRAGMA wal_autocheckpoint") == (0,)
    assert _pragma(parent, "PRAGMA wal_autocheckpoint") == (1000,)
    with child.engine.begin() as conn:  # about 2,000 pages: past SQLite's own threshold
        conn.exec_driver_sql("CREATE TABLE filler (x BLOB)")
        for _ in range(500):
            conn.exec_driver_sql("INSERT INTO filler VALUES (zeroblob(16000))")
    wal, db = tmp_path / "store.db-wal", tmp_path / "store.db"
    assert wal.stat().st_size > 16000 * 500  # the writer copied nothing out of the log
    assert db.stat().st_size < 16000 * 500
    checkpoint(parent.engine)
    assert db.stat().st_size > 16000 * 500  # the checkpoint did
    with parent.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM filler").scalar() == 500
    child.close()
    parent.close()
