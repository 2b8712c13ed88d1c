"""The AgentScenario registry: fixed, named tests of one workflow step.

A scenario pins the agent, the step template, the job's requirements and seeded inputs, the
approved outputs of the steps before it, any earlier rejections (whose reasons become the
agent's feedback), the checks beyond the template's universal ones, and ``max_failure_rate``.
``run_scenario`` (in ``evaluation``) seeds a real job from it through the workflow services.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from agentic_eval.agent.tools import first_validation_error
from agentic_eval.backends.scripted import ScriptedAgent
from agentic_eval.checks.base import Check
from agentic_eval.workflow.steps import KeptRetrievals, WorkflowDefinition, merge_checks

DEFAULT_SCENARIO_FAILURE_RATE = 0.01
T = TypeVar("T")


class UnknownScenario(KeyError):
    """No scenario (or workflow) by that name; the message suggests the closest."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown scenario"


@dataclass(frozen=True)
class AgentScenario:
    """One fixed test of one workflow step."""

    name: str
    workflow: WorkflowDefinition
    template: str
    """The step template key under test (``synthesize``, ``draft_offer``...)."""
    description: str
    requirements: Mapping[str, Any]
    inputs: Mapping[str, Any]
    """The job's seeded inputs (keys starting ``_`` configure the stubbed tools)."""
    upstream: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: {})
    """Approved outputs of the earlier steps, seeded through the services."""
    rejections: tuple[tuple[Mapping[str, Any], str], ...] = ()
    """Earlier attempts of this step (output, reason) an operator rejected, seeded in order."""
    checks: tuple[Check, ...] = ()
    """Checks beyond the template's universal ones."""
    agent: str = "reference"
    max_failure_rate: float = DEFAULT_SCENARIO_FAILURE_RATE
    external_fixtures: str | None = None
    """sha256 of the real fixtures the scenario came from (None: committed fixtures)."""
    served: KeptRetrievals | None = None
    """A replay of a real job: what its first attempt retrieved, served instead of the
    sources (None: the sources as they are)."""

    def __post_init__(self) -> None:
        self.workflow.step(self.template)  # raises for an unknown template key
        missing = [k for k in self.workflow.upstream(self.template) if k not in self.upstream]
        if missing:
            raise ValueError(f"scenario {self.name}: no seeded output for upstream {missing}")
        seeded = [*self.upstream.items(), *((self.template, o) for o, _ in self.rejections)]
        for key, output in seeded:
            model = self.workflow.step(key).output_model
            try:
                model.model_validate(output)
            except ValidationError as exc:
                raise ValueError(
                    f"scenario {self.name}: the seeded {key} output is not a valid "
                    f"{model.__name__}: {first_validation_error(exc)}"
                ) from None

    def all_checks(self) -> tuple[Check, ...]:
        """The template's universal checks, then the scenario's own."""
        return merge_checks(self.workflow.step(self.template).checks, self.checks)

    def feedback(self) -> list[str]:
        """The rejection reasons the agent's attempt will carry, oldest first."""
        return [reason for _, reason in self.rejections]


@dataclass(frozen=True)
class JobFixture:
    """What a whole job starts from (``workflow batch --fixture NAME``): the requirements and
    seeded inputs every step of the workflow reads."""

    name: str
    workflow: WorkflowDefinition
    description: str
    requirements: Mapping[str, Any]
    inputs: Mapping[str, Any]
    """Keys starting ``_`` configure the stubbed tools and are not shown to the agent."""


ScenarioSource = Callable[[], list[AgentScenario]]


def _sources() -> list[ScenarioSource]:
    from agentic_eval.workflow.lead_intel.scenarios import build_scenarios

    return [build_scenarios]


def job_fixtures() -> dict[str, JobFixture]:
    """Every job fixture, by name.

    Raises:
        FixtureError: When the fixtures they are built from are invalid (one line).
    """
    from agentic_eval.workflow.lead_intel.scenarios import build_job_fixtures

    return {f.name: f for f in build_job_fixtures()}


def get_job_fixture(name: str) -> JobFixture:
    """The job fixture called ``name``.

    Raises:
        UnknownScenario: Naming the known ones (and the closest match).
    """
    return _named("job fixture", name, job_fixtures())


def workflows() -> dict[str, WorkflowDefinition]:
    """Every workflow definition, by key."""
    from agentic_eval.workflow.lead_intel.templates import LEAD_INTELLIGENCE

    return {LEAD_INTELLIGENCE.key: LEAD_INTELLIGENCE}


def scenarios() -> dict[str, AgentScenario]:
    """Every registered scenario, by name, in registration order.

    Raises:
        FixtureError: When the fixtures a scenario is built from are invalid (one line).
    """
    found: dict[str, AgentScenario] = {}
    for source in _sources():
        for s in source():
            if s.name in found:
                raise ValueError(f"scenario {s.name} is registered twice")
            found[s.name] = s
    return found


def get_scenario(name: str) -> AgentScenario:
    """The scenario called ``name``.

    Raises:
        UnknownScenario: Naming the known ones (and the closest match).
    """
    return _named("scenario", name, scenarios())


def _named(what: str, name: str, known: Mapping[str, T]) -> T:
    """``known[name]``, or :class:`UnknownScenario` naming the known ones and the closest."""
    if name in known:
        return known[name]
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UnknownScenario(f"unknown {what} {name!r}{hint}; known: {', '.join(known)}")


def scripted_agents(workflow_key: str) -> dict[str, ScriptedAgent]:
    """The scripted agents a workflow ships (reference, hallucinating, learner...)."""
    from agentic_eval.workflow.lead_intel.agents import AGENTS
    from agentic_eval.workflow.lead_intel.fixtures import SUITE

    return dict(AGENTS) if workflow_key == SUITE else {}
