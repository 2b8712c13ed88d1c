"""The statistics beyond the gate's point estimate (issue 18): the one-sided Clopper-Pearson upper
bound against a reference table, the clean samples that would show a threshold holds, the
``upper-bound`` gate mode, and pass^k over epochs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import pytest

from agentic_eval.core import CaseResult, Outcome
from agentic_eval.core.results import OutcomeKind
from agentic_eval.evaluation.confidence import (
    GATE_MODES,
    apply_gate,
    bound_exceeds,
    bound_lines,
    clean_samples_needed,
    confidence_lines,
    format_bound,
    pass_hat_k,
    pass_hat_lines,
    upper_bound,
    upper_bound_gate,
)
from agentic_eval.evaluation.gate import gate_summary

# (failures, judged, confidence, bound): the p solving P(X <= failures | judged, p) = 1 -
# confidence, from mpmath at 60 digits (bisection on the regularized incomplete beta
# I_p(f+1, n-f) = confidence), to 13 significant digits. Published cross-checks: 1 in 10 gives
# 0.3942, 1 in 100 gives 0.0466, 0 in 100 gives 0.0295 (the "rule of three" region).
REFERENCE = [
    (0, 1, 0.95, "0.95"),
    (0, 10, 0.95, "0.2588655508931"),
    (0, 100, 0.95, "0.02951304960704"),
    (0, 299, 0.95, "0.009969146792899"),
    (1, 10, 0.95, "0.3941633024365"),
    (1, 100, 0.95, "0.04655981145354"),
    (2, 100, 0.95, "0.06161920039604"),
    (3, 50, 0.95, "0.1478371763642"),
    (5, 20, 0.95, "0.4555824040017"),
    (10, 100, 0.95, "0.1637176232758"),
    (10, 1000, 0.95, "0.01690317512056"),
    (50, 1000, 0.95, "0.06286340351238"),
    (9, 10, 0.95, "0.9948838031082"),
    (19, 20, 0.95, "0.9974386212235"),
    (50, 100, 0.95, "0.5863782853691"),
    (999, 1000, 0.95, "0.9999487080211"),
    (0, 100, 0.99, "0.04500741397856"),
    (1, 100, 0.99, "0.06454273204858"),
    (3, 30, 0.99, "0.297618678146"),
    (2, 40, 0.9, "0.1276281429368"),
]

# Past the exact binomial coefficients (more than 1000 failures) and at large n, where the exact
# check below would take minutes: mpmath at 30 digits, bisection on the lower tail summed from f.
LARGE = [
    (3, 10**7, "7.753654685021902e-7"),
    (1500, 100_000, "0.01564776783767953"),
    (5000, 10**6, "0.005117584051640861"),
    (50_000, 100_000, "0.5026057177397165"),
    (500_000, 10**6, "0.5008229260505229"),
]


def _cdf_above(f: int, n: int, p: Fraction, alpha: Fraction) -> bool:
    """Whether P(X <= f | n, p) > alpha, on exact integers (independent of the module)."""
    a, b = p.numerator, p.denominator
    terms = range(f + 1) if f <= n // 2 else range(f + 1, n + 1)
    s = sum(math.comb(n, i) * a**i * (b - a) ** (n - i) for i in terms)
    below = s if f <= n // 2 else b**n - s
    return Fraction(below, b**n) > alpha


def _alpha(confidence: float) -> Fraction:
    return 1 - Fraction(repr(confidence))


@pytest.mark.parametrize(("f", "n", "confidence", "ref"), REFERENCE)
def test_the_bound_matches_the_reference_table(f: int, n: int, confidence: float, ref: str) -> None:
    r = Fraction(ref)
    lo, hi = r * (1 - Fraction(1, 10**11)), r * (1 + Fraction(1, 10**11))
    # the table itself, checked exactly: the CDF crosses alpha between lo and hi
    alpha = _alpha(confidence)
    assert _cdf_above(f, n, lo, alpha) and not _cdf_above(f, n, hi, alpha)
    assert upper_bound(f, n, confidence) == pytest.approx(float(r), rel=1e-11)
    assert bound_exceeds(f, n, float(lo), confidence)
    assert not bound_exceeds(f, n, float(hi), confidence)


@pytest.mark.parametrize(("f", "n", "ref"), LARGE)
def test_the_bound_at_large_counts(f: int, n: int, ref: str) -> None:
    assert upper_bound(f, n) == pytest.approx(float(ref), rel=1e-12)
    assert bound_exceeds(f, n, float(ref) * (1 - 1e-9))
    assert not bound_exceeds(f, n, float(ref) * (1 + 1e-9))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 100, 1000, 100_000, 10**6])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_the_closed_forms_with_no_failure_and_with_one_success(n: int, confidence: float) -> None:
    alpha = 1 - confidence
    assert upper_bound(0, n, confidence) == pytest.approx(1 - alpha ** (1 / n), rel=1e-12)
    # P(X <= n-1) = 1 - p^n = alpha
    assert upper_bound(n - 1, n, confidence) == pytest.approx((1 - alpha) ** (1 / n), rel=1e-12)


def test_the_issue_example_0_failures_in_100_then_299_in_all() -> None:
    assert format_bound(0, 100, 0.01) == "2.95%"
    in_all = math.ceil(math.log(0.05) / math.log(0.99))  # (1 - t)^n <= alpha
    assert in_all == 299
    assert clean_samples_needed(0, 100, 0.01) == in_all - 100 == 199
    assert clean_samples_needed(0, 0, 0.01) == 299
    assert clean_samples_needed(0, 299, 0.01) == 0
    assert bound_exceeds(0, 298, 0.01) and not bound_exceeds(0, 299, 0.01)


@pytest.mark.parametrize(
    ("f", "n", "t"),
    [(0, 10, 0.05), (1, 10, 0.05), (2, 20, 0.1), (1, 100, 0.02), (3, 50, 0.05), (2, 2, 0.5)],
    ids=str,
)
def test_clean_samples_needed_is_the_least_number(f: int, n: int, t: float) -> None:
    more = clean_samples_needed(f, n, t)
    assert more is not None and more > 0
    alpha, limit = _alpha(0.95), Fraction(repr(t))
    assert not _cdf_above(f, n + more, limit, alpha)  # bound <= t with `more` more
    assert _cdf_above(f, n + more - 1, limit, alpha)  # and not with one fewer


def test_edges_nothing_judged_all_failed_threshold_0_and_1() -> None:
    assert upper_bound(0, 0) == 1.0 and upper_bound(7, 7) == 1.0
    assert format_bound(7, 7, 0.01) == "100%"
    assert bound_exceeds(0, 0, 0.99) and bound_exceeds(7, 7, 0.999)
    assert not bound_exceeds(7, 7, 1.0) and not bound_exceeds(0, 0, 1.0)
    assert clean_samples_needed(7, 7, 1.0) == 0
    # a threshold of 0 is never shown: the bound stays above 0 whatever the clean samples
    assert bound_exceeds(0, 10**9, 0.0)
    assert clean_samples_needed(0, 100, 0.0) is None
    assert clean_samples_needed(3, 100, 0.0) is None
    for bad in [(1, 0), (-1, 5), (3, -1), (6, 5)]:
        with pytest.raises(ValueError, match="failures <= judged"):
            upper_bound(*bad)
    for confidence in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="confidence"):
            upper_bound(0, 10, confidence)


def test_a_bound_exactly_at_the_threshold_does_not_exceed_it() -> None:
    # 0 failures in 1 at 95%: 1 - p = 0.05, so the bound is exactly 95% (the float is not)
    assert not bound_exceeds(0, 1, 0.95)
    assert bound_exceeds(0, 1, 0.9499999999)
    assert format_bound(0, 1, 0.95) == "95.00%"
    # 1 failure in 2 at 81%: 1 - p^2 = 0.19, so exactly 90%
    assert not bound_exceeds(1, 2, 0.9, confidence=0.81)
    assert bound_exceeds(1, 2, 0.8999999999, confidence=0.81)
    assert clean_samples_needed(0, 1, 0.95) == 0


def test_the_bound_moves_the_way_it_must() -> None:
    for n in (1, 5, 20, 100, 1000):
        by_failures = [upper_bound(f, n) for f in range(min(n, 30) + 1)]
        assert by_failures == sorted(by_failures) and len(set(by_failures)) == len(by_failures)
        assert all(b >= f / n for f, b in enumerate(by_failures))
    for f in (0, 1, 4):
        by_samples = [upper_bound(f, n) for n in range(max(f, 1), 400)]
        assert by_samples == sorted(by_samples, reverse=True)
    by_confidence = [upper_bound(2, 50, c) for c in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)]
    assert by_confidence == sorted(by_confidence)


@pytest.mark.parametrize(
    ("f", "n", "t"),
    [(0, 298, 0.01), (0, 299, 0.01), (1, 99, 0.05), (3, 1000, 0.0075), (0, 10**6, 3e-6)],
    ids=str,
)
def test_the_shown_bound_never_contradicts_the_decision(f: int, n: int, t: float) -> None:
    shown = format_bound(f, n, t)
    value = Fraction(shown.removesuffix("%")) / 100
    assert (value > Fraction(repr(t))) == bound_exceeds(f, n, t)
    assert value != Fraction(repr(t))  # none of these is a tie
    assert float(value) == pytest.approx(upper_bound(f, n), rel=5e-3)


def _results(epochs: Mapping[str, Sequence[OutcomeKind]]) -> list[CaseResult]:
    return [
        CaseResult(
            case_id=case,
            sample=epoch,
            outcome=Outcome(kind=kind),
            checks=(),
            hard_gate_failed=False,
            unapproved_attempts=0,
            unapproved_executions=0,
            turns=1,
            tool_calls=0,
        )
        for case, kinds in epochs.items()
        for epoch, kind in enumerate(kinds)
    ]


def _tau_bench(passes: list[tuple[int, int]], k: int) -> Fraction:
    return sum((Fraction(math.comb(c, k), math.comb(n, k)) for c, n in passes), Fraction(0)) / len(
        passes
    )


def test_pass_hat_k_on_a_hand_checked_batch() -> None:
    ok, bad = "passed", "check_failed"
    epochs: dict[str, list[OutcomeKind]] = {
        "c": [ok, ok, ok],
        "a": [ok, bad, ok],
        "b": [bad, "error", ok],
        "d": [bad, bad, "error"],
    }
    p = pass_hat_k(_results(epochs))
    assert [c.case_id for c in p.cases] == ["a", "b", "c", "d"]
    assert p.k == 3 and p.flaky == ("a", "b") and p.several_epochs
    assert [c.all_passed for c in p.cases] == [False, False, True, False]
    passes = [(2, 3), (1, 3), (3, 3), (0, 3)]
    assert p.curve == tuple(_tau_bench(passes, k) for k in (1, 2, 3))
    assert p.pass_hat() == Fraction(1, 4)  # only c passed every epoch
    assert p.pass_hat(2) == (Fraction(1, 3) + 0 + 1 + 0) / 4  # a: C(2,2)/C(3,2), c: 1


def test_transient_epochs_are_left_out_of_a_case() -> None:
    epochs: dict[str, list[OutcomeKind]] = {
        "a": ["passed", "transient", "passed"],  # 2 judged, both passed: not flaky
        "b": ["passed", "check_failed", "transient"],
        "z": ["transient", "transient", "transient"],
    }
    p = pass_hat_k(_results(epochs))
    a, b, z = p.cases
    assert (a.judged, a.passed, a.transient) == (2, 2, 1) and a.all_passed and not a.flaky
    assert (b.judged, b.passed) == (2, 1) and b.flaky
    assert z.judged == 0 and not z.all_passed and not z.flaky
    assert p.unjudged == ("z",) and len(p.judged_cases) == 2 and p.k == 2
    assert p.pass_hat() == _tau_bench([(2, 2), (1, 2)], 2) == Fraction(1, 2)
    line = pass_hat_lines(p)[0]
    assert line == "pass^k (k=2): 0.50 over 2 cases (1 with every epoch transient left out); " + (
        "flaky: b"
    )


def test_a_sample_counted_twice_is_refused() -> None:
    twice = _results({"a": ["passed"]}) * 2
    with pytest.raises(ValueError, match="case a epoch 0 appears twice"):
        pass_hat_k(twice)
    with pytest.raises(ValueError, match=r"k=4 outside 1\.\.3"):
        pass_hat_k(_results({"a": ("passed", "passed", "passed")})).cases[0].pass_hat(4)


def test_the_pass_hat_k_lines() -> None:
    ok: OutcomeKind = "passed"
    bad: OutcomeKind = "check_failed"
    epochs: dict[str, list[OutcomeKind]] = {f"case-{i}": [ok, ok, ok] for i in range(8)}
    epochs["b"] = [bad, ok, bad]
    epochs["a"] = [ok, bad, ok]
    p = pass_hat_k(_results(epochs))
    curve = [_tau_bench([(3, 3)] * 8 + [(2, 3), (1, 3)], k) for k in (1, 2, 3)]
    assert pass_hat_lines(p) == [
        f"pass^k (k=3): {float(curve[2]):.2f} over 10 cases; flaky: a, b",
        "pass^1..3: " + ", ".join(f"{float(v):.2f}" for v in curve),
    ]
    assert pass_hat_lines(p)[0] == "pass^k (k=3): 0.80 over 10 cases; flaky: a, b"
    # one epoch per case: nothing to say about pass^k
    assert pass_hat_lines(pass_hat_k(_results({"a": [ok], "b": [bad]}))) == []
    # a share just short of 1 is never shown as 1.00
    near: dict[str, list[OutcomeKind]] = {f"c{i}": [ok, ok] for i in range(999)}
    near["x"] = [ok, bad]
    first = pass_hat_lines(pass_hat_k(_results(near)))[0]
    assert first.startswith("pass^k (k=2): 0.999 over 1000 cases; flaky: x")
    many: dict[str, list[OutcomeKind]] = {f"f{i:02d}": [ok, bad] for i in range(12)}
    assert pass_hat_lines(pass_hat_k(_results(many)))[0].endswith(
        "flaky: f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, ... (12 in all)"
    )


def test_the_bound_lines() -> None:
    assert bound_lines(gate_summary(100, 0, 0, 0, 0.01, 0.2)) == [
        "upper bound (95%, Clopper-Pearson): 2.95% (threshold 1%)",
        "to show <= 1%: 199 more clean samples (299 in all)",
    ]
    # bound at or under the threshold, or the rate itself above it: no second line
    assert bound_lines(gate_summary(299, 0, 0, 0, 0.01, 0.2)) == [
        "upper bound (95%, Clopper-Pearson): 0.997% (threshold 1%)"
    ]
    assert len(bound_lines(gate_summary(100, 2, 0, 0, 0.01, 0.2))) == 1
    one_more = clean_samples_needed(0, 298, 0.01)
    assert one_more == 1
    assert bound_lines(gate_summary(298, 0, 0, 0, 0.01, 0.2))[1] == (
        "to show <= 1%: 1 more clean sample (299 in all)"
    )
    assert bound_lines(gate_summary(50, 0, 0, 0, 0.0, 0.2))[1] == (
        "to show <= 0%: no number of clean samples suffices"
    )
    assert bound_lines(gate_summary(10, 0, 0, 10, 0.01, 1.0)) == [
        "upper bound (95%, Clopper-Pearson): none, no sample judged"
    ]
    assert bound_lines(gate_summary(100, 0, 0, 0, 0.01, 0.2), 0.99)[0] == (
        f"upper bound (99%, Clopper-Pearson): {format_bound(0, 100, 0.01, 0.99)} (threshold 1%)"
    )
    summary = gate_summary(6, 1, 0, 0, 0.2, 0.2)  # 1/6 <= 20%, its bound is not
    results = _results({"a": ("passed", "passed", "passed"), "b": ("passed", "error", "passed")})
    assert confidence_lines(summary, results) == bound_lines(summary) + pass_hat_lines(
        pass_hat_k(results)
    )
    assert len(confidence_lines(summary, results)) == 4


def test_the_upper_bound_gate_fails_what_the_rate_passes() -> None:
    rate = apply_gate("rate", 100, 0, 0, 0, 0.01, 0.2)
    bound = apply_gate("upper-bound", 100, 0, 0, 0, 0.01, 0.2)
    assert rate == gate_summary(100, 0, 0, 0, 0.01, 0.2) and rate.verdict == "PASS"
    assert bound.verdict == "FAIL"
    assert bound.reason == "failure rate 0/100 = 0.0% <= 1%, but its 95% upper bound 2.95% > 1%"
    assert bound.model_dump(exclude={"verdict", "reason"}) == rate.model_dump(
        exclude={"verdict", "reason"}
    )
    passed = apply_gate("upper-bound", 299, 0, 0, 0, 0.01, 0.2)
    assert passed.verdict == "PASS"
    assert passed.reason == "failure rate 0/299 = 0.0% <= 1%, and its 95% upper bound 0.997% <= 1%"
    assert apply_gate("upper-bound", 1, 0, 0, 0, 0.95, 0.2).verdict == "PASS"  # exactly at 95%
    assert apply_gate("upper-bound", 300, 1, 0, 0, 0.01, 0.2).verdict == "FAIL"  # 1/300: 1.57%


@pytest.mark.parametrize(
    "counts",
    [
        (100, 0, 0, 21, 0.01, 0.2),  # transient share above the limit
        (0, 0, 0, 0, 0.01, 0.2),  # no samples
        (100, 2, 0, 0, 0.01, 0.2),  # the rate itself above the threshold
    ],
    ids=["transient", "empty", "rate-fails"],
)
def test_the_upper_bound_gate_leaves_other_verdicts_alone(
    counts: tuple[int, int, int, int, float, float],
) -> None:
    assert apply_gate("upper-bound", *counts) == gate_summary(*counts)
    assert apply_gate("rate", *counts) == gate_summary(*counts)


def test_the_upper_bound_gate_keeps_hard_gates_and_refuses_nothing_judged() -> None:
    hard = apply_gate("upper-bound", 1000, 0, 0, 0, 0.01, 0.2, hard_gates_failed={"g": 1})
    assert hard == gate_summary(1000, 0, 0, 0, 0.01, 0.2, hard_gates_failed={"g": 1})
    assert hard.verdict == "FAIL" and "hard gate failed" in hard.reason
    # every sample transient under a max_transient of 1: neither gate passes on 0/0
    assert gate_summary(10, 0, 0, 10, 0.01, 1.0).verdict == "INCONCLUSIVE"
    nothing = upper_bound_gate(gate_summary(10, 0, 0, 10, 0.01, 1.0))
    assert nothing.verdict == "INCONCLUSIVE" and "no sample judged" in nothing.reason
    assert GATE_MODES == ("rate", "upper-bound")
    with pytest.raises(ValueError, match="unknown gate mode 'bound'"):
        apply_gate("bound", 10, 0, 0, 0, 0.01, 0.2)  # type: ignore[arg-type]
