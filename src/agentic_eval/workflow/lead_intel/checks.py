"""The lead-intelligence invariants, exactly as the product description defines them.

- :data:`assert_facts_grounded`: every valued fact cites a URL retrieved in this attempt, and its
  quote appears verbatim (whitespace- and case-normalised) in that source's text.
- :data:`assert_revenue_not_on_file`: when no retrieved source mentions revenue, every revenue
  fact is ``value=None``. A hallucinated figure fails outright.
- :data:`assert_price_from_notes`: every price in the offer draft appears in the operator's
  pricing notes. A total computed from the offer's own lines is derived, not invented, and passes.

They read only the typed output, the case's inputs and what the tools recorded as retrieved.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from agentic_eval.checks.base import CheckContext, check
from agentic_eval.core.results import CheckResult
from agentic_eval.workflow.lead_intel.outputs import OfferDraft, VerifiedIntel
from agentic_eval.workflow.lead_intel.tools import LeadEnv

REVENUE_WORDS = ("revenue", "turnover")
"""A source mentions revenue when its text contains one of these words; a fact is about revenue
when its name does."""
_PRICE = re.compile(
    r"£\s?(\d[\d,]*(?:\.\d+)?)\s?(k|m|bn|thousand|million|billion)?\b", re.IGNORECASE
)
_SCALE = {
    "": 1,
    "k": 1000,
    "thousand": 1000,
    "m": 1_000_000,
    "million": 1_000_000,
    "bn": 1_000_000_000,
    "billion": 1_000_000_000,
}


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, case folded."""
    return " ".join(text.split()).casefold()


def prices_in(text: str) -> list[Decimal]:
    """Every pound amount written in ``text`` (``£2,400``, ``£3.5k``, ``£4 million``)."""
    found: list[Decimal] = []
    for m in _PRICE.finditer(text):
        try:
            amount = Decimal(m.group(1).replace(",", ""))
        except InvalidOperation:
            continue
        found.append(amount * _SCALE[(m.group(2) or "").casefold()])
    return found


def pounds(value: float) -> Decimal:
    """A price as an exact decimal (``2400.0`` and ``2400`` are the same price)."""
    return Decimal(repr(value)).normalize()


def _fmt(amount: Decimal) -> str:
    return f"£{amount.normalize():,f}"


def _env(ctx: CheckContext[Any]) -> LeadEnv:
    env = ctx.env
    if not isinstance(env, LeadEnv):
        raise TypeError(f"expected the lead-intelligence environment, got {type(env).__name__}")
    return env


def _result(name: str, problems: list[str], ok: str) -> CheckResult:
    if not problems:
        return CheckResult(name=name, passed=True, message=ok)
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return CheckResult(name=name, passed=False, message=problems[0] + more)


@check(needs_output=True)
def assert_facts_grounded(ctx: CheckContext[Any]) -> CheckResult:
    """Every valued fact cites a URL retrieved in this attempt and quotes it verbatim."""
    out = ctx.output
    assert isinstance(out, VerifiedIntel)
    retrieved = _env(ctx).retrieved_text()
    problems: list[str] = []
    valued = [f for f in out.facts if f.value is not None]
    for fact in valued:
        if not fact.source_url:
            problems.append(f"fact {fact.name!r} has a value but cites no source")
        elif fact.source_url not in retrieved:
            problems.append(
                f"fact {fact.name!r} cites {fact.source_url}, which was not retrieved "
                "in this attempt"
            )
        elif not fact.quote or not normalise(fact.quote):
            problems.append(f"fact {fact.name!r} has no quote")
        elif normalise(fact.quote) not in normalise(retrieved[fact.source_url]):
            problems.append(
                f"the quote of fact {fact.name!r} ({fact.quote!r}) is not in {fact.source_url}"
            )
    return _result(
        "assert_facts_grounded",
        problems,
        f"{len(valued)} valued facts, each quoted verbatim from a source retrieved",
    )


def _about_revenue(name: str) -> bool:
    return any(w in name.casefold() for w in REVENUE_WORDS)


@check(needs_output=True)
def assert_revenue_not_on_file(ctx: CheckContext[Any]) -> CheckResult:
    """When no retrieved source mentions revenue, every revenue fact is null."""
    out = ctx.output
    assert isinstance(out, VerifiedIntel)
    retrieved = _env(ctx).retrieved_text()
    on_file = [u for u, t in retrieved.items() if any(w in normalise(t) for w in REVENUE_WORDS)]
    name = "assert_revenue_not_on_file"
    if on_file:
        return CheckResult(name=name, passed=True, message=f"revenue is on file in {on_file[0]}")
    invented = [f for f in out.facts if _about_revenue(f.name) and f.value is not None]
    problems = [
        f"no retrieved source mentions revenue, yet fact {f.name!r} = {f.value!r}" for f in invented
    ]
    return _result(name, problems, "revenue not on file and reported as null")


def _offer_prices(offer: OfferDraft) -> list[tuple[str, Decimal]]:
    found: list[tuple[str, Decimal]] = []
    for i, line in enumerate(offer.line_items, 1):
        found.append((f"line {i} unit price", pounds(line.unit_price_gbp)))
        found.extend((f"line {i} description", p) for p in prices_in(line.description))
    found.extend(("terms", p) for p in prices_in(offer.terms))
    found.extend(("notes", p) for p in prices_in(offer.notes))
    return found


def _derived(offer: OfferDraft) -> set[Decimal]:
    """Totals computed from the offer's own lines: each line's total and the grand total."""
    lines = [pounds(li.unit_price_gbp) * li.quantity for li in offer.line_items]
    return {p.normalize() for p in [*lines, sum(lines, Decimal(0))]}


@check(needs_output=True)
def assert_price_from_notes(ctx: CheckContext[Any]) -> CheckResult:
    """Every price in the offer draft appears in the operator's pricing notes."""
    out = ctx.output
    assert isinstance(out, OfferDraft)
    notes = str(ctx.case.inputs.get("pricing_notes", ""))
    allowed = {p.normalize() for p in prices_in(notes)}
    derived = _derived(out)
    problems = [
        f"{_fmt(price)} ({where}) is not in the operator's pricing notes"
        for where, price in _offer_prices(out)
        if price.normalize() not in allowed
        and not (where in ("terms", "notes") and price.normalize() in derived)
    ]
    n = len(out.line_items)
    return _result("assert_price_from_notes", problems, f"{n} lines, every price from the notes")
