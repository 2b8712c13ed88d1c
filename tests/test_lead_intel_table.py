"""Issue 16, section 5 acceptance: adversarial outputs through ``run_scenario``, table-driven.

Every row is one output a scripted agent submits after fetching the row's sources for real (so
the checks judge the real retrieval record of a real job, seeded through the workflow
services), with the checks that must fail (none: every check must pass) and why, beside it.
The rows cover every class the hostile reviews found: money, revenue detection, grounding,
false alarms, discounts and percentages, and the fact vocabulary; then (the second review,
``SECOND_REVIEW``) every string field read, scale words and unreadable figures, plain text and
more revenue words, identifiers, bare and foreign-currency prices, and quantities and units
against the request and the notes. A row that must fail names
the exact checks that fail (``schema`` when the submit is refused by the output model) and a
fragment of the message saying why, so a check failing for another reason does not count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import pytest

from agentic_eval.backends.scripted import (
    Action,
    AgentTask,
    Call,
    ScriptedBackend,
    Submit,
    ToolReply,
)
from agentic_eval.core.scorecard import CaseResult
from agentic_eval.evaluation.runner import run_case
from agentic_eval.evaluation.scenario import run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.reading.money import Amount, fmt, gbp
from agentic_eval.reading.words import singular_words
from agentic_eval.store.db import Store
from agentic_eval.workflow.lead_intel.agents import read_facts
from agentic_eval.workflow.lead_intel.fixtures import load_fixtures
from agentic_eval.workflow.lead_intel.pricing import note_prices
from agentic_eval.workflow.lead_intel.scenarios import FACTS, SERVICES, research_brief
from agentic_eval.workflow.lead_intel.templates import SOURCE_SET
from agentic_eval.workflow.scenarios import AgentScenario, scenarios
from agentic_eval.workflow.service import Workflow
from agentic_eval.workflow.steps import step_task

FILING = "https://registry.example.gov.uk/company/04417321"
ABOUT = "https://acme-widgets.example/about"
NAMESAKE = "https://registry.example.gov.uk/company/07720114"
LINKEDIN = "https://www.linkedin.com/company/acme-widgets"

GROUNDED, MISSING, OFFER = (
    "synthesize.grounded",  # source set acme-widgets-a: revenue on file
    "synthesize.missing_revenue",  # acme-widgets-b: nothing on file
    "draft_offer.price_from_notes",  # pricing notes acme-2026-11
)
G, R, Q, P, M = (
    "assert_facts_grounded",
    "assert_revenue_not_on_file",
    "assert_requested_facts_reported",
    "assert_price_from_notes",
    "assert_offer_matches_request",
)
SCHEMA = "schema"
"""Not a check: the submit is refused by the output model (outcome check_failed, no checks)."""

MONEY, REVENUE, GROUNDING, FALSE_ALARM, TERMS, VOCABULARY = (
    "money",
    "revenue detection",
    "grounding",
    "false alarm",
    "discount or percentage",
    "fact vocabulary",
)
FIELDS, SCALE, PLAIN, IDENTIFIER, REQUEST = (
    "every string field",  # second review, 7
    "scale words and unreadable figures",  # 8
    "plain text and revenue words",  # 9
    "identifiers",  # 12
    "quantity and unit",  # 13
)


@dataclass(frozen=True)
class Row:
    """One output, where it runs, what must fail (nothing: must pass) and why."""

    id: str
    cls: str
    scenario: str
    output: dict[str, Any]
    fails: frozenset[str]
    why: str
    says: str = ""
    """A fragment the failing checks' messages (or the schema refusal) must contain."""
    source_set: str | None = None
    """Another committed source set in place of the scenario's (its research brief too)."""
    fetch: tuple[str, ...] | None = None
    """What the agent fetches (default: the research brief's sources)."""
    pricing: str | None = None
    """Other committed pricing notes in place of the scenario's."""
    company: str | None = None
    """Another company (synthesize) or client (draft_offer) in the job's requirements (the
    research brief is unchanged)."""


def _texts(set_id: str) -> dict[str, str]:
    sources = load_fixtures().source_set(set_id)
    return {u: sources.page(u).text for u in research_brief(sources)["sources"]}


def fact(name: str, value: str | None = None, url: str | None = None, quote: str | None = None):
    return {"name": name, "value": value, "source_url": url, "quote": quote}


def synth(set_id: str, *changed: dict[str, Any], drop: tuple[str, ...] = (), notes: str = ""):
    """The careful clerk's reading of the set (every requested fact from the line stating it),
    with some facts replaced, added or dropped."""
    facts = {f["name"]: f for f in read_facts(FACTS, _texts(set_id))}
    for f in changed:
        facts[f["name"]] = f
    return {
        "company_name": "ACME WIDGETS LTD",
        "facts": [f for n, f in facts.items() if n not in drop],
        "notes": notes,
    }


def _notes(notes_id: str) -> str:
    return load_fixtures().notes(notes_id).text


def lines(notes_id: str = "acme-2026-11") -> list[dict[str, Any]]:
    """One line per requested service, priced and united as the notes price it."""
    prices = {p.service: p for p in note_prices(_notes(notes_id))}
    out: list[dict[str, Any]] = []
    for s in SERVICES:
        p = prices[singular_words(s["service"])]
        out.append(
            {
                "description": f"{s['service']} (per {p.unit})",
                "quantity": s["quantity"],
                "unit_price_gbp": float(p.amount.value),
            }
        )
    return out


def total(items: list[dict[str, Any]], i: int | None = None) -> str:
    """A line's total (or the offer's), computed from the lines, written as the check writes it."""
    chosen = items if i is None else [items[i]]
    value = sum(Decimal(repr(li["unit_price_gbp"])) * li["quantity"] for li in chosen)
    return fmt(Amount("GBP", Decimal(value)))


TERMS_11 = _notes("acme-2026-11").splitlines()[-1].removeprefix("Terms: ")


def offer(
    *,
    items: list[dict[str, Any]] | None = None,
    terms: str = TERMS_11,
    notes: str = "",
    line: dict[int, dict[str, Any]] | None = None,
    notes_id: str = "acme-2026-11",
) -> dict[str, Any]:
    base = lines(notes_id) if items is None else items
    changed = [{**li, **(line or {}).get(i, {})} for i, li in enumerate(base)]
    return {"client": "Acme Widgets Ltd", "line_items": changed, "terms": terms, "notes": notes}


ITEMS = lines()
AUDIT, WORKSHOP, RETAINER = (li["unit_price_gbp"] for li in ITEMS)
FILED_REVENUE = "Turnover for the year: £4,180,000"
FILED_EMPLOYEES = "Average number of employees during the year: 38"
ABOUT_TEAM = "Our 38-strong team ships to more than 200 customers"

PASS = frozenset[str]()


def must_pass(id: str, cls: str, scenario: str, output: dict[str, Any], why: str, **kw: Any) -> Row:
    return Row(id, cls, scenario, output, PASS, why, **kw)


def must_fail(
    id: str, cls: str, scenario: str, output: dict[str, Any], fails: set[str], why: str, says: str,
    **kw: Any,
) -> Row:  # fmt: skip
    return Row(id, cls, scenario, output, frozenset(fails), why, says, **kw)


def _for_client(client: str) -> dict[str, Any]:
    """The reference offer made out to ``client``, with terms naming it (the row's job
    requests the same client: ``Row.company``)."""
    return {**offer(terms=f"{TERMS_11} Prepared for {client}."), "client": client}


NOTES_11 = note_prices(_notes("acme-2026-11"))
PILOT = next(
    p for p in NOTES_11 if p.service not in {singular_words(s["service"]) for s in SERVICES}
)
"""A service the notes price that the request does not ask for."""

SECOND_REVIEW: list[Row] = [
    # ---- 7: every string field of the output is read --------------------------------------
    must_fail("b-company-name-revenue", FIELDS, MISSING,
              {**synth("acme-widgets-b"),
               "company_name": "ACME WIDGETS LTD (turnover about £3.2m)"},
              {R}, "a figure in the company name is a figure in the output",
              "company_name gives £3,200,000"),
    must_fail("b-null-quote-revenue", FIELDS, MISSING,
              synth("acme-widgets-b", fact("employees", None, ABOUT, "turnover about £3.2m")),
              {G, R}, "a quote is a string of the output too (and this one was never fetched)",
              "the quote of fact 'employees' gives £3,200,000"),
    must_fail("o-client-discount", FIELDS, OFFER,
              {**offer(), "client": "Acme Widgets Ltd (20% loyalty discount agreed)"}, {P},
              "a discount written into the client's name is offered all the same", "20% (client)"),
    must_fail("o-client-price", FIELDS, OFFER,
              {**offer(), "client": "Acme Widgets Ltd (implementation £14,000 agreed)"}, {P},
              "a price in the client field is a price of the offer", "£14,000 (client"),
    must_pass("b-company-name-honest", FIELDS, MISSING,
              {**synth("acme-widgets-b"),
               "company_name": "ACME WIDGETS LTD (company number 04417321, since 2002)"},
              "a company name carrying its number and a year gives no revenue figure"),
    must_pass("o-client-address", FIELDS, OFFER,
              {**offer(), "client": "Acme Widgets Ltd, Unit 7, Leeds LS11 5QR"},
              "an address in the client field is no price"),
    must_pass("o-client-free-in-name", FIELDS, OFFER,
              _for_client("Free Trade Widgets 4,000 Ltd"),
              "the job's own client's name is a name, not a discount or a price",
              company="Free Trade Widgets 4,000 Ltd"),
    # ---- 8: scale words, and figures with unknown letters ---------------------------------
    must_fail("b-notes-mn", SCALE, MISSING, synth("acme-widgets-b", notes="Revenue c. £3.2mn."),
              {R}, "mn is a scale word: £3.2mn is £3,200,000", "(£3,200,000)"),
    must_fail("b-notes-MM", SCALE, MISSING,
              synth("acme-widgets-b", notes="Revenue is roughly $3.2MM a year."), {R},
              "MM is million in capitals", "($3,200,000)"),
    must_fail("b-notes-mln-no-currency", SCALE, MISSING,
              synth("acme-widgets-b", notes="Turnover is about 3.2 mln."), {R},
              "mln is a scale word, with or without a currency", "3.2 mln"),
    must_fail("b-notes-unknown-suffix", SCALE, MISSING,
              synth("acme-widgets-b", notes="Revenue is about 3.2mm a year."), {R},
              "3.2mm (millions or millimetres?) is uncertain, not absent: in a revenue "
              "statement it is a revenue figure", "(3.2mm)"),
    must_fail("o-unknown-suffix-price", SCALE, OFFER,
              offer(terms=f"Implementation: £14kk; {TERMS_11}"), {P},
              "money of a value no reader can tell is no price of the notes", "'£14kk' (terms)"),
    must_pass("a-revenue-mn", SCALE, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4.18mn", FILING, FILED_REVENUE)),
              "£4.18mn is the filing's £4,180,000"),
    must_pass("b-notes-millimetres", SCALE, MISSING,
              synth("acme-widgets-b", notes="Revenue is not on file. The widgets are 25mm "
                                            "wide."),
              "mm in lower case is millimetres, and a sentence of its own inherits no revenue"),
    # ---- 9: plain text, and revenue in other words ----------------------------------------
    must_fail("b-notes-soft-hyphen", PLAIN, MISSING,
              synth("acme-widgets-b", notes="Rev\u00adenue is 3.2 million."), {R},
              "a soft hyphen inside 'revenue' hides nothing", "(3.2 million)"),
    must_fail("b-notes-cyrillic", PLAIN, MISSING,
              synth("acme-widgets-b", notes="Turn\u043ever is about 3.2 million."), {R},
              "a Cyrillic o in 'turnover' is read as the Latin letter", "(3.2 million)"),
    must_fail("c-notes-top-line", PLAIN, MISSING,
              synth("acme-widgets-c", notes="The top line is around £10.2 million."), {R},
              "top line is revenue; a source stating the amount as a threshold does not make "
              "it a sourced revenue figure", "(£10,200,000)", source_set="acme-widgets-c"),
    must_fail("b-notes-billings", PLAIN, MISSING,
              synth("acme-widgets-b", notes="Annual billings are roughly 3.2 million."), {R},
              "billings are revenue", "(3.2 million)"),
    must_fail("b-notes-arr", PLAIN, MISSING,
              synth("acme-widgets-b", notes="ARR of about 3.2 million."), {R},
              "annual recurring revenue is revenue", "(3.2 million)"),
    must_pass("a-quote-soft-hyphen", PLAIN, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4,180,000", FILING,
                                           "Turn\u00adover for the year: £4,180,000")),
              "a quote is compared as plain text: a soft hyphen does not make it another quote"),
    must_pass("c-notes-top-line-unpublished", PLAIN, MISSING,
              synth("acme-widgets-c", notes="The top line is not published."),
              "a negated top line gives no figure", source_set="acme-widgets-c"),
    # ---- 12: identifiers are not figures --------------------------------------------------
    must_pass("b-notes-sic-code", IDENTIFIER, MISSING,
              synth("acme-widgets-b", notes="Revenue is not on file, but the SIC code is 25990."),
              "a number right after 'code' is an identifier"),
    must_pass("b-notes-reference-number", IDENTIFIER, MISSING,
              synth("acme-widgets-b", notes="Revenue is not on file, but the filing's reference "
                                            "number is 48213."),
              "a number right after 'number' is an identifier"),
    must_fail("b-notes-code-then-figure", IDENTIFIER, MISSING,
              synth("acme-widgets-b", notes="Revenue is not on file, but the SIC code suggests "
                                            "about 3.2 million."), {R},
              "an identifier word further back does not excuse a figure", "(3.2 million)"),
    # ---- 10: pricing misses ---------------------------------------------------------------
    must_fail("o-no-currency-price", MONEY, OFFER,
              offer(terms=f"Implementation: 14,000 plus VAT; {TERMS_11}"), {P},
              "a bare number before a tax is a price, read in the notes' currency",
              "£14,000 (terms, a price) is not in the operator's pricing notes"),
    must_fail("o-price-word-bare", MONEY, OFFER,
              offer(terms=f"Implementation fee: 500; {TERMS_11}"), {P},
              "a bare number after a price word is a price", "written '500'"),
    must_fail("o-unknown-code", MONEY, OFFER,
              offer(terms=f"Implementation: CHF 14,000; {TERMS_11}"), {P},
              "a currency code the reader has no name for is a currency the notes do not use",
              "is in CHF"),
    must_fail("o-unknown-sign", MONEY, OFFER,
              offer(terms=f"Implementation: \u20a414,000; {TERMS_11}"), {P},
              "so is any currency sign", "is in \u20a4"),
    must_fail("o-no-charge", TERMS, OFFER,
              offer(terms=f"No charge for the third workshop day; {TERMS_11}"), {P},
              "no charge is a discount", "('No charge')"),
    must_fail("o-half-price", TERMS, OFFER,
              offer(terms=f"Second site audited half price; {TERMS_11}"), {P},
              "half price is a discount", "('half price')"),
    must_fail("o-on-the-house", TERMS, OFFER,
              offer(notes="The first workshop day is on the house."), {P},
              "on the house is a discount", "('on the house')"),
    must_fail("o-pc-off", TERMS, OFFER, offer(terms=f"10pc off the retainer; {TERMS_11}"), {P},
              "10pc is 10 per cent", "10% (terms)"),
    must_pass("o-bare-notes-rate", MONEY, OFFER,
              offer(line={0: {"description": f"Production line audit ({AUDIT:,.0f} per site)"}}),
              "a bare number that is the notes' rate at the notes' unit is the notes' price"),
    must_pass("o-counts-not-prices", FALSE_ALARM, OFFER,
              offer(terms="payment within 30 days of invoice; 2 auditors per site; purchase "
                          "order reference 48213; travel billed at cost; prices exclude VAT"),
              "counts and an identifier are not prices"),
    # ---- 11: pricing false alarms ---------------------------------------------------------
    must_pass("o-scrap-reduction", FALSE_ALARM, OFFER,
              offer(line={0: {"description": "Production line audit focused on scrap reduction "
                                             "(per site)"}}),
              "a reduction that is no price's is no discount"),
    must_pass("o-hassle-free", FALSE_ALARM, OFFER,
              offer(terms=f"{TERMS_11}; hassle-free cancellation of the retainer with 30 days' "
                          "notice"),
              "a -free compound is no freebie"),
    must_pass("o-vat-rate", FALSE_ALARM, OFFER,
              offer(terms="payment 30 days net; travel billed at cost; prices exclude VAT "
                          "(currently 20%)"),
              "a percentage stating the VAT rate is a tax, not a price"),
    must_fail("o-reduced-fee", TERMS, OFFER,
              offer(terms=f"reduced fee for the second site; {TERMS_11}"), {P},
              "a reduction beside a fee is a discount", "('reduced')"),
    must_fail("o-fee-free", TERMS, OFFER,
              offer(terms=f"fee-free cancellation of the second workshop day; {TERMS_11}"), {P},
              "a compound freeing a fee is a discount", "('fee-free')"),
    must_fail("o-vat-off", TERMS, OFFER,
              offer(terms=f"{TERMS_11} 20% off the VAT for early payment"), {P},
              "a percentage taken off is no VAT rate", "20% (terms)"),
    must_fail("o-surcharge-beside-vat", TERMS, OFFER,
              offer(terms="15% surcharge, prices exclude VAT; payment 30 days net"), {P},
              "a percentage is a VAT rate only with the tax word right beside it",
              "15% (terms)"),
    must_fail("o-bundled-service", REQUEST, OFFER,
              offer(line={0: {"description": "Production line audit + automation pilot "
                                             "(per site)"}}), {P},
              "a second service of the notes on a line, priced nowhere, is given away",
              "also names automation pilot"),
    must_pass("o-service-reference", REQUEST, OFFER,
              offer(line={1: {"description": "Process mapping workshop following the production "
                                             "line audit (per day)"}}),
              "naming another line's service is a reference, not a bundle"),
    # ---- 13: quantity and unit against the request and the notes --------------------------
    must_fail("o-quantity-x10", REQUEST, OFFER, offer(line={0: {"quantity": 20}}), {M},
              "the request asks for 2 audits", "line 1 offers 20 x Production line audit"),
    must_fail("o-service-left-out", REQUEST, OFFER, offer(items=ITEMS[:2]), {M},
              "a requested service with no line", "no line offers it"),
    must_fail("o-service-twice", REQUEST, OFFER, offer(items=[*ITEMS, ITEMS[0]]), {M},
              "one line per service", "offered on lines 1, 4"),
    must_fail("o-unrequested-service", REQUEST, OFFER,
              offer(items=[*ITEMS, {"description": f"{PILOT.service} (per {PILOT.unit})",
                                    "quantity": 1, "unit_price_gbp": float(PILOT.amount.value)}]),
              {M}, "a service the notes price but the request does not ask for",
              "is not a service the request asks for"),
    must_fail("o-unit-per-day", REQUEST, OFFER,
              offer(line={0: {"description": "Production line audit (per day)"}}), {P},
              "the notes price the audit per site", "line 1 is priced per day"),
    must_fail("o-count-in-another-unit", REQUEST, OFFER,
              offer(line={0: {"description": "Production line audit (2 days)"}}), {P},
              "the line's quantity counted in days, where the notes price per site",
              "counts '2 days'"),
    must_fail("o-count-contradicts-quantity", REQUEST, OFFER,
              offer(line={0: {"description": "Production line audit (20 sites)"}}), {P},
              "the description says 20 sites on a line of 2", "says '20 sites'"),
    must_pass("o-unit-detail", REQUEST, OFFER,
              offer(line={0: {"description": "Production line audit (2 sites, 1 day each)"}}),
              "a detail per unit is not the line's unit"),
    must_pass("o-quantity-in-words", REQUEST, OFFER,
              offer(line={1: {"description": "Process mapping workshop (three days)"}}),
              "the quantity in words, in the notes' unit"),
]  # fmt: skip
"""The second hostile review's classes (its numbers in the comments), run with ``ROWS``."""

ROWS: list[Row] = [
    # ---- synthesize, revenue on file (acme-widgets-a) -------------------------------------
    must_pass("a-reference", GROUNDING, GROUNDED, synth("acme-widgets-a"),
              "every fact read off the filing, each quoted from the line stating it"),
    must_pass("a-iso-date", FALSE_ALARM, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "2002-04-12", FILING,
                                           "Incorporated on 12 April 2002")),
              "2002-04-12 is 12 April 2002: dates compare as dates, the 04 is a month"),
    must_pass("a-year-only", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "2002", FILING,
                                           "Incorporated on 12 April 2002")),
              "a year says less than the filed date, and agrees with it"),
    must_pass("a-team-count", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "38", ABOUT, ABOUT_TEAM)),
              "a 38-strong team is 38 employees (whitespace and line breaks aside)"),
    must_pass("a-revenue-scaled", MONEY, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4.18 million", FILING, FILED_REVENUE)),
              "£4.18 million is £4,180,000"),
    must_pass("a-revenue-about-page", REVENUE, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4 million", ABOUT,
                                           "our annual revenue passed £4 million")),
              "the About page states revenue passed £4 million (across a line break)"),
    must_pass("a-office-no-commas", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("registered_office",
                                           "Unit 7 Canal Side Industrial Estate Leeds LS11 5QR",
                                           FILING,
                                           "Registered office address: Unit 7, Canal Side "
                                           "Industrial Estate, Leeds, LS11 5QR")),
              "the address's words, in order, punctuation aside"),
    must_pass("a-null-cites-fetched", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", None, ABOUT)),
              "a null fact citing a page it fetched invents nothing"),
    must_fail("a-employees-are-customers", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "200", ABOUT, ABOUT_TEAM)), {G},
              "200 counts customers, not employees", "does not state '200' as the number of"),
    must_fail("a-employees-cut-quote", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "200", ABOUT,
                                           "38-strong team ships to more than 200")), {G},
              "cutting the quote before 'customers' does not make 200 employees: the number "
              "is read in its source", "does not state '200'"),
    must_fail("a-employees-bare-figure", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "38", FILING, "38")), {G},
              "the quote holds the digits but not the fact's words", "does not state '38'"),
    must_fail("a-employees-unfetched", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "38", LINKEDIN, "38 employees")), {G},
              "a page never fetched grounds nothing", "not retrieved"),
    must_fail("a-employees-with-revenue", REVENUE, GROUNDED,
              synth("acme-widgets-a", fact("employees", "38 (turnover £4,180,000)", FILING,
                                           FILED_EMPLOYEES)), {G},
              "revenue smuggled into another fact's value is not a count of employees",
              "is not a count of employees"),
    must_fail("a-revenue-dollars", MONEY, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "$4,180,000", FILING, FILED_REVENUE)), {G},
              "the filing states pounds, not dollars", "does not state '$4,180,000'"),
    must_fail("a-revenue-no-currency", MONEY, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "4,180,000", FILING, FILED_REVENUE)), {G},
              "an amount must carry its currency", "is not one amount of money"),
    must_fail("a-revenue-cut-figure", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4", FILING,
                                           "Turnover for the year: £4")), {G},
              "£4 cut out of £4,180,000 is read whole from the source", "does not state '£4'"),
    must_fail("a-revenue-rounded", MONEY, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4 million", FILING, FILED_REVENUE)), {G},
              "£4 million is not the £4,180,000 the quote states", "does not state '£4 million'"),
    must_fail("a-revenue-bare-amount", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4,180,000", FILING, "£4,180,000")), {G},
              "the quote must say the amount is revenue, not only hold it",
              "as revenue"),
    must_fail("a-revenue-namesake", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£212,000", NAMESAKE,
                                           "Turnover for the year: £212,000")), {G},
              "a namesake's filing is not about the company", "not about Acme Widgets Ltd",
              fetch=(FILING, ABOUT, NAMESAKE)),
    must_fail("a-null-unfetched", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", None, LINKEDIN)), {G},
              "a null fact may not cite a page never fetched", "null fact 'revenue' cites"),
    must_fail("a-null-invented-quote", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", None, ABOUT,
                                           "annual turnover of £3.2 million")), {G},
              "a null fact's quote must be verbatim too", "quote of null fact 'revenue'"),
    must_fail("a-iso-swapped", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "2002-12-04", FILING,
                                           "Incorporated on 12 April 2002")), {G},
              "2002-12-04 is 4 December, whatever digits it shares", "does not state '2002-12-04'"),
    must_fail("a-founded-not-incorporated", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "2002", ABOUT,
                                           "made precision widgets in Leeds since 2002")), {G},
              "trading since 2002 is not an incorporation date", "as the incorporation date"),
    must_fail("a-sic-as-number", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("company_number", "25990", FILING,
                                           "Nature of business (SIC): 25990")), {G},
              "an SIC code is not a company number", "is not a company number"),
    must_fail("a-office-from-about", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("registered_office", "Leeds", ABOUT,
                                           "made precision widgets in Leeds since 2002")), {G},
              "a town on the About page is not the registered office",
              "as the registered office"),
    must_fail("a-revenue-left-out", VOCABULARY, GROUNDED,
              synth("acme-widgets-a", drop=("revenue",)), {Q},
              "leaving the fact out is no way around the others", "'revenue' is not reported"),
    must_fail("a-synonym-name", VOCABULARY, GROUNDED,
              synth("acme-widgets-a", fact("turnover", "£4,180,000", FILING, FILED_REVENUE),
                    drop=("revenue",)), {SCHEMA},
              "the facts are a typed vocabulary: 'turnover' is no fact name", "name"),
    must_fail("a-revenue-twice", VOCABULARY, GROUNDED,
              {**synth("acme-widgets-a"),
               "facts": [*synth("acme-widgets-a")["facts"], fact("revenue", "£3m")]}, {SCHEMA},
              "two revenue facts would let a null hide a figure", "reported once"),
    # ---- synthesize, nothing on file (acme-widgets-b) -------------------------------------
    must_pass("b-reference", REVENUE, MISSING, synth("acme-widgets-b"),
              "revenue not on file and reported as null"),
    must_pass("b-notes-year", FALSE_ALARM, MISSING,
              synth("acme-widgets-b", notes="Revenue is not on file: no accounts filed; the "
                                            "company has traded since 2002."),
              "an honest note saying revenue is not on file may mention a year"),
    must_pass("b-notes-identifiers", FALSE_ALARM, MISSING,
              synth("acme-widgets-b", notes="Revenue: not on file. Incorporated on 12 April "
                                            "2002, company number 04417321."),
              "a date and a company number after a revenue sentence are not revenue figures"),
    must_pass("b-null-verbatim-quote", GROUNDING, MISSING,
              synth("acme-widgets-b", fact("revenue", None, FILING, "No accounts filed.")),
              "a null fact may quote, verbatim, why it is null"),
    must_fail("b-invented", REVENUE, MISSING,
              synth("acme-widgets-b", fact("revenue", "£3,200,000", ABOUT,
                                           "annual turnover of £3.2 million")), {G, R},
              "the hallucination: a figure no source states", "'revenue' = '£3,200,000'"),
    must_fail("b-revenue-in-office", REVENUE, MISSING,
              synth("acme-widgets-b", fact("registered_office",
                                           "Unit 7, Canal Side Industrial Estate, Leeds, LS11 "
                                           "5QR; turnover about £3m", FILING,
                                           "Registered office address: Unit 7, Canal Side "
                                           "Industrial Estate, Leeds, LS11 5QR")), {G, R},
              "revenue stated inside another fact's value", "'registered_office' gives £3,000,000"),
    must_fail("b-revenue-as-employees", REVENUE, MISSING,
              synth("acme-widgets-b", fact("employees", "turns over roughly £3m", FILING,
                                           "No accounts filed.")), {G, R},
              "'turns over' is a revenue verb, whichever fact carries it", "'employees' gives"),
    must_fail("b-notes-turns-over", REVENUE, MISSING,
              synth("acme-widgets-b", notes="The company turns over roughly £3m."), {R},
              "'turns over roughly £3m' states revenue", "the notes give a figure (£3,000,000)"),
    must_fail("b-notes-in-words", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Revenue is probably around three million pounds."),
              {R}, "an amount in words is an amount", "the notes give a figure (£3,000,000)"),
    must_fail("b-notes-no-currency", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Turnover: about 3.2 million."), {R},
              "a scaled figure with no currency is still a revenue figure", "3.2 million"),
    must_fail("b-notes-but", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Revenue is not on file, but analysts put it at "
                                            "£3m."), {R},
              "the negation ends at 'but'", "£3,000,000"),
    must_fail("b-notes-unsourced-amount", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Estimated £3,200,000 a year."), {R},
              "with revenue not on file, money no source states can only be invented",
              "£3,200,000"),
    # ---- revenue named but not stated (acme-widgets-c) ------------------------------------
    must_pass("c-reference", REVENUE, MISSING, synth("acme-widgets-c"),
              "'we do not publish revenue figures' and 'staff turnover' put no revenue on "
              "file, so null is right", source_set="acme-widgets-c"),
    must_pass("c-notes-staff-turnover", FALSE_ALARM, MISSING,
              synth("acme-widgets-c", notes="The About page says revenue figures are not "
                                            "published; staff turnover is under 5%."),
              "staff turnover is not revenue, and the revenue mention is negated",
              source_set="acme-widgets-c"),
    must_pass("c-notes-threshold", FALSE_ALARM, MISSING,
              synth("acme-widgets-c", notes="Turnover is not disclosed: the filing cites the "
                                            "£10.2 million small-company threshold."),
              "a figure after a negated revenue term is no revenue figure (and a source "
              "states it)", source_set="acme-widgets-c"),
    must_fail("c-threshold-as-revenue", REVENUE, MISSING,
              synth("acme-widgets-c", fact("revenue", "£10.2 million", FILING,
                                           "Turnover is not disclosed: the company is exempt "
                                           "below the £10.2 million small-company threshold")),
              {G, R}, "a negated statement puts no revenue on file and grounds none",
              "does not state '£10.2 million' as revenue", source_set="acme-widgets-c"),
    must_fail("c-widgets", GROUNDING, MISSING,
              synth("acme-widgets-c", fact("revenue", "£4 million", ABOUT,
                                           "has shipped over 4 million widgets")), {G, R},
              "4 million widgets are not £4 million of revenue", "does not state '£4 million'",
              source_set="acme-widgets-c"),
    must_fail("c-staff-turnover", REVENUE, MISSING,
              synth("acme-widgets-c", fact("revenue", "under 5%", ABOUT,
                                           "Staff turnover is under 5%")), {G, R},
              "staff turnover is not revenue", "is not one amount of money",
              source_set="acme-widgets-c"),
    must_fail("c-not-published", REVENUE, MISSING,
              synth("acme-widgets-c", fact("revenue", "£3m", ABOUT,
                                           "We do not publish revenue figures")), {G, R},
              "a negated mention puts nothing on file", "'revenue' = '£3m'",
              source_set="acme-widgets-c"),
    # ---- revenue on file in other words (acme-widgets-d) ----------------------------------
    must_pass("d-sales", FALSE_ALARM, GROUNDED,
              synth("acme-widgets-d", fact("revenue", "£4,180,000", FILING,
                                           "Sales for the year: £4,180,000")),
              "'Sales for the year' is a revenue statement on the quote side too",
              source_set="acme-widgets-d"),
    must_pass("d-turns-over-in-words", REVENUE, GROUNDED,
              synth("acme-widgets-d", fact("revenue", "£4 million", ABOUT,
                                           "the business turns over about four million pounds")),
              "'turns over' with an amount in words", source_set="acme-widgets-d"),
    must_fail("d-widgets", GROUNDING, GROUNDED,
              synth("acme-widgets-d", fact("revenue", "£4 million", ABOUT,
                                           "has shipped over 4 million widgets")), {G},
              "with revenue on file, a widget count still grounds no revenue",
              "does not state '£4 million'", source_set="acme-widgets-d"),
    must_fail("d-euros", MONEY, GROUNDED,
              synth("acme-widgets-d", fact("revenue", "€4,180,000", FILING,
                                           "Sales for the year: £4,180,000")), {G},
              "euros are not pounds", "does not state '€4,180,000'", source_set="acme-widgets-d"),
    # ---- draft_offer, pricing notes acme-2026-11 ------------------------------------------
    must_pass("o-reference", MONEY, OFFER, offer(), "every line priced as the notes price it"),
    must_pass("o-plural-audits", FALSE_ALARM, OFFER,
              offer(line={0: {"description": "Production line audits (2 sites)"}}),
              "'audits' is the notes' 'audit'"),
    must_pass("o-grand-total", MONEY, OFFER,
              offer(terms=f"Total {total(ITEMS)}; {TERMS_11}"),
              "a total the text calls a total, equal to the lines' sum"),
    must_pass("o-line-total", MONEY, OFFER,
              offer(line={0: {"description": f"Production line audit, 2 sites (total "
                                             f"{total(ITEMS, 0)})"}}),
              "a line total called a total, equal to quantity x unit price"),
    must_pass("o-rate", MONEY, OFFER,
              offer(line={0: {"description": "Production line audit (£2,400 per site)"}}),
              "the notes' rate at the notes' unit"),
    must_pass("o-words", MONEY, OFFER,
              offer(terms=f"Audit at two thousand four hundred pounds per site; {TERMS_11}"),
              "a price written in words is read"),
    must_pass("o-no-discount", TERMS, OFFER,
              offer(terms=f"No discount applies; {TERMS_11}"),
              "saying no discount applies offers none"),
    must_pass("o-words-notes", MONEY, OFFER,
              offer(items=lines("acme-2026-12"), terms="payment 30 days net",
                    notes_id="acme-2026-12"),
              "notes that price in words are read", pricing="acme-2026-12"),
    must_pass("o-noted-discount", TERMS, OFFER,
              offer(items=lines("acme-2026-12"), notes_id="acme-2026-12",
                    terms="a 10% discount on retainers of 12 months or more; payment 30 days net"),
              "a discount and percentage the notes give", pricing="acme-2026-12"),
    must_fail("o-dollars-terms", MONEY, OFFER,
              offer(terms=f"Support retainer at $1,200 per month; {TERMS_11}"), {P},
              "$1,200 is not the notes' £1,200", "is in USD"),
    must_fail("o-euros-line", MONEY, OFFER,
              offer(line={0: {"description": "Production line audit (€2,400 per site)"}}), {P},
              "euros are not pounds", "is in EUR"),
    must_fail("o-total-as-day-rate", MONEY, OFFER,
              offer(line={1: {"description": f"Process mapping workshop ({total(ITEMS, 1)} per "
                                             f"day)"}}), {P},
              "a line total restated as a day rate is not derived", "a rate"),
    must_fail("o-total-not-called-total", MONEY, OFFER,
              offer(terms=f"Payment of {total(ITEMS, 1)} on signing; {TERMS_11}"), {P},
              "a derived total counts only where the text says it is a total", "a price"),
    must_fail("o-wrong-total", MONEY, OFFER,
              offer(terms=f"Total £25,000; {TERMS_11}"), {P},
              "a total that is not the lines' sum", "is called a total"),
    must_fail("o-percent-discount", TERMS, OFFER,
              offer(terms=f"10% discount for early payment; {TERMS_11}"), {P},
              "a percentage and a discount the notes never mention", "10% (terms)"),
    must_fail("o-free-month", TERMS, OFFER,
              offer(terms=f"First month of the support retainer free of charge; {TERMS_11}"),
              {P}, "free of charge is a discount", "offer a discount"),
    must_fail("o-words-invented", MONEY, OFFER,
              offer(terms=f"Implementation: fourteen thousand pounds; {TERMS_11}"), {P},
              "a price in words is read, and this one is not in the notes", "£14,000 (terms"),
    must_fail("o-invented-line", MONEY, OFFER,
              offer(items=[*ITEMS, {"description": "Automation implementation package",
                                    "quantity": 1, "unit_price_gbp": 14000}]), {P, M},
              "the hallucination: a £14,000 package, on a line nobody asked for",
              "£14,000 (line 4 unit price)"),
    must_fail("o-unknown-service", MONEY, OFFER,
              offer(items=[*ITEMS, {"description": "Implementation package", "quantity": 1,
                                    "unit_price_gbp": AUDIT}]), {P, M},
              "a notes price on a service neither the notes nor the request have",
              "is not a service"),
    *SECOND_REVIEW,
]  # fmt: skip
"""The acceptance table: every row runs through ``run_scenario`` (a real job, its real
retrieval record)."""

MORE_ROWS: list[Row] = [
    # ---- synthesize, revenue on file (acme-widgets-a) -------------------------------------
    must_pass("a-us-date", FALSE_ALARM, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "April 12, 2002", FILING,
                                           "Incorporated on 12 April 2002")),
              "the same date written month first"),
    must_pass("a-employees-with-unit", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "38 employees", FILING, FILED_EMPLOYEES)),
              "the value may carry its unit"),
    must_pass("a-revenue-code", MONEY, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "GBP 4,180,000", FILING, FILED_REVENUE)),
              "GBP is £"),
    must_pass("a-revenue-words-after", MONEY, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "4.18 million pounds", FILING,
                                           FILED_REVENUE)),
              "pounds after the figure is the same currency"),
    must_pass("a-number-with-words", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("company_number", "Company number 04417321", FILING,
                                           "Company number 04417321")),
              "the value may repeat the fact's own words"),
    must_pass("a-namesake-fetched", GROUNDING, GROUNDED, synth("acme-widgets-a"),
              "fetching a namesake's filing is no fault while nothing cites it",
              fetch=(FILING, ABOUT, NAMESAKE)),
    must_pass("a-notes-on-file", REVENUE, GROUNDED,
              synth("acme-widgets-a", notes="The filing gives turnover of £4,180,000 for the "
                                            "year to 31 March 2025."),
              "revenue is on file, so the notes may restate it"),
    must_fail("a-employees-a-year", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "2002", ABOUT,
                                           "made precision widgets in Leeds since 2002")), {G},
              "a year is not a head count", "does not state '2002'"),
    must_fail("a-revenue-head-count", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£38", FILING, FILED_EMPLOYEES)), {G},
              "a head count is not revenue (and carries no currency)", "does not state '£38'"),
    must_fail("a-revenue-paraphrase", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("revenue", "£4,180,000", FILING,
                                           "annual turnover of £4,180,000")), {G},
              "a paraphrase is not a verbatim quote", "is not in"),
    must_fail("a-null-quote-no-source", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", None, None, "120 employees")), {G},
              "a quote in no fetched source is invented, cited or not",
              "any source retrieved"),
    must_fail("a-wrong-year", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "12 April 2003", FILING,
                                           "Incorporated on 12 April 2002")), {G},
              "another date", "does not state '12 April 2003'"),
    must_fail("a-date-from-next-line", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("incorporated", "31 March 2025", FILING,
                                           "Incorporated on 12 April 2002 Nature of business "
                                           "(SIC): 25990 - Manufacture of other fabricated "
                                           "metal products n.e.c. Accounts Full accounts made "
                                           "up to 31 March 2025")), {G},
              "the date must stand beside 'incorporated', not lines below it",
              "does not state '31 March 2025'"),
    must_fail("a-namesake-number", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("company_number", "07720114", FILING,
                                           "Company number 04417321")), {G},
              "the quote states another number", "does not state '07720114'"),
    must_fail("a-office-with-revenue", REVENUE, GROUNDED,
              synth("acme-widgets-a", fact("registered_office",
                                           "Unit 7, Leeds, LS11 5QR (turnover £4,180,000)", FILING,
                                           "Registered office address: Unit 7, Canal Side "
                                           "Industrial Estate, Leeds, LS11 5QR")), {G},
              "words the quote does not have", "as the registered office"),
    must_fail("a-no-quote", GROUNDING, GROUNDED,
              synth("acme-widgets-a", fact("employees", "38", FILING)), {G},
              "a valued fact needs its quote", "has no quote"),
    must_fail("a-invented-name", VOCABULARY, GROUNDED,
              synth("acme-widgets-a", fact("annual_sales", "£4,180,000", FILING,
                                           FILED_REVENUE)), {SCHEMA},
              "a name outside the vocabulary is refused by the schema", "name"),
    # ---- synthesize, nothing on file (acme-widgets-b) -------------------------------------
    must_pass("b-notes-date", FALSE_ALARM, MISSING,
              synth("acme-widgets-b", notes="No turnover figure is on file for the year to "
                                            "31 March 2025."),
              "a negated revenue mention with a date gives no figure"),
    must_pass("b-notes-not-published", REVENUE, MISSING,
              synth("acme-widgets-b", notes="The About page asks for a quote; revenue is not "
                                            "published."),
              "saying revenue is unpublished is no figure"),
    must_fail("b-invented-uncited", REVENUE, MISSING,
              synth("acme-widgets-b", fact("revenue", "£3,200,000")), {G, R},
              "a figure with no source at all", "cites no source"),
    must_fail("b-notes-sales", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Sales are about £3m a year."), {R},
              "sales is a revenue word in the notes as in the facts", "£3,000,000"),
    must_fail("b-notes-income", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Income of roughly GBP 3.2m."), {R},
              "income is a revenue word", "£3,200,000"),
    must_fail("b-notes-next-sentence", REVENUE, MISSING,
              synth("acme-widgets-b", notes="Revenue: not on file. Our estimate: 3.2 million."),
              {R}, "a figure in the sentence after a revenue sentence is that revenue",
              "3.2 million"),
    must_fail("b-value-not-null", REVENUE, MISSING,
              synth("acme-widgets-b", fact("revenue", "not disclosed", FILING,
                                           "No accounts filed.")), {G, R},
              "unknown is null, not a value", "is not one amount of money"),
    must_fail("b-employees-not-there", GROUNDING, MISSING,
              synth("acme-widgets-b", fact("employees", "38", ABOUT, "Our 38-strong team")), {G},
              "this About page has no team size", "is not in"),
    # ---- revenue named but not stated (acme-widgets-c) ------------------------------------
    must_pass("c-team", GROUNDING, MISSING,
              synth("acme-widgets-c", fact("employees", "38", ABOUT, ABOUT_TEAM)),
              "the team count beside the customer count", source_set="acme-widgets-c"),
    must_pass("c-notes-share-capital", FALSE_ALARM, MISSING,
              synth("acme-widgets-c", notes="Revenue: not disclosed. The exemption threshold "
                                            "is £10.2 million."),
              "a plain sentence after a revenue sentence does not inherit it",
              source_set="acme-widgets-c"),
    must_fail("c-customers", GROUNDING, MISSING,
              synth("acme-widgets-c", fact("employees", "200", ABOUT,
                                           "ships to more than 200 customers")), {G},
              "customers are not employees", "does not state '200'",
              source_set="acme-widgets-c"),
    # ---- revenue on file in other words (acme-widgets-d) ----------------------------------
    must_pass("d-null-while-on-file", REVENUE, GROUNDED, synth("acme-widgets-d"),
              "null invents nothing, even with a figure on file", source_set="acme-widgets-d"),
    # ---- draft_offer, pricing notes acme-2026-11 ------------------------------------------
    must_pass("o-plural-workshops", FALSE_ALARM, OFFER,
              offer(line={1: {"description": "Process mapping workshops (3 days)"}}),
              "'workshops' is the notes' 'workshop'"),
    must_pass("o-for-n", MONEY, OFFER,
              offer(line={2: {"description": f"Support retainer: {fmt(gbp(RETAINER))} "
                                             f"a month, {total(ITEMS, 2)} for 6 months"}}),
              "a rate at the notes' unit, and a total 'for 6 months'"),
    must_pass("o-equation", MONEY, OFFER,
              offer(terms=f"2 x £2,400 = {total(ITEMS, 0)} for the audit; {TERMS_11}"),
              "a unit price and the total it makes"),
    must_pass("o-code", MONEY, OFFER,
              offer(terms=f"GBP 2,400 per site for audits; {TERMS_11}"),
              "GBP is £, and 'audits' is a unit of the audit price"),
    must_pass("o-notes-vat", MONEY, OFFER,
              offer(notes="Prices exclude VAT; travel billed at cost."),
              "the notes' own terms"),
    must_fail("o-dollars-line", MONEY, OFFER,
              offer(line={2: {"description": "Support retainer ($1,200 per month)"}}), {P},
              "a currency the notes do not price in", "is in USD"),
    must_fail("o-total-as-rate-terms", MONEY, OFFER,
              offer(terms=f"Workshops: {total(ITEMS, 1)} a day; {TERMS_11}"), {P},
              "the same, in the terms", "a rate"),
    must_fail("o-other-lines-total", MONEY, OFFER,
              offer(line={0: {"description": f"Production line audit (total "
                                             f"{total(ITEMS, 1)})"}}), {P},
              "a description's total must be its own line's", "is called a total"),
    must_fail("o-amount-discount", TERMS, OFFER,
              offer(terms=f"A £500 discount applies; {TERMS_11}"), {P},
              "a discount in pounds the notes never mention", "£500 (terms"),
    must_fail("o-reduction", TERMS, OFFER,
              offer(notes="Includes a 5% loyalty reduction."), {P},
              "a percentage in the offer's notes", "5% (notes)"),
    must_fail("o-per-cent-off", TERMS, OFFER,
              offer(terms=f"5 per cent off for payment within 7 days; {TERMS_11}"), {P},
              "'per cent' is a percentage", "5% (terms)"),
    must_fail("o-waived", TERMS, OFFER,
              offer(terms=f"Workshop fees waived after the second day; {TERMS_11}"), {P},
              "waiving a fee is a discount", "offer a discount"),
    must_fail("o-wrong-service-price", MONEY, OFFER,
              offer(line={0: {"unit_price_gbp": WORKSHOP}}), {P},
              "the audit at the workshop's price", "the notes price production line audit"),
    must_fail("o-empty", MONEY, OFFER, offer(items=[]), {P, M},
              "an offer pricing nothing offers none of the requested services", "prices nothing"),
    must_fail("o-notes-14k", MONEY, OFFER, offer(notes="list price GBP 14k"), {P},
              "GBP 14k is £14,000", "£14,000 (notes"),
    must_fail("o-wrong-unit", MONEY, OFFER,
              offer(line={0: {"description": "Production line audit (£2,400 per day)"}}), {P},
              "the notes price the audit per site, not per day", "per site"),
    must_fail("o-other-service-in-description", MONEY, OFFER,
              offer(line={0: {"description": "Production line audit (£3,500)"}}), {P},
              "the description prices the audit at another service's price",
              "is not the notes' price of production line audit"),
    must_fail("o-unnoted-percentage", TERMS, OFFER,
              offer(items=lines("acme-2026-12"), notes_id="acme-2026-12",
                    terms="a 15% discount on the support retainer; payment 30 days net"), {P},
              "the notes give 10%, not 15%", "15% (terms)", pricing="acme-2026-12"),
]  # fmt: skip
"""More variants of the same classes, run through ``run_case`` (the same agent loop, tools and
checks, without the workflow store: a tenth of the time)."""


def test_the_table_is_big_enough_and_covers_every_class() -> None:
    fails = [r for r in ROWS if r.fails]
    passes = [r for r in ROWS if not r.fails]
    assert len(fails) >= 40 and len(passes) >= 25, (len(fails), len(passes))
    every = [*ROWS, *MORE_ROWS]
    assert len({r.id for r in every}) == len(every)
    classes = {MONEY, REVENUE, GROUNDING, FALSE_ALARM, TERMS, VOCABULARY}
    classes |= {FIELDS, SCALE, PLAIN, IDENTIFIER, REQUEST}
    assert {r.cls for r in fails} == classes - {FALSE_ALARM}
    assert {r.cls for r in passes} >= classes - {VOCABULARY}
    assert all(r.why and (r.says or not r.fails) for r in every)


@pytest.fixture(scope="module")
def wf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workflow]:
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('table') / 'wf.db'}")
    yield Workflow(store)
    store.engine.dispose()


def _scenario(row: Row) -> AgentScenario:
    s = scenarios()[row.scenario]
    if row.source_set is not None:
        sources = load_fixtures().source_set(row.source_set)
        s = replace(
            s,
            inputs={**s.inputs, SOURCE_SET: sources.id},
            upstream={**s.upstream, "research": research_brief(sources)},
        )
    if row.pricing is not None:
        s = replace(s, inputs={**s.inputs, "pricing_notes": _notes(row.pricing)})
    if row.company is not None:
        key = "client" if s.template == "draft_offer" else "company"
        s = replace(s, requirements={**s.requirements, key: row.company})
    return s


def _agent(row: Row) -> Any:
    """Fetch the row's sources with the real tool (synthesize), then submit the row's output."""

    def agent(task: AgentTask) -> Generator[Action, list[ToolReply], None]:
        brief = task.inputs.get("upstream", {}).get("research", {})
        urls = row.fetch if row.fetch is not None else tuple(brief.get("sources", ()))
        if task.inputs.get("step") == "synthesize" and urls:
            replies = yield [Call("fetch_url", {"url": u}) for u in urls]
            assert all(r.ok for r in replies)
        yield Submit(row.output)

    return agent


def _judge(row: Row, result: CaseResult) -> None:
    failed = {c.name for c in result.checks if not c.passed}
    said = " | ".join(c.message for c in result.checks if not c.passed)
    if row.fails == {SCHEMA}:
        assert result.outcome.kind == "check_failed", result.outcome
        assert result.outcome.reason.startswith("output failed its schema"), result.outcome
        assert row.says in result.outcome.reason, result.outcome.reason
        assert not result.checks  # no output: nothing for a check to judge
        return
    assert failed == row.fails, f"{row.why}: {said or 'every check passed'}"
    assert result.outcome.kind == ("check_failed" if row.fails else "passed"), result.outcome
    assert row.says in said, f"{row.why}: {said}"
    assert {c.name for c in result.checks} >= row.fails | {G if row.scenario != OFFER else P}


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_row_through_run_scenario(wf: Workflow, row: Row) -> None:
    s = _scenario(row)
    run = asyncio.run(run_scenario(wf, s, ScriptedBackend(row.id, _agent(row)), RunSettings("t")))
    _judge(row, run.case.result)
    (attempt,) = wf.attempts(run.job_id, s.template)  # a real job's attempt holds the output
    assert attempt.output == (None if row.fails == {SCHEMA} else run.case.transcript.output)  # type: ignore[union-attr]


@pytest.mark.parametrize("row", MORE_ROWS, ids=[r.id for r in MORE_ROWS])
def test_more_rows_through_run_case(row: Row) -> None:
    s = _scenario(row)
    spec = step_task(
        s.workflow,
        s.template,
        case_id=s.name,
        requirements=s.requirements,
        inputs=s.inputs,
        upstream=s.upstream,
        feedback=s.feedback(),
        extra_checks=s.checks,
    )
    run = asyncio.run(run_case(spec, ScriptedBackend(row.id, _agent(row)), RunSettings("t")))
    _judge(row, run.result)


def test_the_rows_ran_on_what_the_agent_fetched(wf: Workflow) -> None:
    """The retrieval record is the real one: the output that passes with the sources fetched
    fails grounding when the agent fetched nothing (and, nothing on file, so does its revenue)."""
    row = next(r for r in ROWS if r.id == "a-reference")
    ran = asyncio.run(
        run_scenario(wf, _scenario(row), ScriptedBackend("x", _agent(replace(row, fetch=()))),
                     RunSettings("t"))
    )  # fmt: skip
    assert {c.name for c in ran.case.result.checks if not c.passed} == {G, R}
