"""The runnable unit: a frozen task specification.

Whatever is run (a domain's case, a workflow scenario's step, a corpus job) becomes a
:class:`TaskSpec`, so the loop, the checks, the store and the gate never need to know where a
task came from. A :class:`TaskKind` bundles an output model with the checks that judge it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from agentic_eval.agent.approval import ApprovalDecider, deny_all
from agentic_eval.agent.loop import Limits
from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.agent.user import SimulatedUser
from agentic_eval.checks.base import Check
from agentic_eval.core.case import CaseSpec

Env = TypeVar("Env")


@dataclass(frozen=True)
class TaskKind:
    """A family of tasks: the schema of the answer and the checks that judge it."""

    name: str
    output_model: type[BaseModel]
    checks: tuple[Check, ...] = ()
    submit: bool = True
    """Whether the agent answers through ``submit`` (validated against ``output_model``).
    False: no ``submit`` is offered and the checks judge what the episode left (the state, the
    trace, the dialogue); it ends when the user stops, a tool ends it, or the agent, with no
    user to talk to, replies with text alone."""

    def __post_init__(self) -> None:
        names = [c.name for c in self.checks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"task kind {self.name}: duplicate check names {dupes}")
        blind = sorted(c.name for c in self.checks if c.needs_output) if not self.submit else []
        if blind:  # skipped when nothing was submitted: with no submit, they would never judge
            raise ValueError(
                f"task kind {self.name} offers no submit, so checks {blind} (needs_output) "
                "would never run: judge the episode with needs_output=False"
            )


@dataclass(frozen=True)
class TaskSpec(Generic[Env]):
    """Everything one sample of one task needs to run and be judged."""

    suite: str
    """The suite it belongs to (a domain name, a workflow template...)."""
    case: CaseSpec
    """The case: id, inputs and the expectations the checks compare against."""
    system_prompt: str
    tools: ToolRegistry[Env]
    make_env: Callable[[], Env]
    """A fresh, private environment for this sample."""
    kind: TaskKind
    """Output model and checks."""
    limits: Limits = field(default_factory=Limits)
    approver: ApprovalDecider = deny_all
    """The approver: decides each approval request (the exact call and the agent's claims),
    an async function returning an :class:`~agentic_eval.agent.approval.ApprovalDecision`."""
    sample: int = 0
    """Sample index (epoch) of this run of the case."""
    attempt: int = 1
    """Attempt: the rejection round of a workflow step, from 1 (1: the first attempt; a domain
    case's samples have one). Never packed into ``sample``."""
    task: str = ""
    """The first user message (default: the case's rendered task)."""
    external_fixtures: str | None = None
    """sha256 of the real fixtures the task was built from (None: committed fixtures); every
    file derived from it carries this mark."""
    user: SimulatedUser | None = None
    """The simulated user of a conversation (None: the agent works from the task alone)."""

    def __post_init__(self) -> None:
        if self.sample < 0:
            raise ValueError("sample index must be >= 0")
        if self.attempt < 1:
            raise ValueError("attempt must be >= 1")
        if not self.task:
            object.__setattr__(self, "task", self.case.task())

    def for_sample(self, sample: int) -> TaskSpec[Env]:
        """This spec for sample ``sample``: ``dataclasses.replace(self, sample=sample)`` without
        running the constructor again (a tenth of the time; a batch of many epochs copies each
        case's first spec for every other sample).

        Raises:
            ValueError: When ``sample`` is negative.
        """
        if sample < 0:
            raise ValueError("sample index must be >= 0")
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        object.__setattr__(copy, "sample", sample)
        return copy

    @property
    def case_id(self) -> str:
        """The case's id."""
        return self.case.id

    @property
    def output_model(self) -> type[BaseModel]:
        """The schema of the final answer (the ``submit`` tool's input)."""
        return self.kind.output_model

    @property
    def submitted_model(self) -> type[BaseModel] | None:
        """The ``submit`` tool's schema, or None when the task offers no ``submit``."""
        return self.kind.output_model if self.kind.submit else None

    @property
    def checks(self) -> tuple[Check, ...]:
        """The checks that judge the task."""
        return self.kind.checks

    def key(self) -> tuple[str, str, int, int]:
        """(suite, case id, epoch, attempt): unique within a run."""
        return (self.suite, self.case.id, self.sample, self.attempt)


class _NoOutput(BaseModel):
    """Placeholder output model of a task whose suite code failed before it could run."""


def faulted_spec(
    suite: str,
    case: CaseSpec,
    system_prompt: str,
    where: str,
    error: str,
    *,
    limits: Limits | None = None,
    sample: int = 0,
    attempt: int = 1,
) -> TaskSpec[Any]:
    """A task that ends as ``error`` naming the suite code that failed while building it.

    Used when, for example, a domain's ``task_kind`` raises: the sample is still run, stored and
    reported, and the agent is never blamed.
    """
    from agentic_eval.agent.tools import DomainFault

    def broken() -> Any:
        raise DomainFault(where, error)

    return TaskSpec(
        suite=suite,
        case=case,
        system_prompt=system_prompt,
        tools=ToolRegistry(),
        make_env=broken,
        kind=TaskKind("faulted", _NoOutput),
        limits=limits or Limits(),
        sample=sample,
        attempt=attempt,
    )
