"""The operator as a plug point: whoever approves or rejects a submitted attempt.

An :class:`Operator` is an async callable given a :class:`Review` of one submitted attempt (the
job, the step, the attempt's output and how the eval's checks judged it) that returns an
:class:`OperatorDecision`: approve, or reject with a reason, which becomes the step's feedback.
It is the shape of inspect_ai's ``Approver`` returning an ``Approval`` with its explanation.
A person at a prompt (``step --interactive``, ``workflow run``), a deterministic policy (the
workflow batch: :class:`CheckPolicy`) and a recorded decision replayed (:class:`Recorded`) all
implement it; the decision is applied through the workflow service and attributed to the
operator's user (``Operator.name``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.workflow.records import Job

OperatorVerdict = Literal["approve", "reject"]


@dataclass(frozen=True)
class OperatorDecision:
    """An operator's decision on a submitted attempt, with its explanation."""

    decision: OperatorVerdict
    reason: str = ""
    """Why: required for a rejection (the agent's feedback on its next attempt)."""

    def __post_init__(self) -> None:
        if self.decision not in ("approve", "reject"):
            raise ValueError(f"an operator approves or rejects, not {self.decision!r}")
        if self.decision == "reject" and not self.reason.strip():
            raise ValueError("a rejection needs a reason (it is the agent's feedback)")

    @classmethod
    def approve(cls, reason: str = "") -> OperatorDecision:
        """Approve (a reason is optional)."""
        return cls("approve", reason)

    @classmethod
    def reject(cls, reason: str) -> OperatorDecision:
        """Reject with ``reason``.

        Raises:
            ValueError: ``reason`` is blank.
        """
        return cls("reject", reason)


@dataclass(frozen=True)
class Review:
    """What an operator is shown of one submitted attempt."""

    job: Job
    step_key: str
    attempt_number: int
    """The workflow's number of the attempt at the step (from 1)."""
    output: Mapping[str, Any] | None
    """The attempt's typed output (None: the attempt broke, and there is nothing to decide)."""
    outcome: Outcome
    """How the eval judged the attempt: passed, check_failed, error or transient."""
    checks: tuple[CheckResult, ...]
    feedback: tuple[str, ...]
    """The rejection reasons the attempt was given, oldest first."""

    def failed_checks(self) -> tuple[CheckResult, ...]:
        """The checks that did not hold."""
        return tuple(c for c in self.checks if not c.passed)


class Operator(Protocol):
    """Decides on submitted attempts (async: a person may take their time)."""

    @property
    def name(self) -> str:
        """The workflow user the decisions are attributed to (an ``operator``)."""
        ...

    async def __call__(self, review: Review) -> OperatorDecision:
        """Approve the attempt, or reject it with a reason."""
        ...


@dataclass(frozen=True)
class CheckPolicy:
    """The workflow batch's operator: rejects an attempt whose checks failed, with a reason naming
    each failed check and what was wrong, and approves every other one (deterministic)."""

    name: str = "policy-operator"

    async def __call__(self, review: Review) -> OperatorDecision:
        failed = review.failed_checks()
        if review.outcome.kind == "passed" and not failed:
            return OperatorDecision.approve()
        if failed:
            parts = [f"{c.name}: {c.message}" if c.message else c.name for c in failed]
            return OperatorDecision.reject("failed " + "; ".join(parts))
        return OperatorDecision.reject(f"{review.outcome.kind}: {review.outcome.reason}")


@dataclass
class Recorded:
    """Decisions made before, given back in order (a scenario's seeded rejections, or the human
    decision a corpus case is judged against).

    Raises:
        LookupError: When asked for more decisions than were recorded.
    """

    name: str
    decisions: Sequence[OperatorDecision]
    given: int = 0

    async def __call__(self, review: Review) -> OperatorDecision:
        if self.given >= len(self.decisions):
            raise LookupError(
                f"operator {self.name} recorded {len(self.decisions)} decision(s); asked for "
                f"one more on step {review.step_key} of job {review.job.id}"
            )
        self.given += 1
        return self.decisions[self.given - 1]
