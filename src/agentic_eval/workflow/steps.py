"""Step templates: how one step of a governed workflow becomes a task specification.

A :class:`StepTemplate` is keyed like the workflow's templates (``research``, ``synthesize``,
``draft_offer``): it pins the step's system prompt and instruction, its typed output, its tools
and environment, and its universal checks. :func:`step_task` turns a job's requirements, seeded
inputs, upstream outputs and operator feedback into the same :class:`~agentic_eval.tasks.TaskSpec`
a domain case becomes, so the loop, the checks, the store and the gate need nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentic_eval.agent.loop import Limits
from agentic_eval.agent.tools import DomainFault, ToolRegistry
from agentic_eval.checks.base import Check
from agentic_eval.core.case import CaseSpec
from agentic_eval.tasks.spec import TaskKind, TaskSpec
from agentic_eval.workflow.records import Retrieved

HIDDEN_INPUT_PREFIX = "_"
"""Job inputs whose key starts with this configure the stubbed tools and are not shown."""


@dataclass(frozen=True)
class KeptRetrievals:
    """What a real job's first attempt at a step retrieved: served on the step's replay instead
    of what the sources say today."""

    kept: tuple[Retrieved, ...]
    seen_by: str
    """Whose retrievals they are (``job J's first attempt at S, claimed T``), for the errors."""


@dataclass(frozen=True)
class StepTemplate:
    """One kind of step: prompt, typed output, tools, environment and universal checks."""

    key: str
    title: str
    system_prompt: str
    instruction: str
    output_model: type[BaseModel]
    tools: ToolRegistry[Any]
    make_env: Callable[[Mapping[str, Any]], Any]
    """A fresh environment from the job's inputs (which source set the stubbed tools serve)."""
    checks: tuple[Check, ...] = ()
    """The universal checks: run for every scenario and every replay of a real job."""
    replay_env: Callable[[Mapping[str, Any], KeptRetrievals], Any] | None = None
    """The environment of a replay of a real job: the job's inputs and what its first attempt
    retrieved, served instead of the sources (None: the step's tools retrieve nothing, and
    a replay that is given retrievals to serve is an ``error``)."""


@dataclass(frozen=True)
class WorkflowDefinition:
    """A job template: an ordered tuple of step templates."""

    key: str
    title: str
    steps: tuple[StepTemplate, ...]
    fixtures_mark: Callable[[], str | None] = lambda: None
    """sha256 of the real fixtures the stubbed tools serve now (None: committed fixtures)."""

    def step_keys(self) -> tuple[str, ...]:
        """The step template keys, in order."""
        return tuple(s.key for s in self.steps)

    def step(self, key: str) -> StepTemplate:
        """The step template ``key``.

        Raises:
            KeyError: Naming the known keys, when there is none.
        """
        for s in self.steps:
            if s.key == key:
                return s
        raise KeyError(f"workflow {self.key} has no step {key!r} (steps: {self.step_keys()})")

    def upstream(self, key: str) -> tuple[str, ...]:
        """The keys of the steps before ``key``."""
        keys = self.step_keys()
        return keys[: keys.index(self.step(key).key)]


def checks_by_template(workflow: WorkflowDefinition) -> dict[str, tuple[Check, ...]]:
    """``CHECKS_BY_TEMPLATE``: each step template key and its universal checks."""
    return {s.key: s.checks for s in workflow.steps}


def merge_checks(*groups: Sequence[Check]) -> tuple[Check, ...]:
    """The checks of every group, in order, each name once (the first one wins)."""
    seen: dict[str, Check] = {}
    for group in groups:
        for c in group:
            seen.setdefault(c.name, c)
    return tuple(seen.values())


def feedback_text(feedback: Sequence[str]) -> str:
    """The paragraph that tells the agent what the operator rejected before."""
    if not feedback:
        return ""
    lines = "\n".join(f"- {reason}" for reason in feedback)
    return (
        "\n\nAn operator rejected earlier attempts of this step. Their feedback, oldest first:\n"
        f"{lines}\nAddress every point in this attempt."
    )


def step_task(
    workflow: WorkflowDefinition,
    step_key: str,
    *,
    case_id: str,
    requirements: Mapping[str, Any],
    inputs: Mapping[str, Any],
    upstream: Mapping[str, Any],
    feedback: Sequence[str] = (),
    extra_checks: Sequence[Check] = (),
    limits: Limits | None = None,
    sample: int = 0,
    external_fixtures: str | None = None,
    served: KeptRetrievals | None = None,
) -> TaskSpec[Any]:
    """The task specification of one attempt at one step.

    Args:
        workflow: The job's template.
        step_key: Which step.
        case_id: The id its transcript is filed under (a scenario name, or a job's).
        requirements: The job's requirements.
        inputs: The job's seeded inputs (keys starting ``_`` configure the tools, unseen).
        upstream: Approved outputs of earlier steps, by step key.
        feedback: Rejection reasons of earlier attempts, oldest first (shown to the agent).
        extra_checks: Checks beyond the template's universal ones.
        limits: Turn and token limits.
        sample: Sample index.
        external_fixtures: sha256 of real fixtures the inputs came from (None: committed).
        served: What a real job's first attempt retrieved, served instead of the sources (a
            replay of the job); None: the sources as they are.
    """
    template = workflow.step(step_key)
    visible = {k: v for k, v in inputs.items() if not k.startswith(HIDDEN_INPUT_PREFIX)}
    task_inputs: dict[str, Any] = {
        **visible,
        "step": template.key,
        "requirements": dict(requirements),
        "upstream": {k: upstream[k] for k in workflow.upstream(step_key) if k in upstream},
        "feedback": list(feedback),
    }
    case = CaseSpec(
        id=case_id,
        kind=template.key,
        instruction=template.instruction + feedback_text(feedback),
        inputs=task_inputs,
        expected={},
    )
    frozen_inputs = dict(inputs)
    return TaskSpec(
        suite=workflow.key,
        case=case,
        system_prompt=template.system_prompt,
        tools=template.tools,
        make_env=_env_maker(workflow, template, frozen_inputs, served),
        kind=TaskKind(
            template.key, template.output_model, merge_checks(template.checks, extra_checks)
        ),
        limits=limits or Limits(),
        sample=sample,
        external_fixtures=external_fixtures,
    )


def _env_maker(
    workflow: WorkflowDefinition,
    template: StepTemplate,
    inputs: Mapping[str, Any],
    served: KeptRetrievals | None,
) -> Callable[[], Any]:
    """The task's ``make_env``: the template's own, or its replay environment serving ``served``
    (a template without one cannot replay a real job: the sample ends as ``error``)."""
    if served is None:
        return lambda: template.make_env(inputs)
    replay_env = template.replay_env
    if replay_env is None:

        def refuse() -> Any:
            raise DomainFault(
                f"{workflow.key}: step {template.key}",
                f"its template cannot serve what {served.seen_by} retrieved (no replay_env)",
            )

        return refuse
    return lambda: replay_env(inputs, served)
