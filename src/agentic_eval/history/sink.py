"""The history as a run's last sink: once the run is finished, its entry is filed.

A :class:`HistorySink` is told the finished run (:meth:`HistorySink.finished`) and files its
history entry in the history folder and in the store, as every command that runs a plan does
(``run``, ``run --resume``, ``batch``). Only a finished run is filed: a stopped one is filed when
``--resume`` finishes it (an entry of part of a run would contradict the rows its resume adds).
A history write never fails the run: what went wrong is kept in :attr:`HistorySink.warnings`
for the command to print. An entry derived from real fixtures is never written into a git work
tree, nor copied into the store.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.batch.plan import RunPlan
from agentic_eval.batch.run import plan_specs
from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.core.realdata import inside_git_work_tree
from agentic_eval.evaluation.session import SessionResult
from agentic_eval.history.build import entry_from_session
from agentic_eval.history.files import HistoryError, StoredEntry, append_entry, history_dir
from agentic_eval.store.db import Store


class HistorySink:
    """Files a finished run's history entry (``write=False``: builds it, files nothing)."""

    def __init__(self, store: Store, plan: RunPlan, *, write: bool = True) -> None:
        self.store, self.plan, self.write = store, plan, write
        self.stored: StoredEntry | None = None
        """The entry, once filed (or built, when it was not written)."""
        self.warnings: list[str] = []

    def finished(self, result: SessionResult) -> StoredEntry:
        """File ``result``'s entry; returns it (a file path of ``<run id>.json`` when no file
        was written)."""
        specs, domain = plan_specs(self.plan)
        entry = entry_from_session(result, domain, specs, self.plan.settings(), self.plan.backend)
        real = entry.scorecard.external_fixtures is not None
        blocked = real and inside_git_work_tree(history_dir())
        if blocked and self.write:
            self.warnings.append(
                f"{result.suite} used real fixtures: its history entry is not written into "
                f"{history_dir()} (inside a git repository); set AGENTIC_EVAL_HISTORY_DIR "
                "elsewhere"
            )
        stored = StoredEntry(Path(f"{result.run_id}.json"), entry)
        if result.status != "finished":
            self.stored = stored
            return stored
        if self.plan.gate != "rate":  # the entry format records the rate gate only
            self.warnings.append(
                "no history entry for a batch gated on the upper bound (the history records rates)"
            )
            self.stored = stored
            return stored
        if self.write and not blocked:
            try:
                stored = append_entry(entry)
            except HistoryError as exc:  # a history write never fails the run
                self.warnings.append(str(exc))
        if not real:
            text = canonical_file_text(stored.entry)
            filed = history_dir() if stored.sha256 else None  # a file was written
            self.store.add_history_entry(result.run_id, entry.suite, entry.finished_at, text, filed)
        self.stored = stored
        return stored
