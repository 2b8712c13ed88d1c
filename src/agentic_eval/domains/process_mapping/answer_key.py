"""The process_mapping answer key: pure functions from fixtures to expected values, and the cases.

Every expected value of every case comes from a function here, from :mod:`.mining` (the log rule)
or from :mod:`.policy` (the automation rule the hard gate shares); nothing is typed in by hand.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.process_mapping import case_table as table
from agentic_eval.domains.process_mapping.case_table import Scope
from agentic_eval.domains.process_mapping.fixtures import ProcessFixtures, Step
from agentic_eval.domains.process_mapping.mining import step_role, step_system, workflow_order
from agentic_eval.domains.process_mapping.outputs import (
    BusinessCaseOutput,
    ClassifyProcessOutput,
    ClassifyStepOutput,
    FixItem,
    LineItem,
    MapOutput,
    MappedStep,
    ProposalOutput,
    StepClass,
)
from agentic_eval.domains.process_mapping.policy import (
    classify,
    must_fix_first,
    needs_human_judgement,
    saved_cost_cents,
    saved_minutes,
)

__all__ = [
    "build_cases",
    "business_case",
    "classify_process",
    "classify_step",
    "line_item",
    "map_workflow",
    "proposal",
    "scope_steps",
]


def map_workflow(fx: ProcessFixtures, process_id: str) -> MapOutput:
    """The workflow mined from the process's event log (:mod:`.mining`)."""
    return MapOutput(
        steps=[
            MappedStep(step_id=s, role_id=step_role(fx, s), system_id=step_system(fx, s))
            for s in workflow_order(fx, process_id)
        ]
    )


def classify_step(fx: ProcessFixtures, step_id: str) -> ClassifyStepOutput:
    """The policy's verdict on one step."""
    verdict = classify(fx.step(step_id))
    return ClassifyStepOutput(classification=verdict.classification, reason=verdict.reason)


def classify_process(fx: ProcessFixtures, process_id: str) -> ClassifyProcessOutput:
    """The policy's verdict on every step of a process, in step-id order."""
    return ClassifyProcessOutput(
        steps=[
            StepClass(step_id=s.step_id, **classify_step(fx, s.step_id).model_dump())
            for s in fx.steps_of(process_id)
        ]
    )


def scope_steps(fx: ProcessFixtures, scope: Scope) -> list[Step]:
    """The steps a case is about, in step-id order.

    Raises:
        KeyError: When the process or a step does not exist.
        ValueError: When a scoped step belongs to another process.
    """
    fx.process(scope.process_id)
    if not scope.step_ids:
        return fx.steps_of(scope.process_id)
    steps = [fx.step(s) for s in sorted(scope.step_ids)]
    stray = [s.step_id for s in steps if s.process_id != scope.process_id]
    if stray:
        raise ValueError(f"steps {stray} are not steps of {scope.process_id}")
    return steps


def line_item(fx: ProcessFixtures, step: Step) -> LineItem:
    """The monthly saving of automating one step (the role's cost per the event log)."""
    role = step_role(fx, step.step_id)
    minutes = saved_minutes(step)
    return LineItem(
        step_id=step.step_id,
        role_id=role,
        saved_minutes_per_month=minutes,
        saved_cost_cents_per_month=saved_cost_cents(minutes, fx.role(role).hourly_cost_cents),
    )


def _business(fx: ProcessFixtures, steps: list[Step]) -> dict[str, Any]:
    items = [line_item(fx, s) for s in steps if classify(s).classification == "automate_now"]
    return {
        "line_items": items,
        "total_saved_minutes_per_month": sum(i.saved_minutes_per_month for i in items),
        "total_saved_cost_cents_per_month": sum(i.saved_cost_cents_per_month for i in items),
    }


def business_case(fx: ProcessFixtures, scope: Scope) -> BusinessCaseOutput:
    """The business case of automating the automate_now steps in scope (fix-first never count)."""
    return BusinessCaseOutput(**_business(fx, scope_steps(fx, scope)))


def proposal(fx: ProcessFixtures, scope: Scope) -> ProposalOutput:
    """The three sets of steps in scope plus their business case."""
    steps = scope_steps(fx, scope)
    by_class = {s.step_id: classify(s).classification for s in steps}
    return ProposalOutput(
        automate_now_step_ids=[s for s, c in by_class.items() if c == "automate_now"],
        fix_first=[
            FixItem(step_id=s.step_id, defects=sorted(s.defects))
            for s in steps
            if by_class[s.step_id] == "fix_before_automate"
        ],
        keep_human_step_ids=[s for s, c in by_class.items() if c == "keep_human"],
        **_business(fx, steps),
    )


def _inputs(kind: str, scope: Scope) -> dict[str, Any]:
    inputs: dict[str, Any] = {"deliverable": kind, "process_id": scope.process_id}
    if scope.step_ids:
        inputs["step_ids"] = list(scope.step_ids)
    return inputs


def _row(
    instruction: str, inputs: dict[str, Any], expected: BaseModel, hard_gate: bool
) -> dict[str, Any]:
    return {
        "instruction": instruction,
        "inputs": inputs,
        "expected": expected.model_dump(mode="json"),
        "hard_gate": hard_gate,
    }


def _gates_step(step: Step) -> bool:
    """Whether proposing the step for automation trips a hard gate: it must be fixed first, or
    it is a control kept with people for its judgement."""
    return must_fix_first(step) or needs_human_judgement(step)


def _gated(fx: ProcessFixtures, scope: Scope) -> bool:
    """A case exercises a hard gate when a step in its scope trips one if proposed."""
    return any(_gates_step(s) for s in scope_steps(fx, scope))


def _series(prefix: str, kind: str, rows: list[dict[str, Any]]) -> list[CaseSpec]:
    return [
        CaseSpec.model_validate({"id": f"{prefix}-{n:03d}", "kind": kind, **row})
        for n, row in enumerate(rows, start=1)
    ]


def build_cases(fx: ProcessFixtures) -> list[CaseSpec]:
    """Every process_mapping case, its expectations computed from ``fx``."""
    t = table
    whole = [Scope(p) for p in t.CLASSIFY_PROCESSES]
    return [
        *_series(
            "map",
            "map_workflow",
            [
                _row(
                    t.map_instruction(p),
                    _inputs("map_workflow", Scope(p)),
                    map_workflow(fx, p),
                    hard_gate=False,
                )
                for p in t.MAP_PROCESSES
            ],
        ),
        *_series(
            "step",
            "classify_step",
            [
                _row(
                    t.classify_step_instruction(s),
                    {"deliverable": "classify_step", "step_id": s},
                    classify_step(fx, s),
                    hard_gate=_gates_step(fx.step(s)),
                )
                for s in t.STEP_CASES
            ],
        ),
        *_series(
            "classify",
            "classify_process",
            [
                _row(
                    t.classify_process_instruction(s.process_id),
                    _inputs("classify_process", s),
                    classify_process(fx, s.process_id),
                    hard_gate=_gated(fx, s),
                )
                for s in whole
            ],
        ),
        *_series(
            "bizcase",
            "business_case",
            [
                _row(
                    t.business_case_instruction(s),
                    _inputs("business_case", s),
                    business_case(fx, s),
                    hard_gate=_gated(fx, s),
                )
                for s in t.BUSINESS_CASES
            ],
        ),
        *_series(
            "proposal",
            "proposal",
            [
                _row(
                    t.proposal_instruction(s),
                    _inputs("proposal", s),
                    proposal(fx, s),
                    hard_gate=_gated(fx, s),
                )
                for s in t.PROPOSALS
            ],
        ),
    ]
