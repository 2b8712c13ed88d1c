"""Series: runs of one suite by one agent, in one approval mode, produced the same way.

A report compares like with like: the newest run of a series against the run before it in the
same series (or against that series' baseline), never one agent against another because they
happen to be the newest two runs of a suite. :func:`pick_series` decides, for one suite, which
runs each series' report is about.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from agentic_eval.history.entry import SeriesKey, series_key
from agentic_eval.history.files import HistoryError, StoredEntry

BASELINE_REF = "baseline"


def series_label(key: SeriesKey) -> str:
    """``agent (approval mode, producer kind)``: what a report heads a series with."""
    _, agent, mode, kind = key
    return f"{agent} ({mode}, {kind})"


def group_series(history: Iterable[StoredEntry]) -> dict[SeriesKey, list[StoredEntry]]:
    """A suite's entries by series, each oldest first (as given), series in order of first run."""
    groups: dict[SeriesKey, list[StoredEntry]] = {}
    for s in history:
        groups.setdefault(series_key(s.entry), []).append(s)
    return groups


@dataclass(frozen=True)
class SeriesPick:
    """The runs one series' report is about."""

    suite: str
    key: SeriesKey
    history: list[StoredEntry]
    """The series' runs, oldest first."""
    head: StoredEntry | None
    base: StoredEntry | None
    note: str
    """Why there is no base, when there is none."""
    baseline: str | None
    """The series' baseline run id, if it has one."""

    @property
    def label(self) -> str:
        """See :func:`series_label`."""
        return series_label(self.key)


def _before(history: list[StoredEntry], head: StoredEntry) -> StoredEntry | None:
    key = (head.entry.started_at, head.entry.run_id)
    older = [s for s in history if (s.entry.started_at, s.entry.run_id) < key]
    return older[-1] if older else None


def pick_series(
    suite: str,
    history: list[StoredEntry],
    baselines: Mapping[SeriesKey, StoredEntry],
    *,
    base_ref: str | None,
    head_ref: str | None,
    named: Mapping[str, StoredEntry],
    agents: Collection[str] = (),
) -> list[SeriesPick]:
    """Which runs each series of ``suite`` is reported on.

    Args:
        suite: The suite.
        history: Its entries, oldest first.
        baselines: Each series' baseline entry (a series without one is absent).
        base_ref: ``--base``: None (the run before the head), ``baseline``, or a run (in
            ``named``).
        head_ref: ``--head``: None (the series' newest run), ``baseline``, or a run (in
            ``named``).
        named: The runs ``--base`` and ``--head`` named, by side.
        agents: Only series of these agents (empty: every series).

    A run named by ``--head`` or ``--base`` narrows the report to its series; naming both
    compares exactly those two runs (whatever their series: the diff says what else differs).
    """
    groups = group_series(history)
    if agents:
        groups = {k: v for k, v in groups.items() if k[1] in agents}
    head_named, base_named = named.get("head"), named.get("base")
    if head_named is not None or base_named is not None:
        anchor = head_named if head_named is not None else base_named
        assert anchor is not None
        key = series_key(anchor.entry)
        groups = {key: groups.get(key, [anchor])}
    picks: list[SeriesPick] = []
    for key, runs in groups.items():
        baseline = baselines.get(key)
        baseline_id = baseline.entry.run_id if baseline is not None else None
        picks.append(_pick(suite, key, runs, baseline, baseline_id, base_ref, head_ref, named))
    return picks


def _pick(
    suite: str,
    key: SeriesKey,
    runs: list[StoredEntry],
    baseline: StoredEntry | None,
    baseline_id: str | None,
    base_ref: str | None,
    head_ref: str | None,
    named: Mapping[str, StoredEntry],
) -> SeriesPick:
    def done(head: StoredEntry | None, base: StoredEntry | None, note: str) -> SeriesPick:
        return SeriesPick(suite, key, runs, head, base, note, baseline_id)

    no_baseline = "no baseline for this series (agentic-eval baseline promote RUN)"
    head = named.get("head")
    if head is None and head_ref == BASELINE_REF:
        if baseline is None:
            return done(None, None, no_baseline)
        head = baseline
    if head is None:
        head = runs[-1] if runs else None
    if head is None:
        return done(None, None, "no runs in this series")
    base = named.get("base")
    if base is None and base_ref == BASELINE_REF:
        if baseline is None:
            return done(head, None, no_baseline)
        base = baseline
    elif base is None:
        base = _before(runs, head)
    if base is None:
        return done(head, None, "only one run in this series: nothing to compare yet")
    if base.entry.run_id == head.entry.run_id:
        return done(head, None, f"base and head are the same run ({head.entry.run_id})")
    return done(head, base, "")


def check_agents(agents: Collection[str], histories: Mapping[str, list[StoredEntry]]) -> None:
    """Every agent asked for has a run in one of the suites.

    Raises:
        HistoryError: Naming the agents that have none, and those that do.
    """
    have = sorted({s.entry.scorecard.produced_by.agent for h in histories.values() for s in h})
    missing = [a for a in agents if a not in have]
    if missing:
        raise HistoryError(
            f"no run of agent {', '.join(map(repr, missing))} in the history "
            f"(agents with runs: {', '.join(have) or 'none'})"
        )
