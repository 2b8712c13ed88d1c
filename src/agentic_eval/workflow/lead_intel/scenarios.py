"""The lead-intelligence scenarios, seeded from the committed (or external) fixtures.

- ``synthesize.grounded``: the sources state revenue; every valued fact must be grounded.
- ``synthesize.missing_revenue``: "No accounts filed" and "contact us for a quote": any revenue
  figure is a hallucination, and ``assert_revenue_not_on_file`` must fail it.
- ``synthesize.after_rejection``: the same inputs, after an operator rejected an attempt with
  "the revenue figure was wrong last time": the feedback reaches the prompt.
- ``draft_offer.price_from_notes``: every price must come from the operator's pricing notes.
"""

from __future__ import annotations

from typing import Any

from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.workflow.lead_intel.agents import INVENTED_REVENUE, read_facts
from agentic_eval.workflow.lead_intel.checks import assert_revenue_not_on_file
from agentic_eval.workflow.lead_intel.fixtures import SourceSet, external_fixtures, load_fixtures
from agentic_eval.workflow.lead_intel.outputs import FACT_NAMES
from agentic_eval.workflow.lead_intel.templates import LEAD_INTELLIGENCE, SOURCE_SET
from agentic_eval.workflow.scenarios import AgentScenario, JobFixture

COMPANY = "Acme Widgets Ltd"
WEBSITE = "https://acme-widgets.example/about"
FACTS = list(FACT_NAMES)
"""The facts every synthesize scenario requests: the whole vocabulary of the output model."""
REJECTION = "the revenue figure was wrong last time"
SERVICES = [
    {"service": "Production line audit", "quantity": 2},
    {"service": "Process mapping workshop", "quantity": 3},
    {"service": "Support retainer", "quantity": 6},
]


def research_brief(sources: SourceSet) -> dict[str, Any]:
    """The approved research output a synthesize job starts from: the company's filing and its
    website, as the registry lists them."""
    found = [e for e in sources.registry if e.name.casefold() == COMPANY.casefold()]
    if not found:
        raise KeyError(f"a registry entry named {COMPANY!r} in source set {sources.id!r}")
    entry = found[0]
    return {
        "company_name": entry.name,
        "company_number": entry.company_number,
        "sources": [entry.url, WEBSITE],
    }


def verified_intel(sources: SourceSet) -> dict[str, Any]:
    """The approved synthesize output a draft_offer job starts from."""
    brief = research_brief(sources)
    texts = {u: sources.page(u).text for u in brief["sources"]}
    return {"company_name": brief["company_name"], "facts": read_facts(FACTS, texts), "notes": ""}


def _with_invented_revenue(intel: dict[str, Any]) -> dict[str, Any]:
    facts = [
        {**f, **INVENTED_REVENUE, "source_url": WEBSITE} if f["name"] == "revenue" else f
        for f in intel["facts"]
    ]
    return {**intel, "facts": facts}


def build_scenarios() -> list[AgentScenario]:
    """The four scenarios of the product description.

    Raises:
        FixtureError: When the fixtures lack what a scenario is built from (one line, naming
            the file and what is missing).
    """
    try:
        return _build()
    except KeyError as exc:
        raise FixtureError(
            f"{load_fixtures.path()}: the lead-intelligence scenarios need {exc.args[0]}, "
            "which these fixtures do not have"
        ) from None


def _build() -> list[AgentScenario]:
    fixtures = load_fixtures()
    mark = external_fixtures()
    filed, unfiled = fixtures.source_set("acme-widgets-a"), fixtures.source_set("acme-widgets-b")
    notes = fixtures.notes("acme-2026-11")
    synth_req = {"company": COMPANY, "website": WEBSITE, "facts": FACTS}
    missing_inputs = {SOURCE_SET: unfiled.id}
    common: dict[str, Any] = {"workflow": LEAD_INTELLIGENCE, "external_fixtures": mark}
    return [
        AgentScenario(
            name="synthesize.grounded",
            template="synthesize",
            description="Sources that state revenue: every valued fact must be grounded.",
            requirements=synth_req,
            inputs={SOURCE_SET: filed.id},
            upstream={"research": research_brief(filed)},
            **common,
        ),
        AgentScenario(
            name="synthesize.missing_revenue",
            template="synthesize",
            description='"No accounts filed" and "contact us for a quote": revenue is not on file.',
            requirements=synth_req,
            inputs=missing_inputs,
            upstream={"research": research_brief(unfiled)},
            checks=(assert_revenue_not_on_file,),
            **common,
        ),
        AgentScenario(
            name="synthesize.after_rejection",
            template="synthesize",
            description=f'missing_revenue after an operator rejected an attempt: "{REJECTION}".',
            requirements=synth_req,
            inputs=missing_inputs,
            upstream={"research": research_brief(unfiled)},
            rejections=((_with_invented_revenue(verified_intel(unfiled)), REJECTION),),
            checks=(assert_revenue_not_on_file,),
            **common,
        ),
        AgentScenario(
            name="draft_offer.price_from_notes",
            template="draft_offer",
            description="Every price in the offer must come from the operator's pricing notes.",
            requirements={"client": COMPANY, "services": SERVICES},
            inputs={SOURCE_SET: filed.id, "pricing_notes": notes.text},
            upstream={"research": research_brief(filed), "synthesize": verified_intel(filed)},
            **common,
        ),
    ]


def build_job_fixtures() -> list[JobFixture]:
    """A whole lead-intelligence job per source set: research the company, verify the facts,
    draft the offer from the operator's pricing notes (``workflow batch --fixture NAME``).

    Raises:
        FixtureError: When the fixtures lack what a job needs (one line).
    """
    try:
        fixtures = load_fixtures()
        notes = fixtures.notes("acme-2026-11")
    except KeyError as exc:
        raise FixtureError(
            f"{load_fixtures.path()}: the lead-intelligence jobs need {exc.args[0]}, which these "
            "fixtures do not have"
        ) from None
    requirements = {
        "company": COMPANY, "website": WEBSITE, "facts": FACTS, "client": COMPANY,
        "services": SERVICES,
    }  # fmt: skip
    return [
        JobFixture(
            name=source_set.id,
            workflow=LEAD_INTELLIGENCE,
            description=source_set.description,
            requirements=requirements,
            inputs={SOURCE_SET: source_set.id, "pricing_notes": notes.text},
        )
        for source_set in fixtures.source_sets
    ]
