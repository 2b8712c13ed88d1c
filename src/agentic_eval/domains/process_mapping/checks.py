"""Checks of process_mapping: the typed answer against ``case.expected``, and the hard gate.

Field checks compare one output field at a time. Lists are order-free (sorted, duplicates count)
except the mapped workflow, whose order is the answer. The hard gate
``ready_to_automate_safety`` reads every place an answer proposes a step for automation (an
``automate_now`` class, an automate-now id list, a business-case line item) and fails when any of
them is a step the policy says must be fixed first, judged on the case's own process data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel

from agentic_eval.checks import Check, CheckContext, check
from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.results import CheckResult
from agentic_eval.domains.process_mapping.fixtures import ProcessFixtures
from agentic_eval.domains.process_mapping.policy import must_fix_first
from agentic_eval.domains.process_mapping.tools import ProcessEnv

__all__ = [
    "GATE_NAME",
    "KIND_CHECKS",
    "check_fields",
    "check_map",
    "proposed_for_automation",
    "ready_to_automate_safety",
]

GATE_NAME = "ready_to_automate_safety"


def _normalise(value: Any) -> Any:
    if isinstance(value, list):
        items = [_normalise(v) for v in cast(list[Any], value)]
        return sorted(items, key=canonical_json)
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in cast(dict[Any, Any], value).items()}
    return value


def _compare(name: str, expected: Any, actual: Any, *, ordered: bool = False) -> CheckResult:
    ok = expected == actual if ordered else _normalise(expected) == _normalise(actual)
    message = "" if ok else f"{name}: expected {expected!r}, got {actual!r}"
    return CheckResult(name=name, passed=ok, message=message, expected=expected, actual=actual)


def check_fields(expected: Mapping[str, Any], output: BaseModel) -> list[CheckResult]:
    """One check per output field (lists compared order-free, duplicates counted)."""
    actual = output.model_dump(mode="json")
    return [
        _compare(name, expected[name], actual.get(name))
        for name in type(output).model_fields
        if name in expected
    ]


def check_map(expected: Mapping[str, Any], output: BaseModel) -> list[CheckResult]:
    """A mapped workflow: the step order exactly, then each step's role and system."""
    want = cast(list[dict[str, str]], expected["steps"])
    got = cast(list[dict[str, str]], output.model_dump(mode="json")["steps"])
    order = [s["step_id"] for s in want], [s["step_id"] for s in got]
    results = [_compare("step_order", *order, ordered=True)]
    for field, name in (("role_id", "step_roles"), ("system_id", "step_systems")):
        results.append(
            _compare(
                name,
                {s["step_id"]: s[field] for s in want},
                {s["step_id"]: s[field] for s in got},
            )
        )
    return results


def proposed_for_automation(case: CaseSpec, output: BaseModel) -> list[tuple[str, str]]:
    """Every (step id, where) the answer proposes to automate, in the order found.

    Where: ``classification`` (a single-step answer), ``steps`` (a step classed automate_now),
    ``automate_now_step_ids`` or ``line_items`` (counted in the business case).
    """
    data = output.model_dump(mode="json")
    found: list[tuple[str, str]] = []
    if data.get("classification") == "automate_now" and "step_id" in case.inputs:
        found.append((str(case.inputs["step_id"]), "classification"))
    for item in cast(list[dict[str, Any]], data.get("steps", [])):
        if item.get("classification") == "automate_now":
            found.append((str(item.get("step_id")), "steps"))
    for step_id in cast(list[Any], data.get("automate_now_step_ids", [])):
        found.append((str(step_id), "automate_now_step_ids"))
    for item in cast(list[dict[str, Any]], data.get("line_items", [])):
        found.append((str(item.get("step_id")), "line_items"))
    return found


def ready_to_automate_safety(fx: ProcessFixtures, case: CaseSpec, output: BaseModel) -> CheckResult:
    """Hard gate: nothing the answer proposes for automation must be fixed first.

    Steps are judged by :func:`.policy.must_fix_first` on the case's process data; ids that are
    not steps at all are left to the field checks.
    """
    known = {s.step_id: s for s in fx.steps}
    bad = [
        f"{step_id} in {where} (defects: {', '.join(known[step_id].defects)})"
        for step_id, where in proposed_for_automation(case, output)
        if step_id in known and must_fix_first(known[step_id])
    ]
    message = "proposes fix-before-automate steps for automation: " + "; ".join(bad) if bad else ""
    return CheckResult(name=GATE_NAME, passed=not bad, hard_gate=True, message=message)


@check("fields", needs_output=True)
def _fields(ctx: CheckContext[ProcessEnv]) -> list[CheckResult]:
    assert ctx.output is not None
    return check_fields(ctx.case.expected, ctx.output)


@check("workflow", needs_output=True)
def _workflow(ctx: CheckContext[ProcessEnv]) -> list[CheckResult]:
    assert ctx.output is not None
    return check_map(ctx.case.expected, ctx.output)


@check(GATE_NAME, hard_gate=True, needs_output=True)
def _gate(ctx: CheckContext[ProcessEnv]) -> CheckResult:
    assert ctx.output is not None
    return ready_to_automate_safety(ctx.env.state, ctx.case, ctx.output)


GATED: tuple[Check, ...] = (_fields, _gate)
KIND_CHECKS: dict[str, tuple[Check, ...]] = {
    "map_workflow": (_workflow,),
    "classify_step": GATED,
    "classify_process": GATED,
    "business_case": GATED,
    "proposal": GATED,
}
"""The checks of each case kind: the answer against the answer key, and (wherever an answer can
propose steps for automation) the ``ready_to_automate_safety`` hard gate."""
