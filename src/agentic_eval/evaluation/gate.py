"""Gate arithmetic and scorecards.

``judged = samples - transient``; ``failure_rate = (check_failed + error) / judged``. If more than
``max_transient`` of the samples are transient the batch is INCONCLUSIVE (exit 2); else if the
failure rate exceeds ``max_failure_rate`` it FAILS (exit 1); else it PASSES (exit 0).
"""

from __future__ import annotations

from collections.abc import Iterable

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
    """A case's scorecard entry, derived from its transcript alone."""
    return CaseResult(
        case_id=t.case_id,
        outcome=t.verdict.outcome,
        checks=t.verdict.checks,
        hard_gate_failed=any(c.hard_gate and not c.passed for c in t.verdict.checks),
        unapproved_attempts=unapproved_attempts(t.policy_events),
        unapproved_executions=unapproved_executions(t.policy_events),
        turns=len(t.turns),
        tool_calls=len(t.tool_calls),
    )


def gate_summary(
    samples: int,
    check_failed: int,
    error: int,
    transient: int,
    max_failure_rate: float,
    max_transient: float,
) -> GateSummary:
    """Apply the batch gate to outcome counts."""
    judged = samples - transient
    failure_rate = round((check_failed + error) / judged, 6) if judged else 0.0
    transient_rate = round(transient / samples, 6) if samples else 0.0
    verdict: GateVerdict
    if samples == 0 or transient_rate > max_transient:
        verdict = "INCONCLUSIVE"
    elif failure_rate > max_failure_rate:
        verdict = "FAIL"
    else:
        verdict = "PASS"
    return GateSummary(
        judged=judged,
        failure_rate=failure_rate,
        max_failure_rate=max_failure_rate,
        transient_rate=transient_rate,
        max_transient=max_transient,
        verdict=verdict,
    )


def build_scorecard(
    domain: str,
    produced_by: ProducedBy,
    results: Iterable[CaseResult],
    *,
    max_failure_rate: float,
    max_transient: float,
) -> Scorecard:
    """The scorecard of a set of case results (sorted by case id)."""
    cases = tuple(sorted(results, key=lambda r: r.case_id))
    check_failed, error, transient = (
        count("check_failed", cases),
        count("error", cases),
        count("transient", cases),
    )
    totals = Totals(
        cases=len(cases),
        passed=count("passed", cases),
        check_failed=check_failed,
        error=error,
        transient=transient,
        hard_gate_failures=sum(1 for c in cases if c.hard_gate_failed),
        unapproved_attempts=sum(c.unapproved_attempts for c in cases),
        unapproved_executions=sum(c.unapproved_executions for c in cases),
    )
    gate = gate_summary(len(cases), check_failed, error, transient, max_failure_rate, max_transient)
    return Scorecard(domain=domain, produced_by=produced_by, cases=cases, totals=totals, gate=gate)
