"""The store: SQLite file under ``$AGENTIC_EVAL_HOME`` by default, PostgreSQL by URL.

Every run writes an ``eval_run`` row when it starts and one ``eval_sample`` row per case as the
case finishes (committed at once), so a crash loses nothing already judged.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, insert, select, update
from sqlalchemy.engine import Connection

from agentic_eval._version import __version__
from agentic_eval.core.canonical import sha256_of
from agentic_eval.core.scorecard import ProducedBy, Scorecard
from agentic_eval.store.models import EvalRun, EvalSample

HOME_ENV = "AGENTIC_EVAL_HOME"
URL_ENV = "AGENTIC_EVAL_DATABASE_URL"
HEAD_REVISION = "0001"


def home_dir() -> Path:
    """``$AGENTIC_EVAL_HOME``, default ``.agentic-eval`` in the working directory."""
    return Path(os.environ.get(HOME_ENV, ".agentic-eval"))


def database_url() -> str:
    """``$AGENTIC_EVAL_DATABASE_URL``, or the SQLite file under the home folder."""
    url = os.environ.get(URL_ENV, "").strip()
    if url:
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        return url
    return f"sqlite:///{home_dir() / 'agentic-eval.db'}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class StoreError(Exception):
    """The database cannot be opened or migrated."""


class Store:
    """Runs and samples in a relational database."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        if self.url.startswith("sqlite:///"):
            Path(self.url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.engine: Engine = create_engine(self.url)
        except Exception as exc:
            raise StoreError(f"cannot open the database {self.url}: {exc}") from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._migrated = False

    def migrate(self) -> None:
        """Bring the schema to the newest migration (Alembic), if it is not there already."""
        if self._migrated:
            return
        try:
            with self.engine.begin() as conn:
                if _current_revision(conn) != HEAD_REVISION:
                    _upgrade(conn)
        except Exception as exc:
            raise StoreError(f"cannot migrate the database {self.url}: {exc}") from None
        self._migrated = True

    def start_run(self, domain: str, produced: ProducedBy, mode: str, started_at: datetime) -> str:
        """Insert the run row; returns its id."""
        self.migrate()
        run_id = str(uuid.uuid4())
        with self.engine.begin() as conn:
            conn.execute(
                insert(EvalRun).values(
                    id=run_id,
                    domain=domain,
                    agent=produced.agent,
                    agent_kind=produced.agent_kind,
                    backend=produced.backend,
                    mode=mode,
                    model=produced.model,
                    approval_mode=produced.approval_mode,
                    started_at=started_at,
                    status="running",
                    samples=0,
                    passed=0,
                    check_failed=0,
                    error=0,
                    transient=0,
                    hard_gate_failures=0,
                    package_version=__version__,
                )
            )
        return run_id

    def add_samples(self, run_id: str, rows: Iterable[dict[str, Any]]) -> None:
        """Insert sample rows (dicts of :class:`EvalSample` columns) in one transaction."""
        batch = [{"run_id": run_id, **r} for r in rows]
        if batch:
            with self.engine.begin() as conn:
                conn.execute(insert(EvalSample), batch)

    def finish_run(
        self, run_id: str, scorecard: Scorecard, finished_at: datetime, reproduced: bool | None
    ) -> None:
        """Write the run's totals and gate."""
        t = scorecard.totals
        with self.engine.begin() as conn:
            conn.execute(
                update(EvalRun)
                .where(EvalRun.id == run_id)
                .values(
                    finished_at=finished_at,
                    status="finished",
                    samples=t.cases,
                    passed=t.passed,
                    check_failed=t.check_failed,
                    error=t.error,
                    transient=t.transient,
                    hard_gate_failures=t.hard_gate_failures,
                    failure_rate=scorecard.gate.failure_rate,
                    gate=scorecard.gate.verdict,
                    scorecard_sha256=sha256_of(scorecard),
                    reproduced=reproduced,
                )
            )

    def runs(self, limit: int = 20) -> list[EvalRun]:
        """The newest runs."""
        from sqlalchemy.orm import Session

        self.migrate()
        with Session(self.engine) as session:
            stmt = select(EvalRun).order_by(EvalRun.started_at.desc()).limit(limit)
            return list(session.scalars(stmt))

    def samples(self, run_id: str) -> list[EvalSample]:
        """A run's samples, by case id."""
        from sqlalchemy.orm import Session

        with Session(self.engine) as session:
            stmt = (
                select(EvalSample).where(EvalSample.run_id == run_id).order_by(EvalSample.case_id)
            )
            return list(session.scalars(stmt))

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()


def _current_revision(conn: Connection) -> str | None:
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _upgrade(conn: Connection) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, "head")
