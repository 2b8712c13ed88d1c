"""Gate arithmetic and scorecards.

``judged = samples - transient``; ``failure_rate = (check_failed + error) / judged``. If more than
``max_transient`` of the samples are transient the batch is INCONCLUSIVE (exit 2); else if any
hard gate failed, or the failure rate exceeds ``max_failure_rate``, it FAILS (exit 1); else if no
sample was judged at all it is INCONCLUSIVE (no gate passes on nothing); else it PASSES (exit
0). Comparisons are made on exact fractions of the counts (a threshold is read as the decimal it
is written as), never on rounded floats, and rates are printed with as many digits as it takes
for the display never to contradict the verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction

from agentic_eval.core.messages import trusted
from agentic_eval.core.results import unapproved_attempts, unapproved_executions
from agentic_eval.core.scorecard import (
    CaseResult,
    GateSummary,
    GateVerdict,
    ProducedBy,
    Scorecard,
    Totals,
    count,
)
from agentic_eval.core.transcript import Transcript

EXIT_CODES: dict[GateVerdict, int] = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 2}


def case_result(t: Transcript) -> CaseResult:
    """A sample's scorecard entry, derived from its transcript alone (a validated model, so its
    parts are not validated again: this runs once per sample)."""
    checks = t.verdict.checks
    events = t.policy_events
    return trusted(
        CaseResult,
        {
            "case_id": t.case_id,
            "sample": t.sample,
            "outcome": t.verdict.outcome,
            "checks": checks,
            "hard_gate_failed": any(c.hard_gate and not c.passed for c in checks),
            "unapproved_attempts": unapproved_attempts(events) if events else 0,
            "unapproved_executions": unapproved_executions(events) if events else 0,
            "turns": len(t.turns),
            "tool_calls": len(t.tool_calls),
            "case_verdict": None,
        },
    )


def exact(threshold: float) -> Fraction:
    """A threshold as the decimal it was written as (0.01 is exactly 1/100)."""
    return Fraction(repr(float(threshold)))


def format_rate(num: int, den: int, threshold: float | None = None) -> str:
    """``num/den`` as a percentage with enough digits to be on the right side of ``threshold``.

    ``format_rate(1, 99, 0.01)`` is ``1.01%``; ``format_rate(2000, 199999, 0.01)`` is
    ``1.00001%``, never ``1.0%``.
    """
    if den == 0:
        return "0.0%"
    rate = Fraction(num, den) * 100
    limit = None if threshold is None else exact(threshold) * 100
    text = f"{float(rate):.1f}"
    for digits in range(1, 20):
        text = f"{float(rate):.{digits}f}"
        shown = Fraction(text)
        if limit is None or (
            (shown > limit) == (rate > limit) and (shown == limit) == (rate == limit)
        ):
            break
    return f"{text}%"


def percent(threshold: float) -> str:
    """A threshold as the percentage it was written as (0.01 -> ``1%``, 0.055 -> ``5.5%``)."""
    value = Decimal(repr(float(threshold))) * 100
    text = format(value.normalize(), "f")
    return f"{text}%"


def gate_summary(
    samples: int,
    check_failed: int,
    error: int,
    transient: int,
    max_failure_rate: float,
    max_transient: float,
    hard_gates_failed: Mapping[str, int] | None = None,
    hard_gate_failures: int | None = None,
) -> GateSummary:
    """Apply the batch gate to outcome counts.

    Args:
        samples: Samples in the batch.
        check_failed: Samples that ended check_failed.
        error: Samples that ended error.
        transient: Samples that ended transient (excluded from the rate).
        max_failure_rate: Threshold the failure rate may not exceed.
        max_transient: Transient share above which the batch is inconclusive.
        hard_gates_failed: Samples failing each hard gate, by gate name.
        hard_gate_failures: Samples with any failed hard gate (default: the largest per-gate
            count, or 0).
    """
    gates = dict(sorted((hard_gates_failed or {}).items()))
    hard = hard_gate_failures if hard_gate_failures is not None else max(gates.values(), default=0)
    judged = samples - transient
    failures = check_failed + error
    rate = Fraction(failures, judged) if judged else Fraction(0)
    transient_share = Fraction(transient, samples) if samples else Fraction(0)
    verdict: GateVerdict
    if samples == 0:
        verdict, reason = "INCONCLUSIVE", "no samples"
    elif transient_share > exact(max_transient):
        verdict = "INCONCLUSIVE"
        reason = (
            f"{transient}/{samples} samples transient "
            f"({format_rate(transient, samples, max_transient)} > {percent(max_transient)})"
        )
    elif hard:
        verdict = "FAIL"
        named = ", ".join(f"{name} in {n}" for name, n in gates.items()) or f"{hard} samples"
        reason = f"hard gate failed: {named}"
    elif judged == 0:  # every sample transient, and the threshold let that through
        verdict, reason = "INCONCLUSIVE", f"no sample judged ({transient} transient)"
    elif rate > exact(max_failure_rate):
        verdict = "FAIL"
        reason = (
            f"failure rate {failures}/{judged} = "
            f"{format_rate(failures, judged, max_failure_rate)} > {percent(max_failure_rate)}"
        )
    else:
        verdict = "PASS"
        reason = (
            f"failure rate {failures}/{judged} = "
            f"{format_rate(failures, judged, max_failure_rate)} <= {percent(max_failure_rate)}"
        )
    return GateSummary(
        judged=judged,
        failures=failures,
        hard_gate_failures=hard,
        failure_rate=float(rate),
        max_failure_rate=max_failure_rate,
        transient_rate=float(transient_share),
        max_transient=max_transient,
        hard_gates_failed=gates,
        verdict=verdict,
        reason=reason,
    )


def _tally(cases: tuple[CaseResult, ...]) -> tuple[int, int, int, Counter[str], int]:
    """check_failed, error and transient counts, samples failing each hard gate, and samples
    failing any."""
    per_gate: Counter[str] = Counter()
    for c in cases:
        per_gate.update({k.name for k in c.checks if k.hard_gate and not k.passed})
    hard = sum(1 for c in cases if c.hard_gate_failed)
    kinds = (count("check_failed", cases), count("error", cases), count("transient", cases))
    return (*kinds, per_gate, hard)


def build_scorecard(
    domain: str,
    produced_by: ProducedBy,
    results: Iterable[CaseResult],
    *,
    max_failure_rate: float,
    max_transient: float,
    external_fixtures: str | None = None,
) -> Scorecard:
    """The scorecard of a set of sample results (sorted by case id, then sample).

    ``external_fixtures`` marks a scorecard derived from real fixtures. The totals count every
    sample; the gate judges all but the corpus samples a human rejected."""
    cases = tuple(sorted(results, key=lambda r: (r.case_id, r.sample)))
    check_failed, error, transient, per_gate, hard = _tally(cases)
    totals = Totals(
        cases=len(cases),
        passed=count("passed", cases),
        check_failed=check_failed,
        error=error,
        transient=transient,
        hard_gate_failures=hard,
        unapproved_attempts=sum(c.unapproved_attempts for c in cases),
        unapproved_executions=sum(c.unapproved_executions for c in cases),
    )
    gated = cases
    if any(not c.judged for c in cases):  # a corpus run: a case a human rejected is not judged
        gated = tuple(c for c in cases if c.judged)
        check_failed, error, transient, per_gate, hard = _tally(gated)
    gate = gate_summary(
        len(gated),
        check_failed,
        error,
        transient,
        max_failure_rate,
        max_transient,
        hard_gates_failed=per_gate,
        hard_gate_failures=hard,
    )
    return Scorecard(
        domain=domain,
        produced_by=produced_by,
        cases=cases,
        totals=totals,
        gate=gate,
        external_fixtures=external_fixtures,
    )
