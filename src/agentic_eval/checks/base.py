"""The Check plug point: a named, isolated invariant over a finished task.

A check is a function of a :class:`CheckContext` (the case, the schema-validated output, the
trace and the final environment) returning one or more :class:`CheckResult`. Checks are plain
computed invariants, never a model's self-report. :func:`run_checks` runs each one in isolation:
a check that raises is reported as an error on that check and never hides the others' results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from agentic_eval.core.case import CaseSpec
from agentic_eval.core.results import CheckResult, PolicyEvent, ToolCallRecord, Utterance
from agentic_eval.core.text import exception_text

Env = TypeVar("Env")
CheckReturn = CheckResult | Sequence[CheckResult]


@dataclass(frozen=True)
class Trace:
    """What the agent did: every tool call (in order) and every approval-checkpoint event."""

    tool_calls: tuple[ToolCallRecord, ...]
    policy_events: tuple[PolicyEvent, ...]
    unrun_calls: tuple[ToolCallRecord, ...] = ()
    """Calls made in the last turn after the one that ended the episode (``submit``, a tool
    that ends it): they never ran, but the agent attempted them."""


@dataclass(frozen=True)
class CheckContext(Generic[Env]):
    """Everything a check may look at once a task has finished."""

    case: CaseSpec
    """The case, with the expectations the answer key computed."""
    output: BaseModel | None
    """The schema-validated output (None when the agent submitted nothing valid)."""
    trace: Trace
    """Tool calls and policy events, in order."""
    env: Env
    """The case's environment as the run left it (what actually executed)."""
    dialogue: tuple[Utterance, ...] = ()
    """A conversation with a simulated user: what the agent said to the user (its replies of
    text alone) and the user's answers, in order; empty when the task has no user."""
    user_tool_calls: tuple[ToolCallRecord, ...] = ()
    """Calls of the simulated user's own tools (dual control), in order; ``turn`` is the user
    turn that made them."""


@runtime_checkable
class Check(Protocol):
    """A named invariant. Stateless: the same context always gives the same results."""

    @property
    def name(self) -> str:
        """Unique within a task kind; results are reported under it."""
        ...

    @property
    def hard_gate(self) -> bool:
        """A failed hard gate fails the case, and any such case fails the run."""
        ...

    @property
    def needs_output(self) -> bool:
        """Skipped when there is no valid output (field checks); trace checks always run."""
        ...

    def __call__(self, ctx: CheckContext[Any], /) -> CheckReturn:
        """Judge the context."""
        ...


@dataclass(frozen=True)
class FunctionCheck:
    """A :class:`Check` made from a function (see :func:`check`)."""

    name: str
    fn: Callable[[CheckContext[Any]], CheckReturn]
    hard_gate: bool = False
    needs_output: bool = False

    def __call__(self, ctx: CheckContext[Any], /) -> CheckReturn:
        """Run the function."""
        return self.fn(ctx)


def check(
    name: str | None = None, *, hard_gate: bool = False, needs_output: bool = False
) -> Callable[[Callable[[CheckContext[Any]], CheckReturn]], FunctionCheck]:
    """Decorator turning ``fn(ctx) -> CheckResult | list[CheckResult]`` into a :class:`Check`.

    Args:
        name: Check name (default: the function name).
        hard_gate: Whether a failure fails the case and the run outright.
        needs_output: Skip the check when the agent submitted no valid output.
    """

    def wrap(fn: Callable[[CheckContext[Any]], CheckReturn]) -> FunctionCheck:
        return FunctionCheck(name or fn.__name__, fn, hard_gate, needs_output)

    return wrap


@dataclass(frozen=True)
class CheckCrash:
    """A check that raised: a bug in the suite's own code, not an agent failure."""

    check: str
    error: str

    @property
    def where(self) -> str:
        """``check NAME raised TYPE``."""
        return f"check {self.check} raised {self.error.split(':', 1)[0]}"

    @property
    def reason(self) -> str:
        """``check NAME raised TYPE: message``."""
        return f"check {self.check} raised {self.error}"


def run_checks(
    checks: Sequence[Check], ctx: CheckContext[Any]
) -> tuple[list[CheckResult], list[CheckCrash]]:
    """Run every check in isolation.

    Returns:
        The results in check order (a crashed check contributes one failed, non-gate result
        saying so) and the crashes.
    """
    results: list[CheckResult] = []
    crashes: list[CheckCrash] = []
    for c in checks:
        if c.needs_output and ctx.output is None:
            continue
        try:
            got = c(ctx)
            produced = [got] if isinstance(got, CheckResult) else list(got)
            for r in produced:
                if not isinstance(r, CheckResult):  # pyright: ignore[reportUnnecessaryIsInstance]
                    raise TypeError(f"returned {type(r).__name__}, not CheckResult")
        except Exception as exc:  # one broken check never hides the others
            error = exception_text(exc)
            crashes.append(CheckCrash(c.name, error))
            results.append(
                CheckResult(name=c.name, passed=False, message=f"check crashed: {error}")
            )
            continue
        for r in produced:
            results.append(
                r if r.hard_gate == c.hard_gate else r.model_copy(update={"hard_gate": c.hard_gate})
            )
    return results, crashes
