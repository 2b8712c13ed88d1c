"""The store: SQLite file under ``$AGENTIC_EVAL_HOME`` by default, PostgreSQL by URL.

Every run writes an ``eval_run`` row when it starts and its ``eval_sample`` rows as samples are
judged (in small batches, see ``evaluation.session``); the row's heartbeat moves with every
batch, so a ``running`` row whose heartbeat stopped is recognisable as abandoned. Inserting the
same (run, case, sample, attempt) twice keeps one row. The gate is read back from the rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    Engine,
    Row,
    Text,
    case,
    create_engine,
    event,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy import cast as cast_
from sqlalchemy.engine import Connection, make_url

from agentic_eval._version import __version__
from agentic_eval.core.scorecard import ProducedBy, Scorecard
from agentic_eval.core.text import safe_url as core_safe_url
from agentic_eval.store.history_rows import HistoryRows
from agentic_eval.store.home import HOME_ENV as HOME_ENV
from agentic_eval.store.home import URL_ENV as URL_ENV
from agentic_eval.store.home import home_dir, make_home
from agentic_eval.store.models import EvalRun, EvalSample
from agentic_eval.store.sample_writes import insert_rows, put_back_templates
from agentic_eval.store.schema import current_revision as _current_revision
from agentic_eval.store.schema import head_revision as head_revision
from agentic_eval.store.schema import upgrade as _upgrade
from agentic_eval.store.values import aware as _aware
from agentic_eval.store.values import clean

STALE_AFTER = timedelta(minutes=2)
"""A ``running`` run whose heartbeat is older than this was left by a process that died."""
_GATED = EvalSample.case_verdict.is_distinct_from("rejected")
"""The samples a gate judges: all but a corpus sample whose human verdict was rejected (it has
no right answer to check; it is run with the reason as feedback and counted apart)."""


def database_url() -> str:
    """``$AGENTIC_EVAL_DATABASE_URL``, or the SQLite file under the home folder."""
    url = os.environ.get(URL_ENV, "").strip()
    if url:
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        return url
    return f"sqlite:///{home_dir() / 'agentic-eval.db'}"


def safe_url(url: str) -> str:
    """The database URL as it may be shown: :func:`agentic_eval.core.text.safe_url`."""
    return core_safe_url(url)


def describe_db_error(exc: BaseException, url: str) -> str:
    """One line: what the driver said, without SQLAlchemy's background link, SQL or password."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc)
    text = text.split("\n[SQL:")[0].split("(Background on this error")[0]
    text = " ".join(text.split())
    secrets: list[str] = []
    try:
        parsed = make_url(url)
        secrets = [str(s) for s in (parsed.password, parsed.query.get("password")) if s]
    except Exception:
        secrets = []
    for secret in secrets:
        text = text.replace(secret, "***")
    return text[:300] or type(exc).__name__


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


@dataclass(frozen=True)
class SampleVerdict:
    """What a sample row says of one sample's verdict."""

    case_id: str
    sample: int
    outcome: str
    hard_gate_failed: bool
    attempt: int = 1


class StoreError(Exception):
    """The database cannot be opened, migrated or written (one line, password hidden)."""


class Store(HistoryRows):
    """Runs and samples in a relational database."""

    def __init__(self, url: str | None = None, *, migrated: bool = False) -> None:
        """Open the store at ``url`` (default :func:`database_url`).

        Args:
            url: The database URL.
            migrated: The caller knows the schema is at the newest migration (a child process
                working on a run its parent opened, which migrated it): :meth:`migrate` then
                skips its check, which imports Alembic and reads every migration script.
        """
        self.url = url or database_url()
        if self.url.startswith("sqlite:///"):
            folder = Path(self.url.removeprefix("sqlite:///")).parent
            try:
                if folder == home_dir():
                    make_home(folder)
                else:
                    folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the store folder {folder}: {exc.strerror or exc}"
                ) from None
        try:
            self.engine: Engine = create_engine(self.url)
        except Exception as exc:
            raise StoreError(
                f"cannot open the database {safe_url(self.url)}: {describe_db_error(exc, self.url)}"
            ) from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._migrated = migrated

    @contextmanager
    def _begin(self, doing: str) -> Generator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(
                f"cannot {doing} in {safe_url(self.url)}: {describe_db_error(exc, self.url)}"
            ) from None

    def migrate(self) -> None:
        """Bring the schema to the newest migration (Alembic), if it is not there already."""
        if self._migrated:
            return
        head = head_revision()
        with self._begin("migrate the database") as conn:
            if _current_revision(conn) != head:
                if conn.dialect.name == "postgresql":  # workers starting at once: one migrates
                    from sqlalchemy import text

                    conn.execute(text("SELECT pg_advisory_xact_lock(7343110118)"))
                if _current_revision(conn) != head:  # another process may have done it meanwhile
                    _upgrade(conn)
        self._migrated = True

    def start_run(
        self,
        domain: str,
        produced: ProducedBy,
        mode: str,
        started_at: datetime,
        *,
        settings: dict[str, Any] | None = None,
        backend_spec: dict[str, Any] | None = None,
        planned_samples: int = 0,
        worker: str | None = None,
        plan: dict[str, Any] | None = None,
    ) -> str:
        """Insert the run row (with its serialised RunPlan, when it has one); returns its id."""
        self.migrate()
        run_id = str(uuid.uuid4())
        values = clean(
            {
                "id": run_id,
                "domain": domain,
                "agent": produced.agent,
                "agent_kind": produced.agent_kind,
                "backend": produced.backend,
                "mode": mode,
                "model": produced.model,
                "approval_mode": produced.approval_mode,
                "status": "running",
                "settings": settings,
                "backend_spec": backend_spec,
                "planned_samples": planned_samples,
                "worker": worker,
                "plan": plan,
                "samples": 0,
                "passed": 0,
                "check_failed": 0,
                "error": 0,
                "transient": 0,
                "hard_gate_failures": 0,
                "package_version": __version__,
            }
        )
        values["started_at"] = values["heartbeat_at"] = started_at
        with self._begin("start a run") as conn:
            conn.execute(insert(EvalRun).values(**values))
        return run_id

    def add_samples(
        self,
        run_id: str,
        rows: Iterable[dict[str, Any]],
        templates: Mapping[str, str] | None = None,
        *,
        heartbeat: bool = True,
    ) -> None:
        """Insert sample rows (dicts of :class:`EvalSample` columns) in one transaction; a row
        whose (run, case, sample, attempt) is already stored is skipped. Moves the run's
        heartbeat (unless ``heartbeat`` is False: a worker moving it less often, as writers on
        many processes would otherwise queue on the run's row). ``templates``: the request
        templates (``{sha256: canonical JSON}``) that rows' transcripts were stored without
        (:mod:`agentic_eval.store.sample_writes`)."""
        rows = list(rows)
        if not rows:
            return
        with self._begin("write samples") as conn:
            insert_rows(conn, run_id, rows, templates or {})
            if heartbeat:
                conn.execute(
                    update(EvalRun)
                    .where(EvalRun.id == run_id)
                    .values(heartbeat_at=datetime.now(UTC))
                )

    def reopen_run(self, run_id: str, worker: str) -> None:
        """Mark a stopped run ``running`` again (a resume) by ``worker``: no finish time,
        heartbeat now."""
        now = datetime.now(UTC)
        with self._begin("reopen the run") as conn:
            conn.execute(
                update(EvalRun)
                .where(EvalRun.id == run_id)
                .values(status="running", finished_at=None, heartbeat_at=now, worker=worker)
            )

    def heartbeat(self, run_id: str) -> None:
        """Say the run's process is alive."""
        with self._begin("update the heartbeat") as conn:
            conn.execute(
                update(EvalRun).where(EvalRun.id == run_id).values(heartbeat_at=datetime.now(UTC))
            )

    def gate_counts(self, run_id: str, *, judged: bool = True) -> dict[str, int]:
        """Samples by outcome, plus ``hard_gate_failures``, read from the rows (GROUP BY): the
        samples the gate judges, so never a corpus sample whose human verdict was rejected
        (``judged=False``: every stored sample, as progress counts them)."""
        only = _GATED if judged else true()
        with self._begin("read the gate") as conn:
            rows = conn.execute(
                select(EvalSample.outcome, func.count())
                .where(EvalSample.run_id == run_id, only)
                .group_by(EvalSample.outcome)
            ).all()
            hard = conn.execute(
                select(func.count())
                .select_from(EvalSample)
                .where(EvalSample.run_id == run_id, only, EvalSample.hard_gate_failed.is_(True))
            ).scalar_one()
        counts = {kind: 0 for kind in ("passed", "check_failed", "error", "transient")}
        counts.update({str(outcome): int(n) for outcome, n in rows})
        counts["hard_gate_failures"] = int(hard)
        return counts

    def case_counts(self, run_id: str) -> list[tuple[str, int, int, int]]:
        """Per case: its judged, passed and transient samples, read from the rows (GROUP BY),
        sorted by case id in Python (a database's collation may order them otherwise): what
        pass^k and the flaky cases take, without reading every row back."""
        judged = func.sum(case((EvalSample.outcome != "transient", 1), else_=0))
        passed = func.sum(case((EvalSample.outcome == "passed", 1), else_=0))
        transient = func.sum(case((EvalSample.outcome == "transient", 1), else_=0))
        with self._begin("read the per-case counts") as conn:
            rows = conn.execute(
                select(EvalSample.case_id, judged, passed, transient)
                .where(EvalSample.run_id == run_id, _GATED)
                .group_by(EvalSample.case_id)
            ).all()
        return sorted((str(c), int(j), int(p), int(t)) for c, j, p, t in rows)

    def verdict_counts(self, run_id: str) -> dict[str, int]:
        """A corpus run's samples by the human verdict they were stamped with (GROUP BY);
        empty for any other run."""
        with self._begin("read the corpus verdicts") as conn:
            rows = conn.execute(
                select(EvalSample.case_verdict, func.count())
                .where(EvalSample.run_id == run_id, EvalSample.case_verdict.is_not(None))
                .group_by(EvalSample.case_verdict)
            ).all()
        return {str(verdict): int(n) for verdict, n in sorted(rows)}

    def finish_run(
        self,
        run_id: str,
        scorecard: Scorecard | None,
        finished_at: datetime,
        reproduced: bool | None,
        status: str = "finished",
        scorecard_sha256: str | None = None,
    ) -> None:
        """Write the run's status, and its totals and gate (a cache of the sample rows).

        ``scorecard_sha256`` is the sha256 of the scorecard's canonical file text."""
        values: dict[str, Any] = {
            "finished_at": finished_at,
            "heartbeat_at": finished_at,
            "status": status,
            "reproduced": reproduced,
        }
        if scorecard is not None:
            t = scorecard.totals
            values.update(
                samples=t.cases,
                passed=t.passed,
                check_failed=t.check_failed,
                error=t.error,
                transient=t.transient,
                hard_gate_failures=t.hard_gate_failures,
                failure_rate=scorecard.gate.failure_rate,
                gate=scorecard.gate.verdict,
                scorecard_sha256=scorecard_sha256,
            )
        with self._begin("finish the run") as conn:
            conn.execute(update(EvalRun).where(EvalRun.id == run_id).values(**values))

    def recount(
        self,
        run_id: str,
        gate: str | None = None,
        failure_rate: float | None = None,
        *,
        counts: Mapping[str, int] | None = None,
    ) -> None:
        """Set the run's cached totals from its sample rows, and its gate when given
        (``counts``: :meth:`gate_counts` of the run, when the caller has just read them)."""
        if counts is None:
            counts = self.gate_counts(run_id)
        values: dict[str, Any] = {
            k: counts[k] for k in ("passed", "check_failed", "error", "transient")
        }
        values["samples"] = sum(values.values())
        values["hard_gate_failures"] = counts["hard_gate_failures"]
        if gate is not None:
            values.update(gate=gate, failure_rate=failure_rate)
        with self._begin("count the samples") as conn:
            conn.execute(update(EvalRun).where(EvalRun.id == run_id).values(**values))

    def runs(self, limit: int = 20) -> list[EvalRun]:
        """The newest runs."""
        from sqlalchemy.orm import Session

        self.migrate()
        with Session(self.engine) as session:
            stmt = select(EvalRun).order_by(EvalRun.started_at.desc()).limit(limit)
            return list(session.scalars(stmt))

    def run(self, run_id: str) -> EvalRun | None:
        """One run row."""
        from sqlalchemy.orm import Session

        self.migrate()
        with Session(self.engine) as session:
            return session.get(EvalRun, run_id)

    def sample(self, sample_id: int) -> EvalSample | None:
        """One sample row, by its id."""
        from sqlalchemy.orm import Session

        with Session(self.engine) as session:
            row = session.get(EvalSample, sample_id)
            session.expunge_all()  # the transcript made whole is the reader's, never written
            if row is not None:
                put_back_templates(session.connection(), [row])
            return row

    def abandoned_runs(self, now: datetime | None = None) -> list[EvalRun]:
        """Runs still marked ``running`` whose heartbeat stopped more than
        :data:`STALE_AFTER` ago: the process that ran them died."""
        from sqlalchemy.orm import Session

        self.migrate()
        cutoff = (now or datetime.now(UTC)) - STALE_AFTER
        with Session(self.engine) as session:
            stmt = select(EvalRun).where(EvalRun.status == "running")
            rows = list(session.scalars(stmt))
        return [r for r in rows if _aware(r.heartbeat_at or r.started_at) < cutoff]

    def samples(self, run_id: str) -> list[EvalSample]:
        """A run's samples, by case id then sample."""
        from sqlalchemy.orm import Session

        with Session(self.engine) as session:
            stmt = (
                select(EvalSample)
                .where(EvalSample.run_id == run_id)
                .order_by(EvalSample.case_id, EvalSample.sample, EvalSample.attempt)
            )
            rows = list(session.scalars(stmt))
            session.expunge_all()  # the transcripts made whole are the reader's, never written
            put_back_templates(session.connection(), rows)
            return rows

    def sample_results(
        self, run_id: str, *, worker: str | None = None, after: int = 0, besides: Sequence[str] = ()
    ) -> list[Row[Any]]:
        """A run's sample rows without their transcripts (every other :class:`EvalSample`
        column, by name; ``checks`` as its JSON text, ``checks_json``, which most rows repeat),
        by case id, then sample, then attempt: what finishing a run reads. ``worker``: only its
        rows whose id is above ``after``; ``besides``: only rows of no worker or of another."""
        cols: list[Any] = [c for c in EvalSample.__table__.columns if c.name != "transcript"]
        cols = [cast_(c, Text).label("checks_json") if c.name == "checks" else c for c in cols]
        stmt = select(*cols).where(EvalSample.run_id == run_id)
        if worker is not None:
            stmt = stmt.where(EvalSample.worker_id == worker, EvalSample.id > after)
        if besides:
            w = EvalSample.worker_id
            stmt = stmt.where(w.is_(None) | w.not_in(list(besides)))
        stmt = stmt.order_by(EvalSample.case_id, EvalSample.sample, EvalSample.attempt)
        with self._begin("read the sample rows") as conn:
            return cast("list[Row[Any]]", conn.execute(stmt).all())

    def hard_gates_failed(self, run_id: str) -> dict[str, int]:
        """Samples failing each hard gate, by gate name, read from the rows' checks."""
        found: dict[str, int] = {}
        with self._begin("read the hard gates") as conn:
            stmt = select(EvalSample.checks).where(
                EvalSample.run_id == run_id, _GATED, EvalSample.hard_gate_failed.is_(True)
            )
            for (checks,) in conn.execute(stmt):
                names = {
                    str(c.get("name"))
                    for c in checks or []
                    if c.get("hard_gate") and not c.get("passed")
                }
                for name in names:
                    found[name] = found.get(name, 0) + 1
        return dict(sorted(found.items()))

    def stored_keys(
        self, run_id: str, keys: Sequence[tuple[str, int, int]] | None = None
    ) -> set[tuple[str, int, int]]:
        """The (case, sample, attempt) keys of the run's stored samples; only among ``keys``
        when given (a worker asking about one sample reads one row, not the whole run)."""
        from sqlalchemy import tuple_

        cols = (EvalSample.case_id, EvalSample.sample, EvalSample.attempt)
        wanted = None if keys is None else list(dict.fromkeys(keys))
        stmt = select(*cols).where(EvalSample.run_id == run_id)
        if wanted is not None and len(wanted) <= 300:  # more: the run's keys, picked here
            stmt = stmt.where(tuple_(*cols).in_(wanted))  # (cheaper than a query per 300)
        with self._begin("read the stored samples") as conn:
            held = {(c, s, a) for c, s, a in conn.execute(stmt).all()}  # fetched at once
        return held if wanted is None else held.intersection(wanted)

    def sample_verdicts(self, run_ids: Iterable[str]) -> dict[str, list[SampleVerdict]]:
        """The outcome of every stored sample of these runs (no transcripts), by run id."""
        ids = list(dict.fromkeys(run_ids))
        found: dict[str, list[SampleVerdict]] = {}
        if not ids:
            return found
        cols = (
            EvalSample.run_id,
            EvalSample.case_id,
            EvalSample.sample,
            EvalSample.outcome,
            EvalSample.hard_gate_failed,
            EvalSample.attempt,
        )
        with self._begin("read the sample rows") as conn:
            for start in range(0, len(ids), 500):
                stmt = select(*cols).where(EvalSample.run_id.in_(ids[start : start + 500]))
                for run_id, case_id, sample, outcome, hard, attempt in conn.execute(stmt):
                    found.setdefault(run_id, []).append(
                        SampleVerdict(case_id, sample, outcome, bool(hard), attempt)
                    )
        return found

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()
