"""The lead-intelligence invariants, as the product description defines them, made hard to fool.

- :data:`assert_facts_grounded`: every valued fact cites a URL retrieved in this attempt, its
  quote appears verbatim (whitespace- and case-normalised) in that source's text, the quote
  states the value (the value's words, or every figure of it), and the source is about the
  company the job asks about (not a namesake).
- :data:`assert_revenue_not_on_file`: when no retrieved source mentions revenue, every fact about
  revenue (revenue, turnover, sales, income) is ``value=None``, and the notes state no figure
  for it. A hallucinated figure fails outright.
- :data:`assert_requested_facts_reported`: every fact the job requests is in the output (valued or
  null), so leaving a fact out is not a way around the checks above.
- :data:`assert_price_from_notes`: every price in the offer draft appears in the operator's pricing
  notes; a line naming a service the notes price carries that service's price; a line naming no
  service in the notes fails. Amounts are read in any common form (``£14,000``, ``GBP 14k``,
  ``14,000 pounds``). A total computed from the offer's own lines is derived, not invented.

They read only the typed output, the case's inputs and what the tools recorded as retrieved.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, cast

from agentic_eval.checks.base import CheckContext, check
from agentic_eval.core.results import CheckResult
from agentic_eval.workflow.lead_intel.money import amounts_in, figures_in, fmt, pounds
from agentic_eval.workflow.lead_intel.outputs import OfferDraft, VerifiedIntel
from agentic_eval.workflow.lead_intel.tools import LeadEnv

REVENUE_WORDS = ("revenue", "turnover")
"""A source mentions revenue when its text contains one of these words."""
_REVENUE_FACT = re.compile(
    r"(?<!staff )(?<!employee )(?<!labour )\b(revenue|turnover|sales|income)"
)
_NOTE_SERVICE = re.compile(r"^\s*[-*•]\s*(?P<name>[^:]+):\s*(?P<rest>.+)$")
_WORDS = re.compile(r"[a-z0-9]+")


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, case folded."""
    return " ".join(text.split()).casefold()


def _name_words(text: str) -> str:
    words = _WORDS.findall(text.casefold())
    return " ".join("ltd" if w == "limited" else w for w in words)


def mentions_company(text: str, company: str) -> bool:
    """Whether ``text`` names ``company`` (case, punctuation and Ltd/Limited aside)."""
    wanted = _name_words(company)
    return not wanted or f" {wanted} " in f" {_name_words(text)} "


def states_value(quote: str, value: str) -> bool:
    """Whether the quote states the value: its words verbatim, or every figure in it."""
    if normalise(value) in normalise(quote):
        return True
    figures = figures_in(value)
    return bool(figures) and set(figures) <= set(figures_in(quote))


def _env(ctx: CheckContext[Any]) -> LeadEnv:
    env = ctx.env
    if not isinstance(env, LeadEnv):
        raise TypeError(f"expected the lead-intelligence environment, got {type(env).__name__}")
    return env


def _requirements(ctx: CheckContext[Any]) -> dict[str, Any]:
    req = ctx.case.inputs.get("requirements")
    return req if isinstance(req, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _result(name: str, problems: list[str], ok: str) -> CheckResult:
    if not problems:
        return CheckResult(name=name, passed=True, message=ok)
    more = f" (+{len(problems) - 1} more: {'; '.join(problems[1:3])})" if len(problems) > 1 else ""
    return CheckResult(name=name, passed=False, message=problems[0] + more)


@check(needs_output=True)
def assert_facts_grounded(ctx: CheckContext[Any]) -> CheckResult:
    """Every valued fact cites a retrieved source about the company and quotes it verbatim."""
    out = ctx.output
    assert isinstance(out, VerifiedIntel)
    retrieved = _env(ctx).retrieved_text()
    company = str(_requirements(ctx).get("company", ""))
    problems: list[str] = []
    valued = [f for f in out.facts if f.value is not None]
    for fact in valued:
        name, value = fact.name, str(fact.value)
        if not fact.source_url:
            problems.append(f"fact {name!r} has a value but cites no source")
        elif fact.source_url not in retrieved:
            problems.append(
                f"fact {name!r} cites {fact.source_url}, which was not retrieved in this attempt"
            )
        elif not fact.quote or not normalise(fact.quote):
            problems.append(f"fact {name!r} has no quote")
        elif normalise(fact.quote) not in normalise(retrieved[fact.source_url]):
            problems.append(
                f"the quote of fact {name!r} ({fact.quote!r}) is not in {fact.source_url}"
            )
        elif not states_value(fact.quote, value):
            problems.append(f"the quote of fact {name!r} ({fact.quote!r}) does not state {value!r}")
        elif not mentions_company(retrieved[fact.source_url], company):
            problems.append(f"fact {name!r} cites {fact.source_url}, which is not about {company}")
    return _result(
        "assert_facts_grounded",
        problems,
        f"{len(valued)} valued facts, each quoted verbatim from a source retrieved",
    )


def about_revenue(name: str) -> bool:
    """Whether a fact's name says it is about revenue (``staff turnover`` is not)."""
    return _REVENUE_FACT.search(" ".join(_WORDS.findall(name.casefold()))) is not None


@check(needs_output=True)
def assert_revenue_not_on_file(ctx: CheckContext[Any]) -> CheckResult:
    """When no retrieved source mentions revenue, no revenue figure is reported."""
    out = ctx.output
    assert isinstance(out, VerifiedIntel)
    retrieved = _env(ctx).retrieved_text()
    on_file = [u for u, t in retrieved.items() if any(w in normalise(t) for w in REVENUE_WORDS)]
    name = "assert_revenue_not_on_file"
    if on_file:
        return CheckResult(name=name, passed=True, message=f"revenue is on file in {on_file[0]}")
    problems = [
        f"no retrieved source mentions revenue, yet fact {f.name!r} = {f.value!r}"
        for f in out.facts
        if about_revenue(f.name) and f.value is not None
    ]
    if about_revenue(out.notes) and (amounts_in(out.notes) or figures_in(out.notes)):
        problems.append(
            f"no retrieved source mentions revenue, yet the notes give a figure: {out.notes!r}"
        )
    return _result(name, problems, "revenue not on file and reported as null")


@check(needs_output=True)
def assert_requested_facts_reported(ctx: CheckContext[Any]) -> CheckResult:
    """Every fact the job requests is reported (with a value, or null)."""
    out = ctx.output
    assert isinstance(out, VerifiedIntel)
    listed: Any = _requirements(ctx).get("facts") or []
    wanted = [str(f) for f in cast(list[Any], listed)] if isinstance(listed, list) else []
    have = {_name_words(f.name) for f in out.facts}
    missing = [w for w in wanted if _name_words(w) not in have]
    problems = [
        f"requested fact {m!r} is not reported (report it with value null if unknown)"
        for m in missing
    ]
    return _result(
        "assert_requested_facts_reported", problems, f"all {len(wanted)} requested facts reported"
    )


def note_services(notes: str) -> dict[str, Decimal]:
    """Service name -> price, for every ``- Name: £price ...`` line of the pricing notes."""
    services: dict[str, Decimal] = {}
    for line in notes.splitlines():
        m = _NOTE_SERVICE.match(line)
        if m is not None:
            prices = amounts_in(m["rest"])
            if prices:
                services[_name_words(m["name"])] = prices[0]
    return services


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
    allowed = set(amounts_in(notes))
    services = note_services(notes)
    derived = _derived(out)
    problems: list[str] = []
    if not out.line_items:
        problems.append("the offer prices nothing (no line items)")
    for i, line in enumerate(out.line_items, 1):
        price = pounds(line.unit_price_gbp)
        named = {
            s: p for s, p in services.items() if f" {s} " in f" {_name_words(line.description)} "
        }
        if price not in allowed:
            problems.append(
                f"{fmt(price)} (line {i} unit price) is not in the operator's pricing notes"
            )
        elif services and not named:
            problems.append(
                f"line {i} ({line.description!r}) is not a service in the pricing notes"
            )
        elif named and price not in named.values():
            want = ", ".join(f"{s} at {fmt(p)}" for s, p in named.items())
            problems.append(f"line {i} is priced {fmt(price)}; the notes price {want}")
    texts = [(f"line {i} description", li.description) for i, li in enumerate(out.line_items, 1)]
    for where, text in [*texts, ("terms", out.terms), ("notes", out.notes)]:
        problems.extend(
            f"{fmt(a)} ({where}) is not in the operator's pricing notes"
            for a in amounts_in(text)
            if a not in allowed and a not in derived
        )
    n = len(out.line_items)
    return _result("assert_price_from_notes", problems, f"{n} lines, every price from the notes")
