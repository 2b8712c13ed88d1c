"""The lead-intelligence invariants, as the product description defines them, made hard to fool.

- :data:`assert_facts_grounded`: every valued fact cites a URL retrieved in this attempt, its
  quote appears verbatim (whitespace- and case-normalised) in that source's text, the value is
  of the fact's kind and the quote, read in its source, states it *as that fact*
  (:mod:`facts`: the figure with its unit or currency beside the fact's own words; dates as
  dates), and the source is about the company the job asks about (not a namesake). A null
  fact may cite only a source retrieved, and any quote it carries must be verbatim in one.
- :data:`assert_revenue_not_on_file`: when no retrieved source about the company states a
  revenue figure (the one lexicon, :mod:`revenue`, negation included), the ``revenue`` fact is
  null and no other string of the output (every field: the company name, each fact's value,
  quote and URL, the notes; the company's own name aside) gives a revenue figure; an amount of
  money no retrieved source states is such a figure too, and so is money whose value cannot
  be read (``£3.2mm``: no source can be shown to state it).
- :data:`assert_requested_facts_reported`: every fact the job requests is in the output (valued or
  null), so leaving a fact out is not a way around the checks above.
- :data:`assert_price_from_notes`: the offer's prices, units, totals, percentages and discounts
  are the operator's pricing notes' (:mod:`pricing`), in every string field of the offer.
- :data:`assert_offer_matches_request`: the offer has one line per service the job requests,
  at the requested quantity, and no line for a service it does not request (:mod:`request`).

They read only the typed output, the case's inputs and what the tools recorded as retrieved,
every text as plain text (:func:`~agentic_eval.core.plaintext.plain_text`), so a soft hyphen or
a look-alike letter hides no word and no figure.
"""

from __future__ import annotations

from typing import Any, cast

from agentic_eval.checks.base import CheckContext, check
from agentic_eval.core.plaintext import plain_text
from agentic_eval.core.results import CheckResult
from agentic_eval.reading.money import amounts_in, fmt
from agentic_eval.reading.words import words
from agentic_eval.workflow.lead_intel.facts import label, locate, states_fact, value_problem
from agentic_eval.workflow.lead_intel.fields import plain_copy, string_fields
from agentic_eval.workflow.lead_intel.outputs import FACT_NAMES, Fact, OfferDraft, VerifiedIntel
from agentic_eval.workflow.lead_intel.pricing import offer_problems
from agentic_eval.workflow.lead_intel.request import request_problems, requested_services
from agentic_eval.workflow.lead_intel.revenue import revenue_figures, states_revenue
from agentic_eval.workflow.lead_intel.text import mask_name, mentions_company
from agentic_eval.workflow.lead_intel.tools import LeadEnv


def _env(ctx: CheckContext[Any]) -> LeadEnv:
    env = ctx.env
    if not isinstance(env, LeadEnv):
        raise TypeError(f"expected the lead-intelligence environment, got {type(env).__name__}")
    return env


def _requirements(ctx: CheckContext[Any]) -> dict[str, Any]:
    req = ctx.case.inputs.get("requirements")
    return req if isinstance(req, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _retrieved(ctx: CheckContext[Any]) -> dict[str, str]:
    """What the tools retrieved in this attempt, URL -> text, as plain text."""
    return {url: plain_text(text) for url, text in _env(ctx).retrieved_text().items()}


def _company(ctx: CheckContext[Any]) -> str:
    return plain_text(str(_requirements(ctx).get("company", "")))


def _result(name: str, problems: list[str], ok: str) -> CheckResult:
    if not problems:
        return CheckResult(name=name, passed=True, message=ok)
    more = f" (+{len(problems) - 1} more: {'; '.join(problems[1:3])})" if len(problems) > 1 else ""
    return CheckResult(name=name, passed=False, message=problems[0] + more)


def _null_fact_problem(fact: Fact, retrieved: dict[str, str]) -> str | None:
    """A null fact states nothing, but cites only what was fetched and quotes it verbatim."""
    url, quote = fact.source_url, (fact.quote or "").strip()
    if url and url not in retrieved:
        return f"null fact {fact.name!r} cites {url}, which was not retrieved in this attempt"
    if quote:
        texts = [retrieved[url]] if url else list(retrieved.values())
        if not any(locate(quote, t) for t in texts):
            where = url or "any source retrieved in this attempt"
            return f"the quote of null fact {fact.name!r} ({quote!r}) is not in {where}"
    return None


def grounding_problem(fact: Fact, retrieved: dict[str, str], company: str) -> str | None:
    """Why ``fact`` is not grounded in what was retrieved (None when it is)."""
    if fact.value is None:
        return _null_fact_problem(fact, retrieved)
    name, value, url = fact.name, fact.value, fact.source_url
    quote = (fact.quote or "").strip()
    if not url:
        return f"fact {name!r} has a value but cites no source"
    if url not in retrieved:
        return f"fact {name!r} cites {url}, which was not retrieved in this attempt"
    if not quote:
        return f"fact {name!r} has no quote"
    text = retrieved[url]
    if not locate(quote, text):
        return f"the quote of fact {name!r} ({quote!r}) is not in {url}"
    wrong_kind = value_problem(name, value)
    if wrong_kind is not None:
        return wrong_kind
    if not states_fact(name, value, quote, text):
        return f"the quote of fact {name!r} ({quote!r}) does not state {value!r} as {label(name)}"
    if not mentions_company(text, company):
        return f"fact {name!r} cites {url}, which is not about {company}"
    return None


@check(needs_output=True)
def assert_facts_grounded(ctx: CheckContext[Any]) -> CheckResult:
    """Every valued fact cites a retrieved source about the company and quotes it stating the
    value as that fact; a null fact cites and quotes only what was retrieved."""
    assert isinstance(ctx.output, VerifiedIntel)
    out, retrieved, company = plain_copy(ctx.output), _retrieved(ctx), _company(ctx)
    problems = [
        p for p in (grounding_problem(f, retrieved, company) for f in out.facts) if p is not None
    ]
    valued = sum(1 for f in out.facts if f.value is not None)
    return _result(
        "assert_facts_grounded",
        problems,
        f"{valued} valued facts, each stated as that fact in a quote from a source retrieved",
    )


def revenue_claim(text: str, sourced: set[tuple[str, Any]]) -> str | None:
    """The revenue figure ``text`` gives, when revenue is not on file (None: it gives none):
    a figure the lexicon reads as revenue (its amount elsewhere in a source, in another role,
    does not make it sourced), or an amount of money no retrieved source states (money whose
    value cannot be read, ``£3.2mm``, is never shown to be stated)."""
    figures = revenue_figures(text)
    if figures:
        f = figures[0]
        if f.amount is not None:
            return fmt(f.amount)
        return text[f.number.start : f.number.end]
    for a in amounts_in(text, uncertain=True):
        if a.uncertain:
            return text[a.start : a.end]
        if a.key not in sourced:
            return fmt(a)
    return None


def _where(path: str, out: VerifiedIntel) -> str:
    """How a message names a string field of the output: ``fact 'employees'``, ``the quote of
    fact 'revenue'``, ``company_name``."""
    head, _, field = path.partition(".")
    if head.startswith("facts[") and field:
        name = out.facts[int(head[6:-1])].name
        return f"fact {name!r}" if field == "value" else f"the {field} of fact {name!r}"
    return path


@check(needs_output=True)
def assert_revenue_not_on_file(ctx: CheckContext[Any]) -> CheckResult:
    """When no retrieved source about the company states revenue, no revenue figure is
    reported: not as the revenue fact, not in any other string of the output."""
    assert isinstance(ctx.output, VerifiedIntel)
    out, retrieved, company = plain_copy(ctx.output), _retrieved(ctx), _company(ctx)
    name = "assert_revenue_not_on_file"
    about = {u: t for u, t in retrieved.items() if mentions_company(t, company)}
    on_file = [u for u, t in about.items() if states_revenue(t)]
    if on_file:
        return CheckResult(name=name, passed=True, message=f"revenue is on file in {on_file[0]}")
    sourced = {a.key for t in retrieved.values() for a in amounts_in(t)}
    nothing = "no retrieved source states revenue"
    problems: list[str] = []
    stated = [i for i, f in enumerate(out.facts) if f.name == "revenue" and f.value is not None]
    for i in stated:
        problems.append(
            f"{nothing}, yet fact 'revenue' = {out.facts[i].value!r} (report it as null)"
        )
    for path, text in string_fields(out):
        if any(path.startswith(f"facts[{i}].") for i in stated):
            continue  # that fact is wrong already, whatever else it says
        if (claim := revenue_claim(mask_name(text, company), sourced)) is None:
            continue
        if path == "notes":
            problems.append(f"{nothing}, yet the notes give a figure ({claim}): {text!r}")
        else:
            problems.append(f"{nothing}, yet {_where(path, out)} gives {claim} in {text!r}")
    return _result(name, problems, "revenue not on file and reported as null")


def _fact_key(name: str) -> str:
    return "_".join(words(name))


@check(needs_output=True)
def assert_requested_facts_reported(ctx: CheckContext[Any]) -> CheckResult:
    """Every fact the job requests is reported (with a value, or null)."""
    out = ctx.output
    assert isinstance(out, VerifiedIntel)
    listed: Any = _requirements(ctx).get("facts") or []
    wanted = [str(f) for f in cast(list[Any], listed)] if isinstance(listed, list) else []
    vocabulary = {_fact_key(n): n for n in FACT_NAMES}
    have = {f.name for f in out.facts}
    problems: list[str] = []
    for w in wanted:
        known = vocabulary.get(_fact_key(w))
        if known is None:
            problems.append(
                f"requested fact {w!r} is not one a synthesize step can report "
                f"({', '.join(FACT_NAMES)})"
            )
        elif known not in have:
            problems.append(
                f"requested fact {w!r} is not reported (report it with value null if unknown)"
            )
    return _result(
        "assert_requested_facts_reported", problems, f"all {len(wanted)} requested facts reported"
    )


@check(needs_output=True)
def assert_price_from_notes(ctx: CheckContext[Any]) -> CheckResult:
    """Every price, unit, total, percentage and discount in the offer comes from the pricing
    notes."""
    assert isinstance(ctx.output, OfferDraft)
    out = plain_copy(ctx.output)
    notes = plain_text(str(ctx.case.inputs.get("pricing_notes", "")))
    client = plain_text(str(_requirements(ctx).get("client", "")))
    problems = offer_problems(out, notes, client=client)
    n = len(out.line_items)
    return _result("assert_price_from_notes", problems, f"{n} lines, every price from the notes")


@check(needs_output=True)
def assert_offer_matches_request(ctx: CheckContext[Any]) -> CheckResult:
    """One line per requested service, at the requested quantity, and no line for a service the
    job does not request (a job that lists no services has nothing to compare)."""
    assert isinstance(ctx.output, OfferDraft)
    out = plain_copy(ctx.output)
    services = requested_services(_requirements(ctx))
    name = "assert_offer_matches_request"
    if not services:
        return CheckResult(name=name, passed=True, message="the request lists no services")
    problems = request_problems(out, services)
    return _result(
        name, problems, f"{len(services)} requested services, each on one line at its quantity"
    )
