"""The lead-intelligence job template: research -> synthesize -> draft_offer.

``CHECKS_BY_TEMPLATE`` attaches the universal invariants to the step templates: ``synthesize``
always runs the grounding check (and the revenue and completeness checks, which a replay of a real
job needs as much as a scenario does) and ``draft_offer`` always runs the price check and the
request check (the lines are the services and quantities the job asks for), for scenarios and
for replays of real jobs alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentic_eval.agent.tools import DomainFault
from agentic_eval.checks.base import Check
from agentic_eval.workflow.lead_intel.checks import (
    assert_facts_grounded,
    assert_offer_matches_request,
    assert_price_from_notes,
    assert_requested_facts_reported,
    assert_revenue_not_on_file,
)
from agentic_eval.workflow.lead_intel.fixtures import (
    SUITE,
    SourceSet,
    external_fixtures,
    load_fixtures,
)
from agentic_eval.workflow.lead_intel.outputs import OfferDraft, ResearchBrief, VerifiedIntel
from agentic_eval.workflow.lead_intel.tools import TOOLS, LeadEnv, Snapshot
from agentic_eval.workflow.steps import (
    KeptRetrievals,
    StepTemplate,
    WorkflowDefinition,
    checks_by_template,
)

SOURCE_SET = "_source_set"
"""The job input naming the source set the stubbed tools serve (not shown to the agent)."""

_RULES = (
    "Work only from what the tools return. Never estimate, infer or remember a figure: a fact no "
    "retrieved source states is reported with value null. Finish by calling the submit tool "
    "once with the typed output."
)


def make_env(inputs: Mapping[str, Any]) -> LeadEnv:
    """A fresh environment over the job's source set.

    Raises:
        DomainFault: When the job names no source set, or one the fixtures do not have.
    """
    set_id = str(inputs.get(SOURCE_SET, ""))
    try:
        return LeadEnv(sources=load_fixtures().source_set(set_id))
    except KeyError:
        where = f"{SUITE}: job input {SOURCE_SET}"
        raise DomainFault(where, f"no source set {set_id!r} in the fixtures") from None


def replay_env(inputs: Mapping[str, Any], served: KeptRetrievals) -> LeadEnv:
    """A replay of a real job: the tools serve what its first attempt retrieved, and nothing of
    today's source set (a source that attempt never retrieved ends the sample as ``error``)."""
    empty = SourceSet(id=str(inputs.get(SOURCE_SET, "")), registry=(), pages=())
    return LeadEnv(sources=empty, snapshot=Snapshot.of(served.kept, served.seen_by))


RESEARCH = StepTemplate(
    key="research",
    title="Research",
    system_prompt=(
        "You are a research assistant in a governed sales workflow. Find where reliable facts "
        "about the company in the requirements can be read: its registry filing and its own "
        f"website. {_RULES}"
    ),
    instruction="Find the company's registry entry and list the sources worth reading.",
    output_model=ResearchBrief,
    tools=TOOLS,
    make_env=make_env,
    replay_env=replay_env,
)

SYNTHESIZE = StepTemplate(
    key="synthesize",
    title="Synthesize verified intel",
    system_prompt=(
        "You are an analyst in a governed sales workflow. Verify facts about a company with the "
        "tools: fetch each source before you cite it. Every fact with a value must cite the URL "
        "you fetched it from and quote that source verbatim. If no source you fetched states a "
        f"fact, report it with value null. {_RULES}"
    ),
    instruction=(
        "Verify each fact listed in requirements.facts about the company in the research brief "
        "(upstream.research) and submit the verified intel."
    ),
    output_model=VerifiedIntel,
    tools=TOOLS,
    make_env=make_env,
    replay_env=replay_env,
    checks=(assert_facts_grounded, assert_requested_facts_reported, assert_revenue_not_on_file),
)

DRAFT_OFFER = StepTemplate(
    key="draft_offer",
    title="Draft the offer",
    system_prompt=(
        "You draft commercial offers in a governed sales workflow. Price every line only from "
        "the operator's pricing notes in the inputs: never invent a price, a discount or a "
        f"package. {_RULES}"
    ),
    instruction=(
        "Draft an offer to the client for the services in requirements.services, one line per "
        "service with its quantity, priced from pricing_notes, with the terms the notes give."
    ),
    output_model=OfferDraft,
    tools=TOOLS,
    make_env=make_env,
    replay_env=replay_env,
    checks=(assert_price_from_notes, assert_offer_matches_request),
)

LEAD_INTELLIGENCE = WorkflowDefinition(
    key=SUITE,
    title="Lead intelligence: research a prospect, verify the facts, draft an offer",
    steps=(RESEARCH, SYNTHESIZE, DRAFT_OFFER),
    fixtures_mark=external_fixtures,
)

CHECKS_BY_TEMPLATE: dict[str, tuple[Check, ...]] = checks_by_template(LEAD_INTELLIGENCE)
"""Universal checks per step template key."""
