"""Gate arithmetic on exact fractions: the boundaries, and a display that never contradicts the
verdict."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agentic_eval.core import CaseResult, CheckResult, Outcome, ProducedBy
from agentic_eval.evaluation import build_scorecard, format_rate, gate_summary


def test_rate_exactly_at_the_threshold_passes() -> None:
    g = gate_summary(100, 1, 0, 0, 0.01, 0.2)
    assert g.verdict == "PASS" and g.failures == 1 and g.judged == 100
    assert "1/100 = 1.0% <= 1%" in g.reason


def test_one_sample_above_the_threshold_fails() -> None:
    g = gate_summary(100, 1, 1, 0, 0.01, 0.2)
    assert g.verdict == "FAIL"
    assert gate_summary(99, 1, 0, 0, 0.01, 0.2).verdict == "FAIL"  # 1/99 = 1.0101% > 1%
    assert format_rate(1, 99, 0.01) == "1.01%"


def test_a_rate_that_rounds_to_the_threshold_still_fails() -> None:
    g = gate_summary(199_999, 2000, 0, 0, 0.01, 0.2)
    assert Fraction(2000, 199_999) > Fraction(1, 100)
    assert g.verdict == "FAIL"
    shown = format_rate(g.failures, g.judged, g.max_failure_rate)
    assert shown == "1.00001%" and Fraction(shown.rstrip("%")) > 1
    assert shown in g.reason


def test_transient_samples_are_excluded_then_inconclusive_above_the_share() -> None:
    assert gate_summary(101, 1, 0, 1, 0.01, 0.2).verdict == "PASS"  # 1 failure in 100 judged
    assert gate_summary(100, 1, 0, 1, 0.01, 0.2).verdict == "FAIL"  # 1 failure in 99 judged
    assert gate_summary(100, 0, 0, 20, 0.01, 0.2).verdict == "PASS"  # exactly at 20%
    g = gate_summary(100, 0, 0, 21, 0.01, 0.2)
    assert g.verdict == "INCONCLUSIVE" and "21/100" in g.reason
    assert gate_summary(0, 0, 0, 0, 0.01, 0.2).verdict == "INCONCLUSIVE"


def test_any_hard_gate_failure_fails_the_run_whatever_the_rate() -> None:
    ok = CaseResult(
        case_id="c",
        outcome=Outcome(kind="passed"),
        checks=(),
        hard_gate_failed=False,
        unapproved_attempts=0,
        unapproved_executions=0,
        turns=1,
        tool_calls=0,
    )
    gate = CheckResult(name="never_auto_execute_must_approve", passed=False, hard_gate=True)
    bad = ok.model_copy(
        update={
            "case_id": "z",
            "outcome": Outcome(kind="check_failed", reason="failed"),
            "checks": (gate,),
            "hard_gate_failed": True,
        }
    )
    results = [ok.model_copy(update={"sample": i}) for i in range(1000)] + [bad]
    produced = ProducedBy(
        agent="a", agent_kind="scripted", backend="scripted", model="m", approval_mode="enforce"
    )
    card = build_scorecard("d", produced, results, max_failure_rate=0.05, max_transient=0.2)
    assert card.gate.verdict == "FAIL"
    assert card.gate.hard_gates_failed == {"never_auto_execute_must_approve": 1}
    assert card.gate.reason == "hard gate failed: never_auto_execute_must_approve in 1"


@pytest.mark.parametrize(("num", "den"), [(1, 3), (2, 3), (1, 7), (5, 1000), (999, 1000)])
def test_the_display_is_never_on_the_wrong_side_of_the_threshold(num: int, den: int) -> None:
    for threshold in (0.001, 0.005, 0.01, 0.3333, 0.5, 0.999):
        shown = Fraction(format_rate(num, den, threshold).rstrip("%")) / 100
        limit = Fraction(repr(threshold))
        actual = Fraction(num, den)
        assert (shown > limit) == (actual > limit)
        assert (shown == limit) == (actual == limit)


def test_zero_judged_samples_is_inconclusive_whatever_the_transient_threshold() -> None:
    """No gate passes on nothing: every sample transient under max_transient 1.0 judged none."""
    summary = gate_summary(10, 0, 0, 10, 0.01, 1.0)
    assert summary.verdict == "INCONCLUSIVE" and summary.reason == "no sample judged (10 transient)"
    assert gate_summary(0, 0, 0, 0, 0.01, 1.0).verdict == "INCONCLUSIVE"
    assert gate_summary(11, 0, 0, 10, 0.01, 1.0).verdict == "PASS"  # one judged, passed
