"""A batch's history entry: its scorecard rebuilt from the store's sample rows."""

from __future__ import annotations

from pathlib import Path

from agentic_eval.batch.run import BatchError, BatchSummary, plan_specs
from agentic_eval.history.build import entry_from_session
from agentic_eval.history.entry import HistoryEntry
from agentic_eval.store.db import Store


def entry_from_batch(
    store: Store, s: BatchSummary, *, repository: Path | None = None
) -> HistoryEntry | None:
    """The batch's history entry (as a run's: :func:`entry_from_session` of the run finished
    from its rows), or None when the history cannot hold it yet (a batch gated on the upper
    bound: the entry format records the rate gate only).

    Raises:
        BatchError: When the run was not closed (:func:`agentic_eval.batch.close_run`).
    """
    del store
    plan = s.plan
    if plan.gate != "rate":
        return None
    if s.session is None:
        raise BatchError(f"run {s.run_id} is not closed: close it before filing its entry")
    specs, domain = plan_specs(plan)
    return entry_from_session(
        s.session, domain, specs, plan.settings(), plan.backend, repository=repository
    )


def record_batch(store: Store, s: BatchSummary) -> str | None:
    """File the batch's history entry in the history folder and the store, as a run's is;
    returns why it was not filed (one line), or None.

    Never into a git work tree when the batch used real fixtures; never for a batch gated on
    the upper bound (the entry records the rate gate)."""
    from agentic_eval.core.canonical import canonical_file_text
    from agentic_eval.core.realdata import inside_git_work_tree
    from agentic_eval.history.files import HistoryError, append_entry, history_dir

    entry = entry_from_batch(store, s)
    if entry is None:
        return "no history entry for a batch gated on the upper bound (the history records rates)"
    if entry.scorecard.external_fixtures and inside_git_work_tree(history_dir()):
        return (
            f"{entry.suite} used real fixtures: its history entry is not written into "
            f"{history_dir()} (inside a git repository)"
        )
    try:
        stored = append_entry(entry)
    except HistoryError as exc:
        return str(exc)
    text = canonical_file_text(stored.entry)
    store.add_history_entry(s.run_id, entry.suite, entry.finished_at, text, history_dir())
    return None
