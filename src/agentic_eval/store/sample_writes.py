"""Sample rows in and out of the database: the insert of a batch of rows (and of the request
templates their transcripts were stored without), and whole transcripts put back on read.

A transcript's request template (the tool list and system prompt) is the same for every
sample of a suite and is most of a scripted transcript's bytes: the store keeps each distinct
template once (``eval_request_template``, by sha256) and a row may hold its transcript without
the template's value (``request_template``: which, ``request_at``: where it goes). The store's
reads of whole rows (:meth:`~agentic_eval.store.db.Store.samples`,
:meth:`~agentic_eval.store.db.Store.sample`) put it back, so every reader sees the transcript's
canonical JSON, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from agentic_eval.store.models import EvalSample, RequestTemplateRow
from agentic_eval.store.sqlite_rows import SQLITE_INSERT, sqlite_params
from agentic_eval.store.values import clean

_KEYS = ["run_id", "case_id", "sample", "attempt"]
_SQLITE_TEMPLATE = (
    f"INSERT INTO {RequestTemplateRow.__tablename__} (sha256, template) VALUES (?, ?) "
    "ON CONFLICT (sha256) DO NOTHING"
)


def insert_rows(
    conn: Connection,
    run_id: str,
    rows: list[dict[str, Any]],
    templates: Mapping[str, str],
) -> None:
    """Insert the templates (``{sha256: canonical JSON}``) and the sample rows of a run, each
    one already stored skipped, in the caller's transaction."""
    dialect = conn.dialect.name
    params = sqlite_params(run_id, rows) if dialect == "sqlite" else None
    if params is not None:  # the driver directly: a fifth of a replayed sample less
        if templates:
            conn.exec_driver_sql(_SQLITE_TEMPLATE, list(templates.items()))
        conn.exec_driver_sql(SQLITE_INSERT, params)
        return
    batch = [{**clean(r), "run_id": run_id} for r in rows]
    kept = [{"sha256": k, "template": v} for k, v in templates.items()]
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        if kept:
            conn.execute(pg_insert(RequestTemplateRow).on_conflict_do_nothing(), kept)
        conn.execute(pg_insert(EvalSample).on_conflict_do_nothing(index_elements=_KEYS), batch)
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        if kept:
            conn.execute(sqlite_insert(RequestTemplateRow).on_conflict_do_nothing(), kept)
        stmt = sqlite_insert(EvalSample).on_conflict_do_nothing(index_elements=_KEYS)
        conn.execute(stmt, batch)
    else:  # pragma: no cover - other dialects insert plainly
        if kept:
            conn.execute(insert(RequestTemplateRow), kept)
        conn.execute(insert(EvalSample), batch)


def put_back_templates(conn: Connection, rows: Iterable[EvalSample]) -> None:
    """Make each row's ``transcript`` whole again (its request template put back where it was
    taken out), in place. A row whose template is missing keeps its text as it is, which no
    reader takes for a transcript (its request has no value)."""
    cut = [r for r in rows if r.request_template is not None and r.transcript is not None]
    if not cut:
        return
    wanted = sorted({r.request_template for r in cut if r.request_template is not None})
    stmt = select(RequestTemplateRow.sha256, RequestTemplateRow.template)
    found: dict[str, str] = {
        sha: text for sha, text in conn.execute(stmt.where(RequestTemplateRow.sha256.in_(wanted)))
    }
    for row in cut:
        template = found.get(row.request_template or "")
        if template is None or row.transcript is None or row.request_at is None:
            continue
        at = row.request_at
        row.transcript = row.transcript[:at] + template + row.transcript[at:]
        row.request_template = row.request_at = None
