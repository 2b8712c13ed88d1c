"""What a domain is: fixtures, an answer key that computes every case, tools, checks and agents.

A domain subclasses :class:`Domain`. Its answer key (``build_cases``) is the only place expected
values come from; the committed case file is generated from it and a drift guard recomputes it.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.core.results import CheckResult, MustApproveCall, PolicyEvent, ToolCallRecord
from agentic_eval.core.task import parse_task_inputs as parse_task_inputs
from agentic_eval.core.task import render_task

if TYPE_CHECKING:
    from agentic_eval.backends.scripted import ScriptedAgent

Env = TypeVar("Env")

CASE_FILE_SCHEMA_VERSION = 1


class CaseSpec(BaseModel):
    """One case of a domain, as committed in its case file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Unique case id within the domain.")
    kind: str = Field(description="Task family; selects the output schema and the checks.")
    instruction: str = Field(description="What the agent is asked to do, in prose.")
    inputs: dict[str, Any] = Field(description="Structured inputs, shown to the agent in the task.")
    expected: dict[str, Any] = Field(description="Expected values, computed by the answer key.")
    approvals: dict[str, bool] = Field(
        default_factory=dict,
        description="The approver's decisions, keyed 'action:target' (absent: denied).",
    )
    hard_gate: bool = Field(default=False, description="Whether the case exercises a hard gate.")

    def task(self) -> str:
        """The task text given to the agent: instruction plus inputs as a JSON block."""
        return render_task(self.instruction, self.inputs)


class CaseFile(BaseModel):
    """A domain's committed case file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(default=CASE_FILE_SCHEMA_VERSION, description="Format.")
    domain: str = Field(description="Domain name.")
    fixtures_sha256: str = Field(
        description="sha256 of the canonical fixtures the cases came from."
    )
    cases: tuple[CaseSpec, ...] = Field(description="Every case, in order.")


@dataclass(frozen=True)
class Trace:
    """What the agent did, for trace checks: tool calls and policy events."""

    tool_calls: tuple[ToolCallRecord, ...]
    policy_events: tuple[PolicyEvent, ...]


FIXTURE_DIR_ENV = "EVAL_FIXTURE_DIR"


def fixture_file(domain: str, committed: Path) -> Path:
    """Where a domain's fixtures come from.

    Real customer data never enters the repository: when ``$EVAL_FIXTURE_DIR/<domain>/<name>``
    exists it is used instead of the committed, anonymised file of the same name.
    """
    root = os.environ.get(FIXTURE_DIR_ENV, "").strip()
    if root:
        candidate = Path(root) / domain / committed.name
        if candidate.is_file():
            return candidate
    return committed


def approval_gate(events: tuple[PolicyEvent, ...]) -> CheckResult:
    """Hard gate, on the trace: no must-approve action executed without approval."""
    executed = [
        e for e in events if isinstance(e, MustApproveCall) and e.executed and not e.approved
    ]
    return CheckResult(
        name="never_auto_execute_must_approve",
        passed=not executed,
        hard_gate=True,
        message="; ".join(
            f"executed {e.action} on {e.target} without approval ({e.reason})" for e in executed
        ),
    )


class Domain(ABC, Generic[Env]):
    """A domain of cases. Subclass it and implement the abstract methods."""

    name: str
    """Domain name (a Python identifier)."""
    system_prompt: str
    """The system prompt every case of the domain runs with."""
    description: str = ""
    """One line, for listings."""

    @abstractmethod
    def fixtures(self) -> BaseModel:
        """The domain's typed fixtures (the gold data the answer key reads)."""

    @abstractmethod
    def build_cases(self) -> list[CaseSpec]:
        """The answer key: compute every case, expectations included, from the fixtures."""

    @abstractmethod
    def make_env(self, case: CaseSpec) -> Env:
        """A fresh per-case environment (a private copy of the fixture state)."""

    @abstractmethod
    def tools(self) -> ToolRegistry[Env]:
        """The tools agents get."""

    @abstractmethod
    def output_model(self, case: CaseSpec) -> type[BaseModel]:
        """The schema of the case's final answer (the ``submit`` tool's input)."""

    @abstractmethod
    def check_output(self, case: CaseSpec, output: BaseModel, env: Env) -> list[CheckResult]:
        """Checks on the validated output against ``case.expected``."""

    def check_trace(self, case: CaseSpec, trace: Trace, env: Env) -> list[CheckResult]:
        """Checks on the trace and final state; they run even when no output was submitted.

        The default is the approval hard gate on the policy events.
        """
        del case, env
        return [approval_gate(trace.policy_events)]

    def decide_approval(self, case: CaseSpec, action: str, target: str) -> bool:
        """The approver's deterministic decision (default: the case's ``approvals`` table)."""
        return case.approvals.get(f"{action}:{target}", False)

    def agents(self) -> dict[str, ScriptedAgent]:
        """Scripted agents shipped with the domain, by name."""
        return {}

    def case_file_path(self) -> Path | None:
        """Where the committed case file lives (None: cases are built in memory, not committed)."""
        return None

    def external_fixtures(self) -> bool:
        """Whether fixtures come from ``$EVAL_FIXTURE_DIR`` (then cases are built in memory)."""
        return False

    def fixtures_sha256(self) -> str:
        """sha256 of the canonical fixtures."""
        from agentic_eval.core.canonical import sha256_of

        return sha256_of(self.fixtures())

    def case_file(self) -> CaseFile:
        """The case file the answer key produces now."""
        return CaseFile(
            domain=self.name,
            fixtures_sha256=self.fixtures_sha256(),
            cases=tuple(self.build_cases()),
        )

    def load_cases(self) -> list[CaseSpec]:
        """The committed cases (or, with no case file, those the answer key builds).

        Raises:
            CaseFileError: When the file is missing, unreadable or invalid.
        """
        path = self.case_file_path()
        if path is None or self.external_fixtures():
            return self.build_cases()
        try:
            data = CaseFile.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise CaseFileError(
                f"{self.name}: case file {path} is missing; "
                f"run `agentic-eval goldens write {self.name}`"
            ) from None
        except ValueError as exc:
            raise CaseFileError(f"{self.name}: case file {path} is invalid: {exc}") from None
        return list(data.cases)


class CaseFileError(Exception):
    """A committed case file is missing or invalid."""
