"""Outcomes, check results, policy events and tool-call records: what a case run produced."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from agentic_eval.core.messages import Frozen

OutcomeKind = Literal["passed", "check_failed", "error", "transient"]
"""Every sample ends as exactly one of these."""

ApprovalMode = Literal["enforce", "observe"]


class Outcome(Frozen):
    """How a case ended, as data. A failed run is an outcome, never an exception."""

    kind: OutcomeKind = Field(description="passed, check_failed, error or transient.")
    reason: str = Field(default="", description="Why, in one line (empty when passed).")
    where: str = Field(default="", description="Where it happened, e.g. 'turn 3' or 'check x'.")


class CheckResult(Frozen):
    """The verdict of one check on a case's output or trace."""

    name: str = Field(description="Check name, unique within a case.")
    passed: bool = Field(description="Whether the invariant held.")
    hard_gate: bool = Field(default=False, description="A hard gate fails the case on its own.")
    message: str = Field(default="", description="What was wrong, when it failed.")
    expected: Any = Field(default=None, description="Expected value, when it compares values.")
    actual: Any = Field(default=None, description="Actual value, when it compares values.")


class ToolCallRecord(Frozen):
    """One tool call in the trace and what came of it."""

    turn: int = Field(description="Model turn (0-based) whose response made the call.")
    id: str = Field(description="Tool-use id.")
    name: str = Field(description="Tool name.")
    input: dict[str, Any] = Field(description="Arguments the model sent.")
    result: str = Field(description="Result text returned to the model.")
    status: Literal["ok", "error", "blocked"] = Field(
        description="ok, error (the tool raised or the arguments were invalid) or blocked "
        "(the approval checkpoint refused an unapproved must-approve call)."
    )


class ApprovalRequested(Frozen):
    """The agent asked for approval through ``request_approval``; the approver decided.

    The request names one exact call (action, target and the arguments an approval binds) and
    is a structured claim: the policy rule it cites and the figures it relies on, which the
    ``approval_claims_match_policy`` gate holds against what policy computed for that call when
    it was asked, granted or not.
    """

    type: Literal["approval_requested"] = "approval_requested"
    turn: int = Field(description="Model turn.")
    action: str = Field(description="The action approval was asked for (a tool name).")
    target: str = Field(description="What it acts on, e.g. an invoice id.")
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="The consequential arguments of the call asked for (canonical): a grant "
        "admits one call with exactly these.",
    )
    granted: bool = Field(description="The approver's decision.")
    explanation: str = Field(default="", description="The approver's explanation.")
    policy_reason: str = Field(default="", description="The policy rule the agent cited.")
    figures: dict[str, int] = Field(
        default_factory=dict, description="The figures the agent told the approver."
    )
    reason: str = Field(default="", description="The agent's words to the approver.")
    required: bool | None = Field(
        default=None,
        description="Whether policy requires approval for the call described, when asked "
        "(None: the tool's rule could not tell from the request alone).",
    )
    policy_rules: tuple[str, ...] = Field(
        default=(), description="The policy rules that apply to the call, as policy computed."
    )
    policy_figures: dict[str, int] = Field(
        default_factory=dict, description="The figures policy computed for the call."
    )
    policy_facts: dict[str, int] = Field(
        default_factory=dict,
        description="Other numbers policy knows for the call (limits): a request may cite them.",
    )


class MustApproveCall(Frozen):
    """The agent called a tool whose arguments required approval."""

    type: Literal["must_approve_call"] = "must_approve_call"
    turn: int = Field(description="Model turn.")
    action: str = Field(description="Tool name.")
    target: str = Field(description="What it acts on.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The call's consequential arguments (canonical)."
    )
    reason: str = Field(description="Why approval is required.")
    rules: tuple[str, ...] = Field(default=(), description="Policy rules that apply (ids).")
    figures: dict[str, int] = Field(
        default_factory=dict, description="The figures policy computed for the call."
    )
    facts: dict[str, int] = Field(
        default_factory=dict, description="Other numbers policy knows for the call."
    )
    approved: bool = Field(
        description="Whether an unspent approval granted before it covered exactly this call."
    )
    executed: bool = Field(description="Whether the call actually executed.")
    mode: ApprovalMode = Field(description="The checkpoint's mode during the run.")
    note: str = Field(
        default="",
        description="Why an approval for the same action and target did not cover it (other "
        "arguments, or already used); empty otherwise.",
    )


PolicyEvent = Annotated[ApprovalRequested | MustApproveCall, Field(discriminator="type")]


def unapproved_attempts(events: tuple[PolicyEvent, ...] | list[PolicyEvent]) -> int:
    """How many must-approve calls were attempted without approval (executed or not)."""
    return sum(1 for e in events if isinstance(e, MustApproveCall) and not e.approved)


def unapproved_executions(events: tuple[PolicyEvent, ...] | list[PolicyEvent]) -> int:
    """How many must-approve calls executed without approval."""
    return sum(
        1 for e in events if isinstance(e, MustApproveCall) and not e.approved and e.executed
    )


class Utterance(Frozen):
    """One line of a conversation with a simulated user: what the agent said to the user (a
    reply of text alone) or what the user said to the agent."""

    speaker: Literal["agent", "user"] = Field(description="Who said it.")
    text: str = Field(description="What was said.")
    turn: int = Field(
        description="The agent's model turn that said it, or, for the user, the agent turn it "
        "answers (-1: the user's opening, before any); a tool call of a later turn came after."
    )
