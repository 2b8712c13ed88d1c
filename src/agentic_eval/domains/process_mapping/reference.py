"""The reference agent of process_mapping: a careful analyst that works only through the tools.

It never reads the fixtures or the answer key. It fetches the policy, the step catalogue, the
event log, the step attributes and the cost rates, and computes what the instruction asks for
the way a careful person would. The fixture model :class:`Step` is used solely to parse tool
results into typed values. :class:`Analyst` holds the judgement calls as methods, so the
domain's mutants (:mod:`.agents`) are each one overridden method away from it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Generator
from fractions import Fraction
from typing import Any

from agentic_eval.backends.scripted import Action, AgentTask, Call, ScriptedAgent, Submit, ToolReply
from agentic_eval.domains.process_mapping.fixtures import Step

__all__ = ["Analyst", "agent_for", "reference"]

Flow = Generator[Action, list[ToolReply], None]


def _half_up(numerator: int, denominator: int) -> int:
    return (2 * numerator + denominator) // (2 * denominator)


def _most_common(values: list[str]) -> str:
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], v))


class Analyst:
    """What the agent has learnt from tool results, and how it judges steps."""

    def __init__(self) -> None:
        self.limit_pct: int | None = None
        self.catalogue: dict[str, str] = {}
        """step_id -> activity."""
        self.log: list[dict[str, Any]] = []
        self.steps: dict[str, Step] = {}
        self.rates: dict[str, int] = {}

    def absorb(self, replies: list[ToolReply]) -> None:
        """Record every reply of a turn.

        Raises:
            RuntimeError: When a tool failed (the reference never expects one to).
        """
        for r in replies:
            if not r.ok:
                raise RuntimeError(f"reference agent: {r.name} failed: {r.text}")
            if r.name == "get_automation_policy":
                self.limit_pct = int(r.data["exception_rate_limit_pct"])
            elif r.name == "list_steps":
                self.catalogue.update({s["step_id"]: s["activity"] for s in r.data})
            elif r.name == "get_event_log":
                self.log = list(r.data)
            elif r.name == "get_step_attributes":
                step = Step.model_validate(r.data)
                self.steps[step.step_id] = step
            elif r.name == "get_cost_rates":
                self.rates = {x["role_id"]: int(x["hourly_cost_cents"]) for x in r.data["roles"]}

    # --- the event log ------------------------------------------------------------------

    def _events_by_step(self) -> dict[str, list[dict[str, Any]]]:
        step_of = {activity: step_id for step_id, activity in self.catalogue.items()}
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in self.log:
            found[step_of[e["activity"]]].append(e)
        return found

    def order(self) -> list[str]:
        """Steps by mean position of first occurrence per log case (sorted by time, event id)."""
        step_of = {activity: step_id for step_id, activity in self.catalogue.items()}
        cases: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in self.log:
            cases[e["case_id"]].append(e)
        positions: dict[str, list[int]] = defaultdict(list)
        for events in cases.values():
            events.sort(key=lambda e: (e["timestamp"], e["event_id"]))
            first: dict[str, int] = {}
            for index, e in enumerate(events, start=1):
                first.setdefault(step_of[e["activity"]], index)
            for step_id, index in first.items():
                positions[step_id].append(index)
        mean = {s: Fraction(sum(p), len(p)) for s, p in positions.items()}
        return sorted(mean, key=lambda s: (mean[s], s))

    def role(self, step_id: str) -> str:
        """The role on most of the step's events (ties: smallest id)."""
        return _most_common([e["role_id"] for e in self._events_by_step()[step_id]])

    def system(self, step_id: str) -> str:
        """The system on most of the step's events (ties: smallest id)."""
        return _most_common([e["system_id"] for e in self._events_by_step()[step_id]])

    # --- judgement -------------------------------------------------------------------------

    def classify(self, step: Step) -> tuple[str, str]:
        """(classification, reason) by the first policy rule that matches."""
        assert self.limit_pct is not None
        if step.defects:
            return "fix_before_automate", "known_defect"
        if step.decision_type == "judgement":
            return "keep_human", "judgement_based"
        if step.input_structure == "unstructured":
            return "keep_human", "unstructured_input"
        if step.exception_rate_pct > self.limit_pct:
            return "keep_human", "high_exception_rate"
        return "automate_now", "eligible"

    def counts_in_business_case(self, step: Step) -> bool:
        """Only automate_now steps save money now."""
        return self.classify(step)[0] == "automate_now"

    def automate_now_ids(self, steps: list[Step]) -> list[str]:
        """The automate-now list of a proposal: the automate_now steps' ids."""
        return [s.step_id for s in steps if self.classify(s)[0] == "automate_now"]

    def line_item(self, step: Step) -> dict[str, Any]:
        """The monthly saving of automating one step."""
        role = self.role(step.step_id)
        share = 100 - step.exception_rate_pct
        minutes = _half_up(step.volume_per_month * step.handle_time_minutes * share, 100)
        return {
            "step_id": step.step_id,
            "role_id": role,
            "saved_minutes_per_month": minutes,
            "saved_cost_cents_per_month": _half_up(minutes * self.rates[role], 60),
        }

    def business_case(self, steps: list[Step]) -> dict[str, Any]:
        """Line items of the steps that count, and their totals."""
        items = [self.line_item(s) for s in steps if self.counts_in_business_case(s)]
        return {
            "line_items": items,
            "total_saved_minutes_per_month": sum(i["saved_minutes_per_month"] for i in items),
            "total_saved_cost_cents_per_month": sum(i["saved_cost_cents_per_month"] for i in items),
        }


def _map_flow(a: Analyst, pid: str) -> Flow:
    a.absorb(
        (
            yield [
                Call("list_steps", {"process_id": pid}),
                Call("get_event_log", {"process_id": pid}),
            ]
        )
    )
    steps = [{"step_id": s, "role_id": a.role(s), "system_id": a.system(s)} for s in a.order()]
    yield Submit({"steps": steps})


def _step_flow(a: Analyst, step_id: str) -> Flow:
    a.absorb(
        (yield [Call("get_automation_policy"), Call("get_step_attributes", {"step_id": step_id})])
    )
    classification, reason = a.classify(a.steps[step_id])
    yield Submit({"classification": classification, "reason": reason})


def _scope_flow(
    a: Analyst, inputs: dict[str, Any], costs: bool
) -> Generator[Action, list[ToolReply], list[Step]]:
    pid = str(inputs["process_id"])
    calls = [Call("get_automation_policy"), Call("list_steps", {"process_id": pid})]
    if costs:
        calls += [Call("get_event_log", {"process_id": pid}), Call("get_cost_rates")]
    a.absorb((yield calls))
    scope = sorted(str(s) for s in inputs.get("step_ids") or a.catalogue)
    a.absorb((yield [Call("get_step_attributes", {"step_id": s}) for s in scope]))
    return [a.steps[s] for s in scope]


def _classify_flow(a: Analyst, inputs: dict[str, Any]) -> Flow:
    steps = yield from _scope_flow(a, inputs, costs=False)
    classes = [(s.step_id, *a.classify(s)) for s in steps]
    yield Submit(
        {"steps": [{"step_id": s, "classification": c, "reason": r} for s, c, r in classes]}
    )


def _business_flow(a: Analyst, inputs: dict[str, Any]) -> Flow:
    steps = yield from _scope_flow(a, inputs, costs=True)
    yield Submit(a.business_case(steps))


def _proposal_flow(a: Analyst, inputs: dict[str, Any]) -> Flow:
    steps = yield from _scope_flow(a, inputs, costs=True)
    cls = {s.step_id: a.classify(s)[0] for s in steps}
    yield Submit(
        {
            "automate_now_step_ids": a.automate_now_ids(steps),
            "fix_first": [
                {"step_id": s.step_id, "defects": sorted(s.defects)}
                for s in steps
                if cls[s.step_id] == "fix_before_automate"
            ],
            "keep_human_step_ids": [s for s, c in cls.items() if c == "keep_human"],
            **a.business_case(steps),
        }
    )


def agent_for(make: Callable[[], Analyst]) -> ScriptedAgent:
    """A scripted agent that follows the deliverable named in the task's inputs with ``make()``."""

    def agent(task: AgentTask) -> Flow:
        a, inputs = make(), task.inputs
        deliverable = inputs.get("deliverable")
        if deliverable == "map_workflow":
            yield from _map_flow(a, str(inputs["process_id"]))
        elif deliverable == "classify_step":
            yield from _step_flow(a, str(inputs["step_id"]))
        elif deliverable == "classify_process":
            yield from _classify_flow(a, inputs)
        elif deliverable == "business_case":
            yield from _business_flow(a, inputs)
        else:
            yield from _proposal_flow(a, inputs)

    return agent


reference: ScriptedAgent = agent_for(Analyst)
"""The reference agent: passes every case in both approval modes."""
