"""A batch's history entry: its scorecard rebuilt from the store's sample rows."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from agentic_eval.batch.run import BatchSummary, plan_specs, stored_results
from agentic_eval.evaluation.gate import build_scorecard
from agentic_eval.history.entry import HistoryEntry, Producer, ProducerKind, RunConfig
from agentic_eval.history.fingerprints import fingerprints
from agentic_eval.store.db import Store


def entry_from_batch(
    store: Store, s: BatchSummary, *, repository: Path | None = None
) -> HistoryEntry | None:
    """The batch's history entry, or None when the history cannot hold it yet (a batch gated on
    the upper bound: the entry format records the rate gate only).

    Raises:
        BatchError: When the run is gone from the store.
    """
    plan = s.plan
    if plan.gate != "rate":
        return None
    run = store.run(s.run_id)
    assert run is not None
    specs, domain = plan_specs(plan)
    results = sorted(stored_results(store, s.run_id), key=lambda r: (r.case_id, r.sample))
    from agentic_eval.core.scorecard import ProducedBy

    produced = ProducedBy(
        agent=run.agent,
        agent_kind="scripted" if run.agent_kind == "scripted" else "model",
        backend=run.backend,
        model=run.model,
        approval_mode=plan.parameters.approval_mode,
    )
    mark = next((x.external_fixtures for x in specs if x.external_fixtures), None)
    card = build_scorecard(
        plan.suite,
        produced,
        results,
        max_failure_rate=plan.parameters.max_failure_rate,
        max_transient=plan.parameters.max_transient,
        external_fixtures=mark,
    )
    spec = plan.backend
    kind: ProducerKind = (
        "replay" if spec.kind == "replay" else "scripted" if spec.kind == "scripted" else "model"
    )
    live = spec.kind == "live"
    ran = {r.case_id for r in results}
    return HistoryEntry(
        run_id=s.run_id,
        suite=plan.suite,
        started_at=_utc(run.started_at),
        finished_at=_utc(run.finished_at or run.started_at),
        status="finished" if not s.missing else "interrupted",
        producer=Producer(
            kind=kind,
            agent=produced.agent,
            agent_kind=produced.agent_kind,
            backend=produced.backend,
            model=produced.model,
            provider=spec.provider if live else None,
            base_url=spec.base_url if live else None,
        ),
        config=RunConfig(
            mode=spec.kind,
            model=plan.model,
            parameters=plan.parameters,
            backend=spec,
            planned_samples=len(plan.keys),
            complete=plan.full,
        ),
        fingerprints=fingerprints([x for x in specs if x.case.id in ran], domain, start=repository),
        scorecard=card,
        gate=card.gate,
    )


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


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
