"""The lead-intelligence checks catch exactly what they exist for, on hand-built contexts and on
the scripted agents, and the step prompt carries what the job holds (feedback included)."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.checks.base import CheckContext, Trace
from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.evaluation.runner import run_case
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.reading.money import amounts_in, fmt
from agentic_eval.workflow.lead_intel.agents import AGENTS, INVENTED_LINE
from agentic_eval.workflow.lead_intel.checks import (
    assert_facts_grounded,
    assert_price_from_notes,
    assert_requested_facts_reported,
    assert_revenue_not_on_file,
)
from agentic_eval.workflow.lead_intel.fixtures import COMMITTED, load_fixtures
from agentic_eval.workflow.lead_intel.outputs import (
    FACT_NAMES,
    Fact,
    LineItem,
    OfferDraft,
    VerifiedIntel,
)
from agentic_eval.workflow.lead_intel.pricing import note_prices
from agentic_eval.workflow.lead_intel.templates import CHECKS_BY_TEMPLATE, LEAD_INTELLIGENCE
from agentic_eval.workflow.lead_intel.tools import LeadEnv, Retrieval
from agentic_eval.workflow.scenarios import AgentScenario, UnknownScenario, get_scenario, scenarios
from agentic_eval.workflow.steps import step_task

FILING = "https://registry.example.gov.uk/company/04417321"
ABOUT = "https://acme-widgets.example/about"
NAMESAKE = "https://registry.example.gov.uk/company/07720114"


def _env(set_id: str, fetched: list[str]) -> LeadEnv:
    sources = load_fixtures().source_set(set_id)
    return LeadEnv(sources, [Retrieval(u, sources.page(u).text) for u in fetched])


def _ctx(output: Any, env: LeadEnv, inputs: dict[str, Any] | None = None) -> CheckContext[Any]:
    case = CaseSpec(id="c", kind="k", instruction="i", inputs=inputs or {}, expected={})
    return CheckContext(case=case, output=output, trace=Trace((), ()), env=env)


def _intel(*facts: Fact) -> VerifiedIntel:
    return VerifiedIntel(company_name="ACME WIDGETS LTD", facts=list(facts))


def test_grounding_normalises_whitespace_and_case_but_nothing_else() -> None:
    env = _env("acme-widgets-a", [FILING, ABOUT])
    ok = Fact(name="employees", value="38", source_url=ABOUT, quote="OUR 38-STRONG   TEAM ships")
    result = assert_facts_grounded(_ctx(_intel(ok), env))
    assert not isinstance(result, list) and result.passed, result
    null = Fact(name="revenue", value=None)
    assert assert_facts_grounded(_ctx(_intel(ok, null), env)).passed  # type: ignore[union-attr]
    for bad, why in [
        (ok.model_copy(update={"quote": "our 39-strong team"}), "is not in"),
        (ok.model_copy(update={"source_url": "https://elsewhere.example/"}), "not retrieved"),
        (ok.model_copy(update={"source_url": None}), "cites no source"),
        (ok.model_copy(update={"quote": "  "}), "has no quote"),
    ]:
        got = assert_facts_grounded(_ctx(_intel(bad), env))
        assert not isinstance(got, list)
        assert not got.passed and why in got.message, got.message


def test_a_source_that_exists_but_was_not_fetched_does_not_ground_a_fact() -> None:
    env = _env("acme-widgets-a", [FILING])  # the About page exists, but was not retrieved
    fact = Fact(name="employees", value="38", source_url=ABOUT, quote="38-strong team")
    got = assert_facts_grounded(_ctx(_intel(fact), env))
    assert not isinstance(got, list) and not got.passed and "not retrieved" in got.message


def test_revenue_must_be_null_only_when_no_retrieved_source_states_it() -> None:
    invented = Fact(name="revenue", value="£3m", source_url=ABOUT, quote="x")
    missing = _env("acme-widgets-b", [FILING, ABOUT])
    got = assert_revenue_not_on_file(_ctx(_intel(invented), missing))
    assert not isinstance(got, list) and not got.passed and "£3m" in got.message
    null = Fact(name="revenue", value=None)
    assert assert_revenue_not_on_file(_ctx(_intel(null), missing)).passed  # type: ignore[union-attr]
    on_file = _env("acme-widgets-a", [FILING])
    assert assert_revenue_not_on_file(_ctx(_intel(invented), on_file)).passed  # type: ignore[union-attr]
    nothing_fetched = _env("acme-widgets-a", [])
    got = assert_revenue_not_on_file(_ctx(_intel(invented), nothing_fetched))
    assert not isinstance(got, list) and not got.passed


def _notes() -> str:
    return load_fixtures().notes("acme-2026-11").text


def _offer(*lines: LineItem, terms: str = "30 days net", notes: str = "") -> OfferDraft:
    return OfferDraft(client="Acme", line_items=list(lines), terms=terms, notes=notes)


def _price_check(offer: OfferDraft) -> Any:
    env = _env("acme-widgets-a", [])
    got = assert_price_from_notes(_ctx(offer, env, {"pricing_notes": _notes()}))
    assert not isinstance(got, list)
    return got


def test_prices_must_come_from_the_notes_and_derived_totals_pass() -> None:
    services = note_prices(_notes())
    assert len(services) >= 2, "the committed notes price several services"
    first, other = services[0], services[1]
    price = first.amount.value
    line = LineItem(
        description=f"{first.service.title()} (2 sites)", quantity=2, unit_price_gbp=float(price)
    )
    total = fmt(replace(first.amount, value=price * 2))
    good = _offer(line, terms=f"Total {total}; 30 days net")
    assert _price_check(good).passed, _price_check(good).message
    in_description = line.model_copy(update={"description": f"{first.service} ({total} for 2)"})
    assert _price_check(_offer(in_description)).passed  # a line total is derived, not invented
    invented = LineItem(**INVENTED_LINE)
    noted = {a.key for a in amounts_in(_notes())}
    assert ("GBP", Decimal(repr(invented.unit_price_gbp))) not in noted
    other_service = LineItem(
        description="Implementation package",
        quantity=1,
        unit_price_gbp=float(other.amount.value),
    )
    for bad, why in [
        (_offer(line, invented), "£14,000 (line 2 unit price)"),
        (_offer(line, terms="a GBP 14k discount applies"), "£14,000 (terms"),
        (_offer(line, notes="list price 14,000 pounds"), "£14,000 (notes"),
        (_offer(line, notes="£2,400,000GBP"), "£2,400,000 (notes"),
        (
            _offer(line.model_copy(update={"unit_price_gbp": float(other.amount.value)})),
            f"the notes price {first.service}",
        ),
        (_offer(other_service), "not a service"),
        (_offer(), "prices nothing"),
        (_offer(line, terms=f"{total} on signing"), "a price"),  # a total not called one
    ]:
        got = _price_check(bad)
        assert not got.passed and why in got.message, (why, got.message)


def test_amounts_are_read_in_every_common_form_whole_and_with_their_currency() -> None:
    cases = {
        "£2,400 or £3.5k or £4 million; £0.50": [("GBP", "2400"), ("GBP", "3500"),
                                                   ("GBP", "4000000"), ("GBP", "0.5")],
        "GBP 14,000 / 14,000 pounds / £  14,000 / 14k GBP": [("GBP", "14000")] * 4,
        "$14,000 / US$ 14,000 / 14,000 dollars": [("USD", "14000")] * 3,
        "€2,400 / 2,400 euros / EUR 2.4k": [("EUR", "2400")] * 3,
        "two thousand four hundred pounds; half a million pounds": [("GBP", "2400"),
                                                                    ("GBP", "500000")],
        "£14,000 GBP": [("GBP", "14000")],
        "£2,400,000GBP": [("GBP", "2400000")],
        "payment 30 days net; 10% off; incorporated 2002-04-12; LS11 5QR; 4 million": [],
        "£3.2mn, $3.2MM, €3.2 mln, GBP 0.0032bn, 3,2 Mio. EUR": [("GBP", "3200000"),
            ("USD", "3200000"), ("EUR", "3200000"), ("GBP", "3200000"), ("EUR", "3200000")],
        "GBP14,000 / CHF 14,000 / 14,000 Swiss francs / A$14,000": [("GBP", "14000"),
            ("CHF", "14000"), ("CHF", "14000"), ("A$", "14000")],
        "\u20a43,200,000": [("\u20a4", "3200000")],
        "SIC 25990; VAT 20%; ALL 3 SITES; TOP 10; 25mm; Unit 7b; £3.2zz": [],
    }  # fmt: skip
    for text, want in cases.items():
        assert [a.key for a in amounts_in(text)] == [(c, Decimal(v)) for c, v in want], text
    (unreadable,) = amounts_in("about £3.2zz", uncertain=True)
    assert unreadable.uncertain and unreadable.currency == "GBP"


def test_numbers_glued_to_unknown_letters_are_uncertain_and_identifiers_are_marked() -> None:
    from agentic_eval.reading.numbers import numbers_in

    def read(text: str) -> list[tuple[str, bool, bool]]:
        found = numbers_in(text, uncertain=True)
        return [(text[n.start : n.end], n.uncertain, n.identifier) for n in found]

    assert read("3.2zz a year, 14kk, LS11 5QR, 2nd site, Unit 7b") == [
        ("3.2zz", True, False), ("14kk", True, False), ("5QR", True, False),
        ("7b", True, False),
    ]  # fmt: skip
    assert numbers_in("3.2zz a year, 14kk") == []  # left out unless asked for
    assert read("the SIC code is 25990, reference 48213, no. 7, number: 3.2 million") == [
        ("25990", False, True), ("48213", False, True), ("7", False, True),
        ("3.2 million", False, False),
    ]  # fmt: skip
    assert [n.value for n in numbers_in("10pc off, 5 per-cent, £2b, 3.2b")] == [
        Decimal(10), Decimal(5), Decimal(2_000_000_000), Decimal(3_200_000_000),
    ]  # fmt: skip


def test_every_string_field_of_an_output_is_read() -> None:
    from agentic_eval.workflow.lead_intel.fields import plain_copy, string_fields

    def leaves(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            return [x for v in value.values() for x in leaves(v)]  # type: ignore[union-attr]
        if isinstance(value, list):
            return [x for v in value for x in leaves(v)]  # type: ignore[union-attr]
        return []

    intel = _intel(Fact(name="revenue", value=None, source_url=FILING, quote="No accounts"))
    offer = _offer(LineItem(description="Audit", quantity=1, unit_price_gbp=1), notes="n")
    for out in (intel.model_copy(update={"notes": "x"}), offer):
        assert sorted(t for _, t in string_fields(out)) == sorted(leaves(out.model_dump()))
    hidden = intel.model_copy(update={"company_name": "Acme Rev\u00adenue"})
    assert plain_copy(hidden).company_name == "Acme Revenue"
    assert ("facts[0].quote", "No accounts") in string_fields(intel)


def test_grounding_cannot_be_fooled_by_trivial_quotes_or_a_namesake() -> None:
    env = _env("acme-widgets-a", [FILING, ABOUT, NAMESAKE])
    req = {"requirements": {"company": "Acme Widgets Ltd", "facts": ["revenue"]}}
    filed = "Turnover for the year: £4,180,000"
    for fact, why in [
        (Fact(name="revenue", value="£3,200,000", source_url=ABOUT, quote="a"), "does not state"),
        (
            Fact(name="revenue", value="£9,999,999", source_url=FILING, quote=filed),
            "does not state",
        ),
        (
            Fact(
                name="revenue",
                value="£212,000",
                source_url=NAMESAKE,
                quote="Turnover for the year: £212,000",
            ),
            "not about Acme Widgets Ltd",
        ),
    ]:
        got = assert_facts_grounded(_ctx(_intel(fact), env, req))
        assert not isinstance(got, list) and not got.passed and why in got.message, got.message
    same = Fact(name="revenue", value="£4.18 million", source_url=FILING, quote=filed)
    assert assert_facts_grounded(_ctx(_intel(same), env, req)).passed  # type: ignore[union-attr]


def test_the_facts_are_a_typed_vocabulary_the_model_sees() -> None:
    from pydantic import ValidationError

    from agentic_eval.agent.loop import submit_spec

    schema = json.dumps(submit_spec(VerifiedIntel).input_schema)
    assert all(f'"{n}"' in schema for n in FACT_NAMES) and '"enum"' in schema
    for renamed in ["annual_sales", "Income", "Turnover (FY25)", "turnover"]:
        with pytest.raises(ValidationError):
            Fact(name=renamed, value="£3.2m", source_url=ABOUT, quote="x")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="reported once"):
        _intel(Fact(name="revenue", value=None), Fact(name="revenue", value="£3m"))


def test_revenue_cannot_be_hidden_in_another_fact_the_notes_or_left_out() -> None:
    missing = _env("acme-widgets-b", [FILING, ABOUT])
    hidden = _intel(Fact(name="employees", value="38; turnover £3.2m", source_url=ABOUT, quote="x"))
    assert not assert_revenue_not_on_file(_ctx(hidden, missing)).passed  # type: ignore[union-attr]
    noted = VerifiedIntel(company_name="Acme", facts=[], notes="Revenue is about £3.2 million")
    assert not assert_revenue_not_on_file(_ctx(noted, missing)).passed  # type: ignore[union-attr]
    honest = VerifiedIntel(
        company_name="Acme", facts=[], notes="Revenue is not on file; trading since 2002."
    )
    assert assert_revenue_not_on_file(_ctx(honest, missing)).passed  # type: ignore[union-attr]
    req = {"requirements": {"facts": ["employees", "revenue"]}}
    partial = _intel(Fact(name="employees", value=None))
    got = assert_requested_facts_reported(_ctx(partial, missing, req))
    assert not isinstance(got, list) and not got.passed and "'revenue'" in got.message
    unknown = {"requirements": {"facts": ["employees", "share capital"]}}
    got = assert_requested_facts_reported(_ctx(partial, missing, unknown))
    assert not isinstance(got, list) and not got.passed and "not one a synthesize" in got.message
    spelled = {"requirements": {"facts": ["Employees"]}}
    assert assert_requested_facts_reported(_ctx(partial, missing, spelled)).passed  # type: ignore[union-attr]


def test_the_companys_own_name_is_no_revenue_statement() -> None:
    missing = _env("acme-widgets-b", [FILING, ABOUT])
    named = VerifiedIntel(company_name="SALES 4000", facts=[], notes="Trades as Sales 4000.")
    for company, passed in [("Sales 4000", True), ("Acme Widgets Ltd", False)]:
        req = {"requirements": {"company": company}}
        got = assert_revenue_not_on_file(_ctx(named, missing, req))
        assert not isinstance(got, list) and got.passed is passed, (company, got.message)


def test_one_revenue_lexicon_with_negation_decides_what_a_text_says() -> None:
    from agentic_eval.workflow.lead_intel.revenue import revenue_figures

    cases = {
        "Turnover for the year: £4,180,000": ["4180000"],
        "Sales for the year: £4,180,000": ["4180000"],
        "the business turns over about four million pounds a year": ["4000000"],
        "Income: roughly 3.2 million.": ["3200000"],
        "Revenue is not on file, but analysts put it at £3m.": ["3000000"],
        "Revenue: not on file. Our estimate: 3.2 million.": ["3200000"],
        "We do not publish revenue figures.": [],
        "Staff turnover is under 5%.": [],
        "Employee turnover fell to 4,000 leavers.": [],
        "Our sales team of 4,000 people.": [],
        "Income tax paid: £3m.": [],
        "Staff turnover cost £40,000 in recruitment.": [],
        "No accounts filed.": [],
        "has shipped over 4 million widgets, and revenue grew": [],
        "Revenue is not on file; the company has traded since 2002.": [],
        "No turnover figure is on file for the year to 31 March 2025.": [],
        "Revenue is £4m, not £3m.": ["4000000"],
        "Revenue is unknown (we estimate 3.2 million).": ["3200000"],
        "Revenue is not disclosed, estimated at 3.2 million.": ["3200000"],
        "No revenue on file. 3.2m.": ["3200000"],
        "No revenue on file. Share capital 100,000.": [],
    }
    for text, want in cases.items():
        assert [str(f.number.value) for f in revenue_figures(text)] == want, text


def test_a_quote_states_a_value_as_that_fact_read_in_its_source() -> None:
    from agentic_eval.workflow.lead_intel.facts import states_fact

    sources = load_fixtures().source_set("acme-widgets-a")
    filing, about = sources.page(FILING).text, sources.page(ABOUT).text
    team = "Our 38-strong team ships to more than 200 customers"
    assert states_fact("employees", "38", team, about)
    assert not states_fact("employees", "200", team, about)
    assert not states_fact("employees", "200", "ships to more than 200", about)  # cut quote
    assert states_fact("incorporated", "2002-04-12", "Incorporated on 12 April 2002", filing)
    assert not states_fact("incorporated", "2002-12-04", "Incorporated on 12 April 2002", filing)
    assert states_fact("revenue", "£4.18m", "Turnover for the year: £4,180,000", filing)
    assert not states_fact("revenue", "£4", "Turnover for the year: £4", filing)  # read whole
    assert not states_fact("revenue", "$4,180,000", "Turnover for the year: £4,180,000", filing)
    assert not states_fact("revenue", "£4,180,000", "£4,180,000", filing)  # no fact words
    assert states_fact("company_number", "04417321", "Company number 04417321", filing)


def test_null_facts_cite_and_quote_only_what_was_retrieved() -> None:
    env = _env("acme-widgets-a", [FILING])
    for null, passed in [
        (Fact(name="revenue", value=None), True),
        (Fact(name="revenue", value=None, source_url=FILING, quote="Company status: Active"), True),
        (Fact(name="revenue", value=None, source_url=ABOUT), False),  # exists, never fetched
        (Fact(name="revenue", value=None, quote="annual turnover of £3.2 million"), False),
        (Fact(name="revenue", value=None, source_url=FILING, quote="revenue passed"), False),
    ]:
        got = assert_facts_grounded(_ctx(_intel(null), env))
        assert not isinstance(got, list) and got.passed is passed, (null, got.message)


def test_a_discount_is_read_in_any_words_and_a_negated_one_offers_none() -> None:
    from agentic_eval.workflow.lead_intel.pricing import discounts_in

    offered = ["10% off", "a £500 discount", "first month free of charge", "fees waived"]
    offered += ["one day free", "a rebate of £100", "at no extra cost"]
    offered += ["No charge for the third day", "no extra fee for weekend work", "half price"]
    offered += ["half-price audit", "on the house", "10pc off", "2 for 1", "a 5% reduction"]
    offered += ["reduced fee", "fee-free cancellation", "free-of-charge"]
    for text in offered:
        assert discounts_in(text), text
    none = ["No discount applies.", "Discounts: none.", "discounts do not apply"]
    none += ["without any discount", "Feel free to call.", "travel billed at cost"]
    none += ["scrap reduction (per site)", "hassle-free cancellation", "risk free to book"]
    none += ["No additional charges apply.", "free from defects", "free-form notes"]
    for text in none:
        assert not discounts_in(text), text


def test_checks_by_template_attach_the_universal_checks() -> None:
    assert [c.name for c in CHECKS_BY_TEMPLATE["synthesize"]] == [
        "assert_facts_grounded",
        "assert_requested_facts_reported",
        "assert_revenue_not_on_file",
    ]
    assert [c.name for c in CHECKS_BY_TEMPLATE["draft_offer"]] == [
        "assert_price_from_notes",
        "assert_offer_matches_request",
    ]
    assert CHECKS_BY_TEMPLATE["research"] == ()
    for s in scenarios().values():
        universal = {c.name for c in CHECKS_BY_TEMPLATE[s.template]}
        assert universal <= {c.name for c in s.all_checks()}
        assert s.max_failure_rate == 0.01


def _run(s: AgentScenario, agent: str) -> Any:
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
    backend = ScriptedBackend(agent, AGENTS[agent])
    return asyncio.run(run_case(spec, backend, RunSettings(model=f"scripted:{agent}")))


# What each check exists to catch, and the scenario where the hallucinating agent meets it.
CAUGHT = {
    "synthesize.grounded": {"assert_facts_grounded"},
    "synthesize.missing_revenue": {"assert_facts_grounded", "assert_revenue_not_on_file"},
    "synthesize.after_rejection": {"assert_facts_grounded", "assert_revenue_not_on_file"},
    # the invented £14,000 package is a price the notes do not give, on a line nobody asked for
    "draft_offer.price_from_notes": {"assert_price_from_notes", "assert_offer_matches_request"},
}


@pytest.mark.parametrize("name", list(CAUGHT))
def test_reference_passes_and_hallucinating_is_caught_by_the_right_checks(name: str) -> None:
    s = get_scenario(name)
    ref = _run(s, "reference")
    assert ref.result.outcome.kind == "passed", ref.result
    bad = _run(s, "hallucinating")
    failed = {c.name for c in bad.result.checks if not c.passed}
    assert bad.result.outcome.kind == "check_failed"
    assert failed == CAUGHT[name]
    for check in failed:
        assert check in bad.result.outcome.reason


def test_the_learner_corrects_what_the_feedback_names() -> None:
    assert _run(get_scenario("synthesize.missing_revenue"), "learner").result.outcome.kind == (
        "check_failed"
    )
    assert _run(get_scenario("synthesize.after_rejection"), "learner").result.outcome.kind == (
        "passed"
    )


def test_the_feedback_is_in_the_prompt_and_hidden_inputs_are_not() -> None:
    s = get_scenario("synthesize.after_rejection")
    spec = step_task(
        s.workflow,
        s.template,
        case_id=s.name,
        requirements=s.requirements,
        inputs=s.inputs,
        upstream=s.upstream,
        feedback=s.feedback(),
    )
    assert "the revenue figure was wrong last time" in spec.task
    assert "acme-widgets-b" not in spec.task  # which source set the tools serve stays hidden
    assert json.dumps(s.upstream["research"]["sources"][0]) in spec.task


def test_unknown_scenarios_suggest_the_closest() -> None:
    with pytest.raises(UnknownScenario, match=r"did you mean synthesize\.grounded"):
        get_scenario("synthesize.grounde")


def test_a_scenario_must_seed_every_upstream_step() -> None:
    with pytest.raises(ValueError, match="upstream"):
        AgentScenario(
            name="x",
            workflow=LEAD_INTELLIGENCE,
            template="draft_offer",
            description="",
            requirements={},
            inputs={},
            upstream={"research": {}},
        )


def test_external_fixtures_replace_the_committed_ones_and_mark_scenarios(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real" / "lead_intelligence"
    real.mkdir(parents=True)
    shutil.copy(COMMITTED, real / "sources.json")
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "real"))
    marks = {s.external_fixtures for s in scenarios().values()}
    assert len(marks) == 1 and None not in marks
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    data["source_sets"][0]["pages"] = "not a list"
    (real / "sources.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        FixtureError, match=r"sources.json: invalid fixtures at source_sets\.0\.pages"
    ):
        scenarios()
