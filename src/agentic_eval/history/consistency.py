"""An entry that disagrees with itself is refused (checked on every read of a history file).

Each case's outcome agrees with its checks; the totals and the gate are recomputed from the
cases with the gate arithmetic (:func:`agentic_eval.evaluation.gate.build_scorecard`); the gate
the entry says was read from the store, and the thresholds of its run parameters, agree with
that recomputation. Editing every case to ``passed`` while leaving the totals, or flipping only
the verdict, is refused, naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentic_eval.core.scorecard import CaseResult
from agentic_eval.evaluation.gate import build_scorecard
from agentic_eval.history.entry import HistoryEntry


def _case_name(c: CaseResult) -> str:
    return c.case_id if c.sample == 0 else f"{c.case_id}@{c.sample}"


def first_difference(claimed: Any, computed: Any, where: str) -> str | None:
    """The dotted path of the first field where two dumped values differ."""
    if isinstance(claimed, Mapping) and isinstance(computed, Mapping):
        a: Mapping[str, Any] = claimed  # pyright: ignore[reportUnknownVariableType]
        b: Mapping[str, Any] = computed  # pyright: ignore[reportUnknownVariableType]
        for key in sorted(set(a) | set(b)):
            found = first_difference(a.get(key), b.get(key), f"{where}.{key}")
            if found is not None:
                return found
        return None
    if claimed != computed:
        return f"{where}: the entry says {claimed!r}, its cases give {computed!r}"
    return None


def inconsistency(entry: HistoryEntry) -> str | None:
    """The first field where ``entry`` disagrees with itself, in one line; None when none."""
    card = entry.scorecard
    problem = _identity(entry)
    if problem is not None:
        return problem
    for i, c in enumerate(card.cases):
        failed = [k.name for k in c.checks if not k.passed]
        hard = any(k.hard_gate and not k.passed for k in c.checks)
        where = f"scorecard.cases[{i}] ({_case_name(c)})"
        if c.hard_gate_failed != hard:
            return f"{where}.hard_gate_failed is {c.hard_gate_failed} but its checks say {hard}"
        if c.outcome.kind == "passed" and failed:
            return f"{where}.outcome is passed but its checks failed: {', '.join(failed[:5])}"
    gate = card.gate
    computed = build_scorecard(
        card.domain,
        card.produced_by,
        card.cases,
        max_failure_rate=gate.max_failure_rate,
        max_transient=gate.max_transient,
        external_fixtures=card.external_fixtures,
    )
    if tuple(card.cases) != computed.cases:
        return "scorecard.cases: not in case order (sorted by case id, then sample)"
    for name, claimed, actual in (
        ("scorecard.totals", card.totals, computed.totals),
        ("scorecard.gate", card.gate, computed.gate),
        ("gate", entry.gate, computed.gate),
    ):
        found = first_difference(
            claimed.model_dump(mode="json"), actual.model_dump(mode="json"), name
        )
        if found is not None:
            return found
    params = entry.config.parameters
    for field in ("max_failure_rate", "max_transient"):
        if getattr(params, field) != getattr(gate, field):
            return (
                f"config.parameters.{field} is {getattr(params, field)!r} but the gate used "
                f"{getattr(gate, field)!r}"
            )
    return None


def _identity(entry: HistoryEntry) -> str | None:
    """The entry names one suite, one producer, and the cases it fingerprinted: a case renamed,
    moved or dropped after the run no longer matches the fingerprints taken when it ran."""
    card = entry.scorecard
    if card.domain != entry.suite:
        return f"scorecard.domain is {card.domain!r} but the entry's suite is {entry.suite!r}"
    if card.produced_by.agent != entry.producer.agent:
        return (
            f"producer.agent is {entry.producer.agent!r} but the scorecard was produced by "
            f"{card.produced_by.agent!r}"
        )
    ran = {c.case_id for c in card.cases}
    printed = set(entry.fingerprints.case_sha256)
    if ran - printed:
        name = sorted(ran - printed)[0]
        return f"scorecard.cases: case {name!r} is not among the cases fingerprinted when it ran"
    if entry.status == "finished":
        if printed - ran:
            name = sorted(printed - ran)[0]
            return f"scorecard.cases: case {name!r} was run (fingerprinted) but has no result"
        if len(card.cases) != entry.config.planned_samples:
            return (
                f"scorecard.cases holds {len(card.cases)} samples but the finished run planned "
                f"{entry.config.planned_samples}"
            )
    return None
