"""The store's history-entry rows: a run's entry as canonical JSON, beside its file."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select

from agentic_eval.store.models import HistoryEntryRow
from agentic_eval.store.values import aware, clean


class HistoryRows:
    """History-entry queries of :class:`agentic_eval.store.db.Store` (a mixin)."""

    engine: Engine

    def _begin(self, doing: str) -> Any:  # pragma: no cover - the store's own
        raise NotImplementedError

    def migrate(self) -> None:  # pragma: no cover - the store's own
        raise NotImplementedError

    def add_history_entry(
        self,
        run_id: str,
        suite: str,
        recorded_at: datetime,
        text: str,
        filed_in: Path | None = None,
    ) -> None:
        """Store a run's history entry (canonical JSON) and the history folder its file was
        written to (None: no file was); a second write for the run is ignored."""
        values = clean(
            {
                "run_id": run_id,
                "suite": suite,
                "entry": text,
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "filed_in": None if filed_in is None else str(filed_in.resolve()),
            }
        )
        values["recorded_at"] = recorded_at
        with self._begin("store the history entry") as conn:
            exists = conn.execute(
                select(HistoryEntryRow.run_id).where(HistoryEntryRow.run_id == run_id)
            ).first()
            if exists is None:
                conn.execute(insert(HistoryEntryRow).values(**values))

    def history_entries(self, suite: str) -> list[HistoryEntryRow]:
        """A suite's stored history entries, oldest first."""
        from sqlalchemy.orm import Session

        self.migrate()
        with Session(self.engine) as session:
            stmt = (
                select(HistoryEntryRow)
                .where(HistoryEntryRow.suite == suite)
                .order_by(HistoryEntryRow.recorded_at)
            )
            return list(session.scalars(stmt))

    def filed_runs(self, suite: str, folder: Path) -> dict[str, datetime]:
        """Runs of ``suite`` whose history entry file was written into ``folder`` (the suite's
        history root), with when they were recorded."""
        where = str(folder.resolve())
        with self._begin("read the history entries") as conn:
            stmt = select(HistoryEntryRow.run_id, HistoryEntryRow.recorded_at).where(
                HistoryEntryRow.suite == suite, HistoryEntryRow.filed_in == where
            )
            return {run_id: aware(at) for run_id, at in conn.execute(stmt)}

    def history_texts(self, run_ids: Iterable[str]) -> dict[str, str]:
        """The store's copies of these runs' history entries, by run id."""
        ids = list(dict.fromkeys(run_ids))
        found: dict[str, str] = {}
        with self._begin("read the history entries") as conn:
            for start in range(0, len(ids), 500):
                stmt = select(HistoryEntryRow.run_id, HistoryEntryRow.entry).where(
                    HistoryEntryRow.run_id.in_(ids[start : start + 500])
                )
                found.update({run_id: text for run_id, text in conn.execute(stmt)})
        return found
