"""A domain assembled from the parts its own package defines.

Every built-in domain has the same shape: a fixture loader, an answer key, an environment
factory, tools, task kinds, scripted agents, mutants and a committed case file beside its
module. :class:`PackagedDomain` wires those parts into the :class:`Domain` interface, so a domain
module only names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic import BaseModel

from agentic_eval.agent.approval import ApprovalDecision, ApprovalRequest
from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.base import Domain, Mutant
from agentic_eval.domains.fixtures import FixtureLoader
from agentic_eval.tasks.spec import TaskKind

if TYPE_CHECKING:
    from agentic_eval.backends.scripted import ScriptedAgent

Env = TypeVar("Env")
Fx = TypeVar("Fx", bound=BaseModel)


class PackagedDomain(Domain[Env], Generic[Env, Fx]):
    """A domain made of named parts (see the module docstring)."""

    def __init__(
        self,
        *,
        name: str,
        system_prompt: str,
        description: str,
        loader: FixtureLoader[Fx],
        build_cases: Callable[[Fx], list[CaseSpec]],
        make_env: Callable[[Fx, CaseSpec], Env],
        tools: ToolRegistry[Env],
        kinds: Mapping[str, TaskKind],
        agents: Mapping[str, ScriptedAgent],
        mutants: tuple[Mutant, ...] = (),
        demos: tuple[str, ...] = (),
        case_file: Path | None = None,
        approver: Callable[[Fx, CaseSpec, ApprovalRequest], ApprovalDecision] | None = None,
    ) -> None:
        """Args:
        name: Domain name.
        system_prompt: The system prompt of every case.
        description: One line, for listings.
        loader: The fixture loader (committed file, or the one under ``EVAL_FIXTURE_DIR``).
        build_cases: The answer key: every case from the fixtures.
        make_env: A fresh per-case environment from the fixtures and the case.
        tools: The tools agents get.
        kinds: Each case kind's output model and checks (read on every call, so a test can
            patch the mapping).
        agents: Scripted agents by name (ship ``reference``).
        mutants: Unsafe agents, each declaring the gates that must catch it.
        demos: Agents of ``agents`` shipped to show a failure (red-team demos): expected to
            fail, as mutants are.
        case_file: The committed case file.
        approver: The approver's decision on a request, from the fixtures and the case
            (default: the case's approvals table, :meth:`Domain.approve`).
        """
        self.name = name
        self.system_prompt = system_prompt
        self.description = description
        self._loader, self._build, self._env = loader, build_cases, make_env
        self._tools, self._kinds, self._agents = tools, kinds, agents
        self._mutants, self._case_file = mutants, case_file
        unknown = set(demos) - set(agents)
        if unknown:
            raise ValueError(f"{name}: demos {sorted(unknown)} are not agents of the domain")
        self._demos = frozenset(demos)
        self._approver = approver

    def fixtures(self) -> Fx:
        """The fixtures in use (validated, cached per file version)."""
        return self._loader()

    def external_fixtures(self) -> bool:
        """Whether ``$EVAL_FIXTURE_DIR`` replaces the committed fixtures."""
        return self._loader.path() != self._loader.committed

    def build_cases(self) -> list[CaseSpec]:
        """Every case, computed by the answer key."""
        return self._build(self.fixtures())

    def make_env(self, case: CaseSpec) -> Env:
        """A fresh environment for one case."""
        return self._env(self.fixtures(), case)

    def tools(self) -> ToolRegistry[Env]:
        """The tools agents get."""
        return self._tools

    def task_kind(self, case: CaseSpec) -> TaskKind:
        """The case kind's output model and checks.

        Raises:
            KeyError: For an unknown kind.
        """
        return self._kinds[case.kind]

    async def approve(self, case: CaseSpec, request: ApprovalRequest) -> ApprovalDecision:
        """The domain's approver, or the case's approvals table."""
        if self._approver is None:
            return await super().approve(case, request)
        return self._approver(self.fixtures(), case, request)

    def agents(self) -> dict[str, ScriptedAgent]:
        """Scripted agents by name."""
        return dict(self._agents)

    def mutants(self) -> tuple[Mutant, ...]:
        """Unsafe agents, each declaring the gates that must catch it."""
        return self._mutants

    def failing_agents(self) -> frozenset[str]:
        """Every mutant and every demo agent."""
        return super().failing_agents() | self._demos

    def case_file_path(self) -> Path | None:
        """The committed case file."""
        return self._case_file
