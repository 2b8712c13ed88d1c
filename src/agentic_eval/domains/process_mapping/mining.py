"""Process mining over an event log: the step order, and each step's role and system.

The rule, as the instructions state it: sort each log case's events by timestamp (ties by event
id); a step's position in a log case is the 1-based index of its first event in that sorted list;
steps are ordered by their mean position over the log cases in which they occur (compared as
exact fractions; ties by step id). A step's role is the role on most of its events in the whole
log (ties: the smallest role id); its system likewise.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from fractions import Fraction

from agentic_eval.domains.process_mapping.fixtures import LogEvent, ProcessFixtures

__all__ = [
    "log_cases",
    "majority",
    "mean_positions",
    "step_role",
    "step_system",
    "workflow_order",
]


def log_cases(events: Iterable[LogEvent]) -> dict[str, list[LogEvent]]:
    """Events grouped by log case, each case sorted by timestamp then event id."""
    cases: dict[str, list[LogEvent]] = defaultdict(list)
    for e in events:
        cases[e.case_id].append(e)
    return {
        case_id: sorted(found, key=lambda e: (e.timestamp, e.event_id))
        for case_id, found in sorted(cases.items())
    }


def mean_positions(fx: ProcessFixtures, process_id: str) -> dict[str, Fraction]:
    """Each step's mean 1-based position of first occurrence over the log cases it occurs in."""
    step_of = {s.activity: s.step_id for s in fx.steps_of(process_id)}
    positions: dict[str, list[int]] = defaultdict(list)
    for events in log_cases(fx.log_of(process_id)).values():
        first: dict[str, int] = {}
        for index, e in enumerate(events, start=1):
            first.setdefault(step_of[e.activity], index)
        for step_id, index in first.items():
            positions[step_id].append(index)
    return {s: Fraction(sum(p), len(p)) for s, p in positions.items()}


def workflow_order(fx: ProcessFixtures, process_id: str) -> list[str]:
    """The process's step ids in workflow order (mean position, ties by step id)."""
    means = mean_positions(fx, process_id)
    return sorted(means, key=lambda s: (means[s], s))


def majority(values: Iterable[str]) -> str:
    """The most frequent value; ties go to the smallest.

    Raises:
        ValueError: When there are no values.
    """
    counts = Counter(values)
    if not counts:
        raise ValueError("majority of nothing")
    return min(counts, key=lambda v: (-counts[v], v))


def _events_of(fx: ProcessFixtures, step_id: str) -> list[LogEvent]:
    step = fx.step(step_id)
    return [e for e in fx.log_of(step.process_id) if e.activity == step.activity]


def step_role(fx: ProcessFixtures, step_id: str) -> str:
    """The role that performed most of the step's events (ties: the smallest role id)."""
    return majority(e.role_id for e in _events_of(fx, step_id))


def step_system(fx: ProcessFixtures, step_id: str) -> str:
    """The system most of the step's events were performed in (ties: the smallest id)."""
    return majority(e.system_id for e in _events_of(fx, step_id))
