"""History is evidence: an entry is checked before anything is read from it.

Three checks, from the cheapest to the strongest:

- :func:`agentic_eval.history.consistency.inconsistency` (on every read of a file): the entry
  agrees with itself, its totals and gate recomputed from its cases.
- :func:`chain_problems`: every entry (format 2) carries the sha256 of the entry before it in
  its series, so a deleted, reordered or replaced entry breaks a link and is reported (the
  oldest entries of a series may be pruned: a chain may lose its start, not its middle).
- :func:`store_problems`: where the store holds the run, the entry must match the store's copy
  of it and the store's sample rows, case by case. A fully consistent rewrite of an entry is
  caught here.

What an entry cannot prove on its own: a history rewritten as a whole (every entry edited
consistently and the chain recomputed) on a machine without the store. The chain then only
shows that the files were not edited one by one after the fact.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentic_eval.history.consistency import first_difference
from agentic_eval.history.entry import HistoryEntry, SeriesKey, series_key
from agentic_eval.history.files import StoredEntry
from agentic_eval.store.db import SampleVerdict, Store, StoreError


def chain_problems(history: Sequence[StoredEntry]) -> list[str]:
    """What breaks the chain of each series in one suite's history, one line each (``history``
    as :func:`agentic_eval.history.files.load_history` returns it, with each file's digest)."""
    problems: list[str] = []
    series: dict[SeriesKey, list[StoredEntry]] = defaultdict(list)
    for s in history:
        if s.entry.schema_version >= 2:
            series[series_key(s.entry)].append(s)
    for key, members in series.items():
        name = f"{key[1]} ({key[2]}, {key[3]})"
        by_digest = {s.sha256: s for s in members}
        followers: dict[str | None, list[StoredEntry]] = defaultdict(list)
        for s in members:
            followers[s.entry.previous_sha256].append(s)
        first = min(members, key=lambda m: (m.entry.finished_at, m.path.name))
        for s in members:
            prev = s.entry.previous_sha256
            if prev is None:
                continue
            before = by_digest.get(prev)
            if before is None and s is first:
                continue  # the series' older entries were pruned: a chain may lose its start
            if before is None:
                if not any(o.sha256 == prev and o.entry.schema_version < 2 for o in history):
                    problems.append(
                        f"{s.path.name}: the entry before it in series {name} (sha256 "
                        f"{prev[:12]}) is missing: deleted or edited"
                    )
            elif before.entry.finished_at > s.entry.finished_at:
                problems.append(
                    f"{s.path.name}: follows {before.path.name} in series {name}, which "
                    "finished later: the history was reordered"
                )
        roots = followers.get(None, [])
        if len(roots) > 1:
            names = ", ".join(r.path.name for r in roots)
            problems.append(f"series {name} has {len(roots)} first entries: {names}")
        for prev, after in followers.items():
            if prev is not None and len(after) > 1:
                names = ", ".join(a.path.name for a in after)
                problems.append(f"series {name}: {len(after)} entries follow one entry: {names}")
    return problems


def store_problems(
    entries: Iterable[StoredEntry],
    rows: Mapping[str, Sequence[SampleVerdict]],
    stored_texts: Mapping[str, str],
) -> list[str]:
    """Entries that disagree with what the store recorded of the same run, one line each.

    Args:
        entries: The entries to check.
        rows: The store's sample rows, by run id (a run the store does not hold is skipped:
            nothing to compare).
        stored_texts: The store's copies of history entries, by run id.
    """
    problems: list[str] = []
    for s in entries:
        problem = _against_store(s, rows.get(s.entry.run_id, ()), stored_texts.get(s.entry.run_id))
        if problem is not None:
            problems.append(f"{s.path.name}: {problem} (run {s.entry.run_id})")
    return problems


def _against_store(s: StoredEntry, rows: Sequence[SampleVerdict], text: str | None) -> str | None:
    entry = s.entry
    if text is not None:
        try:
            kept = HistoryEntry.model_validate_json(text)
        except ValueError:
            kept = None
        if kept is not None:
            found = first_difference(
                _without_chain(entry.model_dump(mode="json")),
                _without_chain(kept.model_dump(mode="json")),
                "entry",
            )
            if found is not None:
                return f"{found.split(':', 1)[0]} differs from the store's copy of the entry"
    if not rows:
        return None
    stored = {(r.case_id, r.sample): r for r in rows}
    claimed = {(c.case_id, c.sample): c for c in entry.scorecard.cases}
    for key in sorted(set(stored) | set(claimed)):
        row, case = stored.get(key), claimed.get(key)
        name = key[0] if key[1] == 0 else f"{key[0]}@{key[1]}"
        if row is None or case is None:
            return f"case {name} is in the {'entry' if row is None else 'store'} only"
        if row.outcome != case.outcome.kind or row.hard_gate_failed != case.hard_gate_failed:
            return (
                f"case {name} is {case.outcome.kind} in the entry but {row.outcome} in the "
                "store's sample rows"
            )
    return None


def evidence_problems(
    history: Sequence[StoredEntry],
    store: Store | None,
    check: Iterable[StoredEntry] = (),
    *,
    suite: str | None = None,
    root: Path | None = None,
) -> tuple[list[str], list[str]]:
    """What makes a suite's history doubtful: (problems with the chain, entries that disagree
    with the store). ``check`` names the entries to compare with the store (all when empty).

    With ``suite`` and ``root`` (the history folder), an entry the store says it filed into
    that folder but the folder no longer holds (deleted, or hidden under another name) is
    reported among the store's problems: the newest entry of a series has no successor whose
    chain would show its deletion, but the store that recorded it does."""
    chain = chain_problems(history)
    if store is None:
        return chain, []
    wanted = list(check) or list(history)
    ids = [s.entry.run_id for s in wanted]
    try:
        rows, texts = store.sample_verdicts(ids), store.history_texts(ids)
        filed = store.filed_runs(suite, root) if suite is not None and root is not None else {}
    except StoreError:
        return chain, []  # a store without the tables, or unreachable: nothing to compare
    present = {s.entry.run_id for s in history}
    oldest = min((s.entry.finished_at for s in history), default=None)
    missing = [
        f"run {run_id} (recorded {at:%Y-%m-%d %H:%M:%S} UTC) was filed in {root} but its "
        "entry file is gone: deleted, moved or renamed"
        for run_id, at in sorted(filed.items(), key=lambda kv: kv[1])
        if run_id not in present and (oldest is None or at > oldest)  # older: pruned
    ]
    return chain, [*missing, *store_problems(wanted, rows, texts)]


def _without_chain(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("previous_sha256", "schema_version")}
