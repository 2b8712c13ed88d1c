"""A domain assembled from the parts its own package defines.

Every built-in domain has the same shape: a fixture loader, an answer key, an environment
factory, tools, task kinds, scripted agents, mutants and a committed case file beside its
module. :class:`PackagedDomain` wires those parts into the :class:`Domain` interface, so a domain
module only names them.

The package itself holds what a listing shows (name, description, system prompt, where the case
and fixture files are) and names the module of its :class:`DomainParts`, imported on first use:
``agentic-eval list`` and ``show`` load no tool, check or model of a domain.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from agentic_eval.domains.base import Domain, Mutant
from agentic_eval.domains.fixtures import FixtureLoader, fixture_file
from agentic_eval.domains.roster import Roster, RosterError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agentic_eval.agent.approval import ApprovalDecision, ApprovalRequest
    from agentic_eval.agent.tools import ToolRegistry
    from agentic_eval.backends.scripted import ScriptedAgent
    from agentic_eval.core.case import CaseSpec
    from agentic_eval.tasks.spec import TaskKind

Env = TypeVar("Env")
Fx = TypeVar("Fx", bound="BaseModel")


@dataclass(frozen=True)
class DomainParts(Generic[Env, Fx]):
    """What a packaged domain runs with, defined in a module of the domain's own."""

    loader: FixtureLoader[Fx]
    """The fixture loader (committed file, or the one under ``EVAL_FIXTURE_DIR``)."""
    build_cases: Callable[[Fx], list[CaseSpec]]
    """The answer key: every case from the fixtures."""
    make_env: Callable[[Fx, CaseSpec], Env]
    """A fresh per-case environment from the fixtures and the case."""
    tools: ToolRegistry[Env]
    """The tools agents get."""
    kinds: Mapping[str, TaskKind]
    """Each case kind's output model and checks (read on every call, so a test can patch the
    mapping)."""
    agents: Mapping[str, ScriptedAgent]
    """Scripted agents by name (ship ``reference``)."""
    mutants: tuple[Mutant, ...] = ()
    """Unsafe agents, each declaring the gates that must catch it."""
    approver: Callable[[Fx, CaseSpec, ApprovalRequest], ApprovalDecision] | None = None
    """The approver's decision on a request, from the fixtures and the case (default: the
    case's approvals table, :meth:`Domain.approve`)."""


class PackagedDomain(Domain[Env], Generic[Env, Fx]):
    """A domain made of named parts (see the module docstring)."""

    def __init__(
        self,
        *,
        name: str,
        system_prompt: str,
        description: str,
        parts: str,
        fixture_file: Path,
        case_file: Path | None = None,
        demos: tuple[str, ...] = (),
        roster: str | None = None,
    ) -> None:
        """Args:
        name: Domain name.
        system_prompt: The system prompt of every case.
        description: One line, for listings.
        parts: Where its :class:`DomainParts` are, ``"module:attribute"``; imported on first
            use.
        fixture_file: The committed fixture file (the parts' loader reads it, or the one of
            that name under ``EVAL_FIXTURE_DIR``).
        case_file: The committed case file.
        demos: Agents of the parts' ``agents`` shipped to show a failure (red-team demos):
            expected to fail, as mutants are.
        roster: Where its :class:`~agentic_eval.domains.roster.Roster` is, ``"module:attribute"``
            in a module that imports no agent (``list agents`` reads it; the parts must ship
            exactly its agents and mutants). Default: read from the parts.
        """
        self.name = name
        self.system_prompt = system_prompt
        self.description = description
        self._where, self._fixture_file, self._case_file = parts, fixture_file, case_file
        self._demos = frozenset(demos)
        self._roster_at = roster
        self._parts: DomainParts[Env, Fx] | None = None

    def parts(self) -> DomainParts[Env, Fx]:
        """The domain's parts (imported on the first call).

        Raises:
            TypeError: When ``parts`` names something other than a :class:`DomainParts`.
            ValueError: When its loader reads another domain's or another fixture file, or a
                demo is not one of its agents.
            RosterError: When its agents and mutants are not its roster's.
        """
        if self._parts is not None:
            return self._parts
        module, _, attribute = self._where.partition(":")
        found: object = getattr(importlib.import_module(module), attribute)
        if not isinstance(found, DomainParts):
            raise TypeError(f"{self.name}: {self._where} is a {type(found).__name__}, not parts")
        parts: DomainParts[Env, Fx] = found  # pyright: ignore[reportUnknownVariableType]
        loader = parts.loader
        if loader.domain != self.name or loader.committed != self._fixture_file:
            raise ValueError(
                f"{self.name}: the loader of {self._where} reads {loader.committed} for "
                f"{loader.domain!r}, not {self._fixture_file}"
            )
        unknown = self._demos - set(parts.agents)
        if unknown:
            raise ValueError(f"{self.name}: demos {sorted(unknown)} are not agents of the domain")
        if self._roster_at is not None and Roster.of(parts.agents, parts.mutants) != self.roster():
            raise RosterError(
                f"{self.name}: the agents and mutants of {self._where} differ from its roster "
                f"{self._roster_at}"
            )
        self._parts = parts
        return parts

    def fixtures(self) -> Fx:
        """The fixtures in use (validated, cached per file version)."""
        return self.parts().loader()

    def external_fixtures(self) -> bool:
        """Whether ``$EVAL_FIXTURE_DIR`` replaces the committed fixtures (asked without
        importing the parts)."""
        return fixture_file(self.name, self._fixture_file) != self._fixture_file

    def build_cases(self) -> list[CaseSpec]:
        """Every case, computed by the answer key."""
        return self.parts().build_cases(self.fixtures())

    def make_env(self, case: CaseSpec) -> Env:
        """A fresh environment for one case."""
        return self.parts().make_env(self.fixtures(), case)

    def tools(self) -> ToolRegistry[Env]:
        """The tools agents get."""
        return self.parts().tools

    def task_kind(self, case: CaseSpec) -> TaskKind:
        """The case kind's output model and checks.

        Raises:
            KeyError: For an unknown kind.
        """
        return self.parts().kinds[case.kind]

    async def approve(self, case: CaseSpec, request: ApprovalRequest) -> ApprovalDecision:
        """The domain's approver, or the case's approvals table."""
        approver = self.parts().approver
        if approver is None:
            return await super().approve(case, request)
        return approver(self.fixtures(), case, request)

    def agents(self) -> dict[str, ScriptedAgent]:
        """Scripted agents by name."""
        return dict(self.parts().agents)

    def mutants(self) -> tuple[Mutant, ...]:
        """Unsafe agents, each declaring the gates that must catch it."""
        return self.parts().mutants

    def roster(self) -> Roster:
        """The roster module's, when the domain names one (no agent is imported), else the
        parts'.

        Raises:
            TypeError: When ``roster`` names something other than a :class:`Roster`.
        """
        if self._roster_at is None:
            return super().roster()
        module, _, attribute = self._roster_at.partition(":")
        found: object = getattr(importlib.import_module(module), attribute)
        if not isinstance(found, Roster):
            raise TypeError(
                f"{self.name}: {self._roster_at} is a {type(found).__name__}, not a roster"
            )
        return found

    def failing_agents(self) -> frozenset[str]:
        """Every mutant and every demo agent."""
        return super().failing_agents() | self._demos

    def case_file_path(self) -> Path | None:
        """The committed case file."""
        return self._case_file
