"""The statistics beyond the gate's point estimate: a confidence bound, and pass^k over epochs.

``upper_bound`` is the one-sided Clopper-Pearson upper bound on the failure rate: the ``p`` at
which ``failures`` or fewer in ``judged`` has probability ``1 - confidence``, i.e. the solution
of ``P(X <= f | n, p) = alpha`` (``1 - alpha**(1/n)`` when ``f = 0``; 1 when nothing is judged
or every sample failed). It is computed by bisection on a binomial CDF summed in floats from
its largest term (no scipy); whether it exceeds a threshold is decided on the CDF at the
threshold instead (``bound > t`` exactly when ``P(X <= f | n, t) > alpha``), in exact integers
whenever the floats are too close to call, so a bound exactly at a threshold is found so. Only
for very large batches, where the integers would take seconds, do floats decide a call that
close (a difference of 1e-9 of alpha, which no batch can resolve).

``pass_hat_k`` reads several epochs per case as tau-bench does: a case passes^k when all k of
its epochs passed, and ``pass^k`` is the mean over cases of ``C(c, k) / C(n, k)``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Literal

from agentic_eval.core.scorecard import CaseResult, GateSummary
from agentic_eval.evaluation.gate import exact, format_rate, gate_summary, percent

GateMode = Literal["rate", "upper-bound"]
"""``rate`` gates on the point estimate (the default gate); ``upper-bound`` on the bound."""
GATE_MODES: tuple[GateMode, ...] = ("rate", "upper-bound")
CONFIDENCE = 0.95
"""The default one-sided confidence level."""

# A float CDF this close to alpha (relatively, plus 1e-14 a sample) is called in integers, if
# they stay small enough for that to take well under a second (2M bits, 1G bit-steps).
_TIE = 1e-9
_EXACT_BITS = 2**21
_EXACT_WORK = 2**30
_EXACT_COMB = 1000
_MAX_DIGITS = 40


def _check(failures: int, judged: int, confidence: float) -> None:
    if judged < 0 or not 0 <= failures <= judged:
        raise ValueError(f"need 0 <= failures <= judged, got {failures} of {judged}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


def _alpha(confidence: float) -> Fraction:
    return 1 - exact(confidence)


@cache
def _log_comb(n: int, k: int) -> float:
    """log C(n, k): exact up to k = 1000; past it (where the integer gets costly: C(10**6,
    5 * 10**5) takes seconds) from Stirling's series, to about 1e-16 of n."""
    k = min(k, n - k)
    if k <= _EXACT_COMB:
        return math.log(math.comb(n, k))
    m = n - k
    # n log n - k log k - m log m, as two positive terms so that nothing cancels
    main = k * math.log(n / k) - m * math.log1p(-k / n)
    rest = _stirling_rest(n) - _stirling_rest(k) - _stirling_rest(m)
    return main - 0.5 * math.log(2 * math.pi * k * m / n) + rest


def _stirling_rest(x: int) -> float:
    """log x! - (x log x - x + log(2 pi x) / 2), for x > 1000 (the next term is below 1e-20)."""
    return 1 / (12 * x) - 1 / (360 * x**3) + 1 / (1260 * x**5)


def _log_term(n: int, i: int, p: float) -> float:
    """log of ``C(n, i) p^i (1-p)^(n-i)`` for 0 < p < 1."""
    return _log_comb(n, i) + i * math.log(p) + (n - i) * math.log1p(-p)


def _tail(n: int, start: int, step: int, p: float) -> float:
    """Sum of the binomial terms from ``start`` moving by ``step`` (-1: down to 0, +1: up to n),
    which decrease from ``start`` on: summed relative to the first, until negligible."""
    odds = p / (1 - p)
    total, rel, i = 1.0, 1.0, start
    end = 0 if step < 0 else n
    while i != end:
        ratio = i / ((n - i + 1) * odds) if step < 0 else (n - i) * odds / (i + 1)
        rel *= ratio
        i += step
        total += rel
        # the ratios shrink further on, so what is left is below rel * ratio / (1 - ratio)
        if ratio < 1 and rel * ratio < total * (1 - ratio) * 1e-17:
            break
    return math.exp(_log_term(n, start, p) + math.log(total))


def binomial_cdf(f: int, n: int, p: float) -> float:
    """``P(X <= f)`` for ``X ~ Binomial(n, p)``, to about 1e-12 relative (float arithmetic).

    Sums whichever tail has terms decreasing away from ``f``: the lower tail below the mode,
    else one minus the upper tail, so no term can overflow and few terms are needed.
    """
    if f < 0:
        return 0.0
    if f >= n or p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    mode = math.floor((n + 1) * p)  # terms grow up to here, then shrink
    if f < mode:
        return min(1.0, _tail(n, f, -1, p))
    return max(0.0, 1.0 - _tail(n, f + 1, +1, p))


def _exact_cdf_sign(f: int, n: int, t: Fraction, alpha: Fraction) -> int:
    """The sign of ``P(X <= f | n, t) - alpha``, in integers: ``sum C(n,i) a^i c^(n-i)`` over
    ``b^n``, for ``0 < t = a/b < 1`` and ``c = b - a``."""
    a, b = t.numerator, t.denominator
    c = b - a
    term = c**n  # i = 0
    total = term
    for i in range(f):
        term = term * (n - i) * a // ((i + 1) * c)  # exact: the next term is an integer
        total += term
    diff = total * alpha.denominator - alpha.numerator * b**n
    return (diff > 0) - (diff < 0)


def _compare(failures: int, judged: int, t: Fraction, confidence: float) -> int:
    """The sign of ``upper_bound(failures, judged) - t`` (see ``bound_exceeds``)."""
    if failures == judged:  # the bound is 1
        return (t < 1) - (t > 1)
    if t >= 1:
        return -1
    if t <= 0:
        return 1
    # the CDF falls as p rises, and equals alpha at the bound: bound > t iff CDF(t) > alpha
    alpha = _alpha(confidence)
    cdf = binomial_cdf(failures, judged, float(t))
    near = abs(cdf - float(alpha)) <= (_TIE + 1e-14 * judged) * float(alpha)
    size = judged * t.denominator.bit_length()  # bits of the integers the exact sum handles
    if near and size <= _EXACT_BITS and (failures + 1) * size <= _EXACT_WORK:
        return _exact_cdf_sign(failures, judged, t, alpha)
    return (cdf > float(alpha)) - (cdf < float(alpha))


def bound_exceeds(
    failures: int, judged: int, threshold: float, confidence: float = CONFIDENCE
) -> bool:
    """Whether the upper bound on ``failures/judged`` lies strictly above ``threshold``.

    Decided on the CDF at the threshold (read as the decimal it is written as, like the gate):
    in floats when clear of ``alpha``, and in exact integers when within about 1e-9 of it, unless
    the batch is so large (``judged`` times the bits of the threshold's denominator past 2**21)
    that the floats decide there too. A bound exactly at the threshold (0 failures in 1 at 95%
    is 95%) does not exceed it.
    """
    _check(failures, judged, confidence)
    return _compare(failures, judged, exact(threshold), confidence) > 0


def upper_bound(failures: int, judged: int, confidence: float = CONFIDENCE) -> float:
    """The one-sided Clopper-Pearson upper confidence bound on the failure rate.

    ``upper_bound(0, 100)`` is 0.0295 (``1 - 0.05**(1/100)``). Nothing judged, or every sample
    failed, gives 1.0: nothing rules out any rate. Accurate to about 1e-12; compare it to a
    threshold with ``bound_exceeds``, which is exact.

    Args:
        failures: Failed samples (check_failed + error).
        judged: Judged samples (samples - transient).
        confidence: One-sided confidence level, strictly between 0 and 1.
    """
    _check(failures, judged, confidence)
    alpha = float(_alpha(confidence))
    if failures == judged:
        return 1.0
    if failures == 0:
        return -math.expm1(math.log(alpha) / judged)
    lo, hi = 0.0, 1.0  # binomial_cdf(lo) > alpha >= binomial_cdf(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if binomial_cdf(failures, judged, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clean_samples_needed(
    failures: int, judged: int, threshold: float, confidence: float = CONFIDENCE
) -> int | None:
    """How many MORE samples, none failing, would bring the upper bound to ``threshold`` or below.

    The total that would then be judged is ``judged + result``: 0 failures in 100 bound the rate
    at 2.95%, and showing 1% takes 299 clean samples in all, so 199 more. 0 when the bound is
    already at or below the threshold; ``None`` when no number suffices (a threshold of 0: the
    bound is never 0). The bound shrinks with each clean sample, so the least such number is
    found by doubling, then bisection.
    """
    _check(failures, judged, confidence)
    if exact(threshold) <= 0:
        return None
    if not bound_exceeds(failures, judged, threshold, confidence):
        return 0
    lo, hi = 0, 1  # bound(judged + lo) > threshold >= bound(judged + hi), once hi is found
    while bound_exceeds(failures, judged + hi, threshold, confidence):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound_exceeds(failures, judged + mid, threshold, confidence):
            lo = mid
        else:
            hi = mid
    return hi


def format_bound(
    failures: int, judged: int, threshold: float | None = None, confidence: float = CONFIDENCE
) -> str:
    """The upper bound as a percentage (at least two decimals and three significant digits), with
    as many more digits as it takes never to contradict ``bound_exceeds`` on ``threshold``: shown
    above it only when above it, equal to it only when equal (``2.95%``, ``0.997%``)."""
    bound = Fraction(upper_bound(failures, judged, confidence)) * 100
    above: bool | None = None
    limit = Fraction(0)
    if threshold is not None:
        limit = exact(threshold) * 100
        sign = _compare(failures, judged, exact(threshold), confidence)
        above = sign > 0
        if sign == 0:
            bound = limit  # 0 failures in 1 at 95% is 95%, which the float misses by 4e-17
        elif above != (bound > limit):  # the float is within its error of the threshold
            tiny = Fraction(1, 10**_MAX_DIGITS)
            bound = limit + tiny if above else limit - tiny
    if bound == 100:
        return "100%"
    digits = 2
    if 0 < bound < 1:
        digits = max(2, 2 - math.floor(math.log10(bound)))
    while True:
        shown = Fraction(round(bound * 10**digits), 10**digits)
        if above is None or digits >= _MAX_DIGITS:
            break
        if above == (shown > limit) and (shown == limit) == (bound == limit):
            break
        digits += 1
    return f"{_decimal(shown, digits)}%"


def _decimal(value: Fraction, digits: int) -> str:
    """``value`` (a multiple of ``10**-digits``) written with exactly ``digits`` decimals."""
    whole, frac = divmod(round(value * 10**digits), 10**digits)
    return f"{whole}.{frac:0{digits}d}"


def upper_bound_gate(summary: GateSummary, confidence: float = CONFIDENCE) -> GateSummary:
    """The gate as ``--gate upper-bound`` decides it, from the rate gate's ``summary``.

    INCONCLUSIVE and hard-gate FAIL verdicts stand as they are, and so does a rate above the
    threshold (its bound lies above it too). A batch the rate passes FAILS when the upper bound
    exceeds ``max_failure_rate``, and is INCONCLUSIVE when nothing was judged (every sample
    transient, under a ``max_transient`` of 1): a bound on nothing is no evidence.
    """
    if summary.verdict != "PASS":
        return summary
    judged, failures, limit = summary.judged, summary.failures, summary.max_failure_rate
    if judged == 0:
        reason = "no sample judged: nothing bounds the failure rate"
        return summary.model_copy(update={"verdict": "INCONCLUSIVE", "reason": reason})
    level = percent(confidence)
    bound = format_bound(failures, judged, limit, confidence)
    rate = f"failure rate {failures}/{judged} = {format_rate(failures, judged, limit)}"
    if bound_exceeds(failures, judged, limit, confidence):
        reason = (
            f"{rate} <= {percent(limit)}, but its {level} upper bound {bound} > {percent(limit)}"
        )
        return summary.model_copy(update={"verdict": "FAIL", "reason": reason})
    reason = f"{rate} <= {percent(limit)}, and its {level} upper bound {bound} <= {percent(limit)}"
    return summary.model_copy(update={"reason": reason})


def apply_gate(
    mode: GateMode,
    samples: int,
    check_failed: int,
    error: int,
    transient: int,
    max_failure_rate: float,
    max_transient: float,
    hard_gates_failed: Mapping[str, int] | None = None,
    hard_gate_failures: int | None = None,
    confidence: float = CONFIDENCE,
) -> GateSummary:
    """``gate_summary`` (same arguments), then, in ``upper-bound`` mode, ``upper_bound_gate``."""
    summary = gate_summary(
        samples,
        check_failed,
        error,
        transient,
        max_failure_rate,
        max_transient,
        hard_gates_failed=hard_gates_failed,
        hard_gate_failures=hard_gate_failures,
    )
    if mode == "upper-bound":
        return upper_bound_gate(summary, confidence)
    if mode != "rate":
        raise ValueError(f"unknown gate mode {mode!r}: use one of {', '.join(GATE_MODES)}")
    return summary


@dataclass(frozen=True)
class CaseEpochs:
    """One case's epochs. Transient epochs say nothing about the agent, so they are left out of
    ``judged`` (and of pass^k, as they are of the failure rate); ``transient`` counts them."""

    case_id: str
    judged: int
    passed: int
    transient: int = 0

    @property
    def all_passed(self) -> bool:
        """The case passed^k: every one of its judged epochs passed (and there was one)."""
        return self.judged > 0 and self.passed == self.judged

    @property
    def flaky(self) -> bool:
        """Passed in some judged epochs, not all."""
        return 0 < self.passed < self.judged

    def pass_hat(self, k: int) -> Fraction:
        """tau-bench's unbiased estimate of passing k fresh epochs in a row: C(c, k) / C(n, k)."""
        if not 1 <= k <= self.judged:
            raise ValueError(f"{self.case_id}: k={k} outside 1..{self.judged} judged epochs")
        return Fraction(math.comb(self.passed, k), math.comb(self.judged, k))


@dataclass(frozen=True)
class PassHatK:
    """pass^k over a batch's cases (``cases`` sorted by case id, unjudged ones included)."""

    cases: tuple[CaseEpochs, ...]

    @property
    def judged_cases(self) -> tuple[CaseEpochs, ...]:
        """Cases with at least one judged epoch: the ones pass^k averages over."""
        return tuple(c for c in self.cases if c.judged)

    @property
    def unjudged(self) -> tuple[str, ...]:
        """Cases whose every epoch was transient."""
        return tuple(c.case_id for c in self.cases if not c.judged)

    @property
    def several_epochs(self) -> bool:
        """Some case ran more than one epoch (transient ones included)."""
        return any(c.judged + c.transient > 1 for c in self.cases)

    @property
    def k(self) -> int:
        """The largest k every judged case allows: its fewest judged epochs (0: none judged)."""
        return min((c.judged for c in self.judged_cases), default=0)

    def pass_hat(self, k: int | None = None) -> Fraction:
        """Mean over judged cases of ``C(c, k) / C(n, k)`` (default k: ``self.k``). With every
        case at n epochs, pass^n is the share of cases that passed all of them."""
        k = self.k if k is None else k
        cases = self.judged_cases
        if not cases:
            raise ValueError("pass^k of no judged case")
        return sum((c.pass_hat(k) for c in cases), Fraction(0)) / len(cases)

    @property
    def curve(self) -> tuple[Fraction, ...]:
        """pass^1 .. pass^k."""
        return tuple(self.pass_hat(k) for k in range(1, self.k + 1))

    @property
    def flaky(self) -> tuple[str, ...]:
        """Cases that passed in some judged epochs, not all."""
        return tuple(c.case_id for c in self.cases if c.flaky)


def pass_hat_k(results: Iterable[CaseResult]) -> PassHatK:
    """Group per-sample results by case (the epoch is ``CaseResult.sample``) into ``PassHatK``.

    Raises:
        ValueError: A (case, epoch) pair appears twice: a sample is never counted twice.
    """
    seen: set[tuple[str, int]] = set()
    counts: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in results:
        key = (r.case_id, r.sample)
        if key in seen:
            raise ValueError(f"case {r.case_id} epoch {r.sample} appears twice")
        seen.add(key)
        judged_passed_transient = counts[r.case_id]
        if r.outcome.kind == "transient":
            judged_passed_transient[2] += 1
        else:
            judged_passed_transient[0] += 1
            judged_passed_transient[1] += r.outcome.kind == "passed"
    return PassHatK(tuple(CaseEpochs(case, j, p, t) for case, (j, p, t) in sorted(counts.items())))


def _share(value: Fraction) -> str:
    """A share in [0, 1] with two decimals, more when they would round it to 0 or 1."""
    digits = 2
    while digits < _MAX_DIGITS:
        shown = Fraction(round(value * 10**digits), 10**digits)
        if (shown == 0) == (value == 0) and (shown == 1) == (value == 1):
            break
        digits += 1
    return _decimal(Fraction(round(value * 10**digits), 10**digits), digits)


_MAX_NAMES = 10


def bound_lines(summary: GateSummary, confidence: float = CONFIDENCE) -> list[str]:
    """The upper bound line, and, when the bound lies above the threshold although the rate
    does not, how many more clean samples would show the threshold holds::

        upper bound (95%, Clopper-Pearson): 2.95% (threshold 1%)
        to show <= 1%: 199 more clean samples (299 in all)
    """
    head = f"upper bound ({percent(confidence)}, Clopper-Pearson)"
    failures, judged, limit = summary.failures, summary.judged, summary.max_failure_rate
    if judged == 0:
        return [f"{head}: none, no sample judged"]
    bound = format_bound(failures, judged, limit, confidence)
    lines = [f"{head}: {bound} (threshold {percent(limit)})"]
    rate_holds = Fraction(failures, judged) <= exact(limit)
    if rate_holds and bound_exceeds(failures, judged, limit, confidence):
        more = clean_samples_needed(failures, judged, limit, confidence)
        if more is None:
            lines.append(f"to show <= {percent(limit)}: no number of clean samples suffices")
        else:
            plural = "" if more == 1 else "s"
            lines.append(
                f"to show <= {percent(limit)}: {more} more clean sample{plural} "
                f"({judged + more} in all)"
            )
    return lines


def pass_hat_lines(epochs: PassHatK) -> list[str]:
    """The pass^k lines, empty unless some case ran several epochs::

    pass^k (k=3): 0.80 over 10 cases; flaky: a, b
    pass^1..3: 0.93, 0.87, 0.80
    """
    if not epochs.several_epochs:
        return []
    cases = epochs.judged_cases
    if not cases:
        return ["pass^k: none, no epoch judged"]
    flaky = epochs.flaky
    names = ", ".join(flaky[:_MAX_NAMES]) or "none"
    if len(flaky) > _MAX_NAMES:
        names += f", ... ({len(flaky)} in all)"
    plural = "" if len(cases) == 1 else "s"
    line = f"pass^k (k={epochs.k}): {_share(epochs.pass_hat())} over {len(cases)} case{plural}"
    if epochs.unjudged:
        line += f" ({len(epochs.unjudged)} with every epoch transient left out)"
    lines = [f"{line}; flaky: {names}"]
    if epochs.k > 1:
        lines.append(f"pass^1..{epochs.k}: " + ", ".join(_share(v) for v in epochs.curve))
    return lines


def confidence_lines(
    summary: GateSummary,
    results: Iterable[CaseResult] = (),
    confidence: float = CONFIDENCE,
) -> list[str]:
    """Every line the batch prints beyond the point estimate: ``bound_lines`` of the gate, then
    ``pass_hat_lines`` of the per-sample ``results`` (a scorecard's ``cases``)."""
    return bound_lines(summary, confidence) + pass_hat_lines(pass_hat_k(results))
