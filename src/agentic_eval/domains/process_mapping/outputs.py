"""The final answer of each process_mapping case kind: the ``submit`` tool's input schema.

A real model sees these JSON schemas, so every field says what to put in it. Ids are copied
exactly as the tools return them; money is integer cents; time is whole minutes per month.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.domains.process_mapping.fixtures import Defect
from agentic_eval.domains.process_mapping.policy import Classification, Reason

__all__ = [
    "OUTPUT_MODELS",
    "BusinessCaseOutput",
    "ClassifyProcessOutput",
    "ClassifyStepOutput",
    "FixItem",
    "LineItem",
    "MapOutput",
    "MappedStep",
    "ProposalOutput",
    "StepClass",
]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MappedStep(_Output):
    """One step of the mapped workflow."""

    step_id: str = Field(description="Step id, from list_steps.")
    role_id: str = Field(description="The role on most of the step's log events (ties: smallest).")
    system_id: str = Field(
        description="The system on most of the step's log events (ties: smallest)."
    )


class MapOutput(_Output):
    """The workflow as the event log shows it."""

    steps: list[MappedStep] = Field(
        description="Every step of the process, in workflow order (mean first position)."
    )


class ClassifyStepOutput(_Output):
    """The automation class of one step."""

    classification: Classification = Field(
        description="automate_now, fix_before_automate or keep_human (first matching rule)."
    )
    reason: Reason = Field(
        description="The rule that decided it: known_defect, judgement_based, "
        "unstructured_input, high_exception_rate or eligible."
    )


class StepClass(ClassifyStepOutput):
    """The automation class of one step of a process."""

    step_id: str = Field(description="Step id.")


class ClassifyProcessOutput(_Output):
    """The automation class of every step of a process."""

    steps: list[StepClass] = Field(description="One entry per step of the process (any order).")


class LineItem(_Output):
    """The monthly saving of automating one automate_now step."""

    step_id: str = Field(description="An automate_now step.")
    role_id: str = Field(description="The step's role from the event log, whose cost is saved.")
    saved_minutes_per_month: int = Field(
        description="volume_per_month x handle_time_minutes x (100 - exception_rate_pct) / 100, "
        "rounded half-up to a whole minute."
    )
    saved_cost_cents_per_month: int = Field(
        description="saved_minutes_per_month x the role's hourly_cost_cents / 60, rounded "
        "half-up to a whole cent."
    )


class BusinessCaseOutput(_Output):
    """The monthly business case of automating the automate_now steps."""

    line_items: list[LineItem] = Field(
        description="One per automate_now step in scope ([] when there is none); no other step."
    )
    total_saved_minutes_per_month: int = Field(description="Sum of the line items' minutes.")
    total_saved_cost_cents_per_month: int = Field(description="Sum of the line items' cents.")


class FixItem(_Output):
    """A step that must be fixed before it may be automated, and what to fix."""

    step_id: str = Field(description="A fix_before_automate step.")
    defects: list[Defect] = Field(description="Its known defects (every one of them).")


class ProposalOutput(BusinessCaseOutput):
    """An automation proposal: the three sets of steps and the business case of automating."""

    automate_now_step_ids: list[str] = Field(description="Steps classified automate_now.")
    fix_first: list[FixItem] = Field(description="Steps classified fix_before_automate.")
    keep_human_step_ids: list[str] = Field(description="Steps classified keep_human.")


OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    "map_workflow": MapOutput,
    "classify_step": ClassifyStepOutput,
    "classify_process": ClassifyProcessOutput,
    "business_case": BusinessCaseOutput,
    "proposal": ProposalOutput,
}
"""The output model of each case kind."""
