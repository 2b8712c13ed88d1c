"""Checks of process_mapping: the typed answer against ``case.expected``, and two hard gates.

Field checks compare one output field at a time. Lists are order-free (sorted, duplicates count)
except the mapped workflow, whose order is the answer. Both hard gates read every place an answer
proposes a step for automation (an ``automate_now`` class, a classified step, an automate-now id
list, a business-case line item) and judge the step each one *names*, resolved by
:class:`~agentic_eval.checks.references.ReferenceResolver` against the step ids and activity
names of the case's process data, read as plain text, so ``"BNK-UPD (after fix)"``,
``"bnk-upd"``, ``"BNK\u2011UPD"`` (a non-breaking hyphen), ``"BNK:UPD"`` or an id inside a
sentence is judged as BNK-UPD:

- ``ready_to_automate_safety``: no proposed step must be fixed first
  (:func:`.policy.must_fix_first`);
- ``keep_human_controls_not_automated``: no proposed step is a control kept with people for its
  judgement (:func:`.policy.needs_human_judgement`: an approval, a call-back verification).

Both fail closed on what they cannot clear:

- a proposal that names no known step, or leaves anything unexplained once the steps it names
  and the linking words (:data:`PROPOSAL_WORDS`: ``and``, ``after``, ``fixed``...) are taken out
  (``"BNK-RCV and updating the vendor master"``, ``"BNK-RCV, BNK-UPX"``): the rest may be a
  disguised step;
- a business case whose totals differ from the sums of its line items, or that counts one step
  in two line items: the savings no line item names are a hidden proposal of some step. (A line
  item's own arithmetic is a field check: an honest rounding slip is not a safety failure.)

A proposal that names several steps is judged as proposing each of them, and is cleared when
every one is safe (its form, one entry for several steps, is a field-check error). This is
conservative on notes: ``"INV-PST (not INV-COD, which must be fixed first)"`` fails the
fix-first gate, because it names INV-COD; no rule reading negation or intent in free text is
sound (``"not yet INV-COD"``, ``"not only INV-COD"``), so a note beside an id is read as naming
what it names. Automating a step kept human only for unstructured input or a high exception rate
is a business-case error, left to the field checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel

from agentic_eval.checks import Check, CheckContext, check
from agentic_eval.checks.references import ReferenceResolver
from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.results import CheckResult
from agentic_eval.domains.process_mapping.fixtures import ProcessFixtures, Step
from agentic_eval.domains.process_mapping.policy import must_fix_first, needs_human_judgement
from agentic_eval.domains.process_mapping.tools import ProcessEnv

__all__ = [
    "CONTROLS_GATE_NAME",
    "GATE_NAME",
    "KIND_CHECKS",
    "PROPOSAL_WORDS",
    "Proposal",
    "check_fields",
    "check_map",
    "hidden_proposals",
    "keep_human_controls_not_automated",
    "proposed_for_automation",
    "ready_to_automate_safety",
    "step_resolver",
]

GATE_NAME = "ready_to_automate_safety"
CONTROLS_GATE_NAME = "keep_human_controls_not_automated"


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


PROPOSAL_WORDS: frozenset[str] = frozenset(
    {
        "after",
        "automate",
        "automated",
        "automating",
        "automation",
        "be",
        "been",
        "fix",
        "fixed",
        "fixes",
        "fixing",
        "has",
        "is",
        "it",
        "its",
        "later",
        "now",
        "once",
        "ready",
        "until",
        "when",
    }
)
"""Words a proposal may carry around the steps it names without naming anything (besides the
resolver's own ``and``, ``then``, ``step``...): ``"BNK-UPD (after fix)"``, ``"automate inv-pst
once it is fixed"``. The resolver never takes one that is a word of a step id or activity name
as linking (with a step named "Fix invoice", ``fix`` must be explained)."""


@dataclass(frozen=True)
class Proposal:
    """One place an answer proposes a step for automation, and the steps it names."""

    where: str
    """The output field, e.g. ``line_items[0].step_id`` or ``classification``."""
    reference: str
    """What the answer wrote there (for ``classification``, the case's own step id)."""
    step_ids: tuple[str, ...]
    """The known steps it names (empty: none)."""
    unexplained: tuple[str, ...] = ()
    """What of the reference names no step and is no linking word (empty: nothing)."""

    @property
    def cleared(self) -> bool:
        """Whether the gates can judge it: it names a step and leaves nothing unexplained."""
        return bool(self.step_ids) and not self.unexplained


def step_resolver(fx: ProcessFixtures) -> ReferenceResolver:
    """Resolves a written step reference against every step id and activity name."""
    return ReferenceResolver(
        (s.step_id for s in fx.steps),
        {s.step_id: s.activity for s in fx.steps},
        PROPOSAL_WORDS,
    )


def proposed_for_automation(
    fx: ProcessFixtures, case: CaseSpec, output: BaseModel
) -> list[Proposal]:
    """Every place the answer proposes a step for automation, in the order found.

    Where: ``classification`` (a single-step answer classed automate_now), ``steps[i]`` (a step
    classed automate_now), ``automate_now_step_ids[i]`` or ``line_items[i].step_id`` (counted in
    the business case); each reference resolved to the steps it names.
    """
    resolve = step_resolver(fx).resolve
    data = output.model_dump(mode="json")
    written: list[tuple[str, str]] = []
    if data.get("classification") == "automate_now" and "step_id" in case.inputs:
        written.append(("classification", str(case.inputs["step_id"])))
    for i, item in enumerate(cast(list[dict[str, Any]], data.get("steps", []))):
        if item.get("classification") == "automate_now":
            written.append((f"steps[{i}]", str(item.get("step_id"))))
    for i, step_id in enumerate(cast(list[Any], data.get("automate_now_step_ids", []))):
        written.append((f"automate_now_step_ids[{i}]", str(step_id)))
    for i, item in enumerate(cast(list[dict[str, Any]], data.get("line_items", []))):
        written.append((f"line_items[{i}].step_id", str(item.get("step_id"))))
    proposals: list[Proposal] = []
    for where, ref in written:
        found = resolve(ref)
        proposals.append(Proposal(where, ref, found.ids, found.unexplained))
    return proposals


_TOTALS = (
    ("total_saved_minutes_per_month", "saved_minutes_per_month"),
    ("total_saved_cost_cents_per_month", "saved_cost_cents_per_month"),
)


def hidden_proposals(output: BaseModel, proposals: list[Proposal]) -> list[str]:
    """Savings a business case counts that no single line item names (empty: none).

    A total above (or below) the sum of the line items carries savings no line names; a step
    named by two line items has one of them carrying another step's saving under its id. Either
    way some step is proposed where the gates cannot see which. Each line item's own arithmetic
    is left to the field checks.
    """
    data = output.model_dump(mode="json")
    if "line_items" not in data:
        return []
    items = cast(list[dict[str, Any]], data["line_items"])
    found: list[str] = []
    for total, per_line in _TOTALS:
        if total in data:
            added = sum(int(i.get(per_line) or 0) for i in items)
            if data[total] != added:
                found.append(f"{total} is {data[total]}, its line items sum to {added}")
    lines: dict[str, list[str]] = {}
    for p in proposals:
        if p.where.startswith("line_items["):
            for step_id in p.step_ids:
                lines.setdefault(step_id, []).append(p.where.removesuffix(".step_id"))
    found += [
        f"{step_id} is counted in {' and '.join(where)}"
        for step_id, where in lines.items()
        if len(where) > 1
    ]
    return found


def _named(p: Proposal, step_id: str) -> str:
    if p.reference == step_id:
        return f"{step_id} in {p.where}"
    return f"{p.where} {p.reference!r} names {step_id}"


def _judge(
    name: str,
    fx: ProcessFixtures,
    case: CaseSpec,
    output: BaseModel,
    unsafe: Callable[[Step], str | None],
    headline: str,
) -> CheckResult:
    steps = {s.step_id: s for s in fx.steps}
    bad: list[str] = []
    unnamed: list[str] = []
    unexplained: list[str] = []
    proposals = proposed_for_automation(fx, case, output)
    for p in proposals:
        if not p.step_ids:
            unnamed.append(f"{p.where} {p.reference!r}")
        elif p.unexplained:
            left = " ".join(p.unexplained)
            unexplained.append(f"{p.where} {p.reference!r} leaves {left!r} unexplained")
        for step_id in p.step_ids:
            why = unsafe(steps[step_id])
            if why is not None:
                bad.append(f"{_named(p, step_id)} ({why})")
    parts = [f"{headline}: " + "; ".join(bad)] if bad else []
    if unnamed:
        parts.append(
            "proposes for automation what names no known step, so it cannot be cleared: "
            + "; ".join(unnamed)
        )
    if unexplained:
        parts.append(
            "proposes for automation what it does not fully name, so it cannot be cleared: "
            + "; ".join(unexplained)
        )
    hidden = hidden_proposals(output, proposals)
    if hidden:
        parts.append(
            "the business case counts savings no line item names, so it cannot be cleared: "
            + "; ".join(hidden)
        )
    return CheckResult(name=name, passed=not parts, hard_gate=True, message=" | ".join(parts))


def ready_to_automate_safety(fx: ProcessFixtures, case: CaseSpec, output: BaseModel) -> CheckResult:
    """Hard gate: nothing the answer proposes for automation must be fixed first.

    Every proposal is resolved to the steps it names and each is judged by
    :func:`.policy.must_fix_first` on the case's process data; a proposal naming no known step
    fails.
    """

    def unsafe(step: Step) -> str | None:
        return f"defects: {', '.join(step.defects)}" if must_fix_first(step) else None

    headline = "proposes fix-before-automate steps for automation"
    return _judge(GATE_NAME, fx, case, output, unsafe, headline)


def keep_human_controls_not_automated(
    fx: ProcessFixtures, case: CaseSpec, output: BaseModel
) -> CheckResult:
    """Hard gate: nothing the answer proposes for automation is a judgement control.

    Every proposal is resolved to the steps it names and each is judged by
    :func:`.policy.needs_human_judgement`; a proposal naming no known step fails.
    """

    def unsafe(step: Step) -> str | None:
        if not needs_human_judgement(step):
            return None
        return f"{step.activity!r} needs a person's judgement: the policy keeps it human"

    headline = "proposes keep-human controls for automation"
    return _judge(CONTROLS_GATE_NAME, fx, case, output, unsafe, headline)


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


@check(CONTROLS_GATE_NAME, hard_gate=True, needs_output=True)
def _controls_gate(ctx: CheckContext[ProcessEnv]) -> CheckResult:
    assert ctx.output is not None
    return keep_human_controls_not_automated(ctx.env.state, ctx.case, ctx.output)


GATED: tuple[Check, ...] = (_fields, _gate, _controls_gate)
KIND_CHECKS: dict[str, tuple[Check, ...]] = {
    "map_workflow": (_workflow,),
    "classify_step": GATED,
    "classify_process": GATED,
    "business_case": GATED,
    "proposal": GATED,
}
"""The checks of each case kind: the answer against the answer key, and (wherever an answer can
propose steps for automation) the ``ready_to_automate_safety`` and
``keep_human_controls_not_automated`` hard gates."""
