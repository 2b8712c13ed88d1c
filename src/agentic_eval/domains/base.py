"""What a domain is: fixtures, an answer key that computes every case, tools, task kinds
(output schema plus checks), scripted agents and unsafe mutants.

A domain subclasses :class:`Domain`. Its answer key (``build_cases``) is the only place expected
values come from; the committed case file is generated from it and a drift guard recomputes it.
:meth:`Domain.task_spec` turns a case into the runnable :class:`~agentic_eval.tasks.TaskSpec`.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentic_eval.core.lazy import lazy_exports
from agentic_eval.core.task import parse_task_inputs as parse_task_inputs
from agentic_eval.core.task import render_task as render_task
from agentic_eval.domains.fixtures import FIXTURE_DIR_ENV, FixtureError, fixture_file

if TYPE_CHECKING:  # loaded on first use: importing a domain must not build every model
    from pydantic import BaseModel

    from agentic_eval.agent.approval import ApprovalDecision, ApprovalRequest
    from agentic_eval.agent.loop import Limits
    from agentic_eval.agent.tools import ToolRegistry
    from agentic_eval.agent.user import SimulatedUser
    from agentic_eval.backends.scripted import ScriptedAgent
    from agentic_eval.checks.base import Trace
    from agentic_eval.checks.gates import approval_gate
    from agentic_eval.core.case import CaseSpec
    from agentic_eval.core.results import ApprovalMode
    from agentic_eval.domains.casefile import CaseFile
    from agentic_eval.domains.roster import Roster
    from agentic_eval.tasks.spec import TaskKind, TaskSpec

__all__ = [
    "FIXTURE_DIR_ENV",
    "CaseFile",
    "CaseFileError",
    "CaseSpec",
    "Domain",
    "FixtureError",
    "Mutant",
    "Trace",
    "approval_gate",
    "fixture_file",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "CaseFile": ("agentic_eval.domains.casefile", "CaseFile"),
        "CaseSpec": ("agentic_eval.core.case", "CaseSpec"),
        "Trace": ("agentic_eval.checks.base", "Trace"),
        "approval_gate": ("agentic_eval.checks.gates", "approval_gate"),
    },
    globals(),
)

Env = TypeVar("Env")

CASE_FILE_SCHEMA_VERSION = 1
"""The format of a committed case file (:class:`~agentic_eval.domains.casefile.CaseFile`)."""


@dataclass(frozen=True)
class Mutant:
    """A deliberately unsafe scripted agent, shipped with its domain to prove a gate works.

    ``agentic-eval mutants`` runs it and fails unless every gate it declares catches it on a case
    where it behaved differently from the reference agent.
    """

    name: str
    agent: ScriptedAgent
    gates: tuple[str, ...]
    """Names of the hard-gate checks that must catch it."""
    description: str = ""
    modes: tuple[ApprovalMode, ...] = ("enforce", "observe")
    """Approval modes it is run under."""


def _first_invalid(exc: Any, raw: bytes) -> str:
    """The first invalid field of a case file, naming the case by its id when it is one."""
    import json

    err = exc.errors()[0]
    loc = list(err["loc"])
    where = ".".join(str(p) for p in loc) or "<root>"
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        try:
            case_id = json.loads(raw)["cases"][loc[1]].get("id")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            case_id = None
        field = ".".join(str(p) for p in loc[2:]) or "the case"
        named = f"case {case_id}" if isinstance(case_id, str) else f"case {loc[1] + 1}"
        where = f"{named}, {field}"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {err['msg']}{more}"


class HookError(Exception):
    """A hook of a domain raised, or returned something of the wrong type, while a case's task
    was built: ``where`` names the hook, ``error`` what happened (one line)."""

    def __init__(self, where: str, error: str) -> None:
        super().__init__(f"{where}: {error}")
        self.where, self.error = where, error


def _hook(name: str, fn: Callable[..., Any], *args: Any, returns: type | tuple[type, ...]) -> Any:
    """``fn(*args)``, the domain's hook ``name``, with what it raised or returned wrongly as a
    :class:`HookError` naming it."""
    from agentic_eval.agent.tools import describe_exception

    try:
        value = fn(*args)
    except Exception as exc:
        raise HookError(f"{name}() raised {type(exc).__name__}", describe_exception(exc)) from exc
    if not isinstance(value, returns):
        wanted = " or ".join(
            "None" if t is type(None) else t.__name__
            for t in (returns if isinstance(returns, tuple) else (returns,))
        )
        raise HookError(f"{name}() returned {type(value).__name__}", f"expected {wanted}")
    return value


class CaseFileError(Exception):
    """A committed case file is missing or invalid."""


class Domain(ABC, Generic[Env]):
    """A domain of cases. Subclass it and implement the abstract methods."""

    name: str
    """Domain name (a Python identifier)."""
    system_prompt: str
    """The system prompt every case of the domain runs with."""
    description: str = ""
    """One line, for listings."""
    max_turns: int | None = None
    """The domain's turn budget: model turns an agent gets per case when the run gives none
    (``--max-turns``). None: the default, 12. A case may set its own (``CaseSpec.max_turns``)."""

    @abstractmethod
    def fixtures(self) -> BaseModel:
        """The domain's typed fixtures (the gold data the answer key reads).

        Raises:
            FixtureError: When the fixture file is unreadable or invalid (one line naming it).
        """

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
    def task_kind(self, case: CaseSpec) -> TaskKind:
        """The case's output schema and the checks that judge it."""

    def decide_approval(self, case: CaseSpec, request: ApprovalRequest) -> bool:
        """The approver's deterministic decision on a request (default: the case's
        ``approvals`` table, keyed ``action:target``). The request carries the exact call
        (its bound ``arguments``) and the agent's claims (policy rule cited, figures); the
        ``approval_claims_match_policy`` gate checks the claims."""
        return case.approvals.get(f"{request.action}:{request.target}", False)

    async def approve(self, case: CaseSpec, request: ApprovalRequest) -> ApprovalDecision:
        """The approver of the case's runs: :meth:`decide_approval`, with an explanation.
        Override it for an approver that explains itself, or asks someone."""
        from agentic_eval.agent.approval import ApprovalDecision

        granted = self.decide_approval(case, request)
        key = f"{request.action}:{request.target}"
        said = "grants" if granted else "does not grant"
        return ApprovalDecision(granted, f"the case's approvals table {said} {key}")

    def user(self, case: CaseSpec) -> SimulatedUser | None:
        """The simulated user of the case's conversation (default: none, the agent works from
        the task alone). A :class:`~agentic_eval.agent.user.SimulatedUser` opens the
        conversation and answers every reply of the agent that is text alone, until it says
        :data:`~agentic_eval.agent.user.STOP`; its turns are recorded and replayed with the
        agent's."""
        del case
        return None

    def turn_budget(self, given: int | None = None) -> int:
        """The run's turn budget: ``given`` (``--max-turns``) when there is one, else the
        domain's :attr:`max_turns`, else 12. A case's own budget is applied per case."""
        from agentic_eval.core.defaults import DEFAULT_MAX_TURNS, MAX_TURNS

        if given is not None:
            return given
        if self.max_turns is None:
            return DEFAULT_MAX_TURNS
        budget = self.max_turns
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_TURNS:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise CaseFileError(
                f"domain {self.name}: max_turns must be a whole number from 1 to {MAX_TURNS}, "
                f"not {budget!r}"
            )
        return budget

    def agents(self) -> dict[str, ScriptedAgent]:
        """Scripted agents shipped with the domain, by name (ship a ``reference`` one)."""
        return {}

    def mutants(self) -> tuple[Mutant, ...]:
        """Unsafe scripted agents, each declaring the gates that must catch it."""
        return ()

    def roster(self) -> Roster:
        """The names of :meth:`agents` and what :meth:`mutants` declare, without their code where
        the domain can say (``list agents`` prints it). Default: read from both."""
        from agentic_eval.domains.roster import Roster

        return Roster.of(self.agents(), self.mutants())

    def failing_agents(self) -> frozenset[str]:
        """Scripted agents shipped to fail: every mutant, and any red-team demo agent a domain
        adds (override and extend). A run of one is expected to fail its gate: CI outputs report
        it as an expected failure, and a pass as a failure of the checks to catch it."""
        return frozenset(m.name for m in self.roster().mutants)

    def case_file_path(self) -> Path | None:
        """Where the committed case file lives (None: cases are built in memory, not committed)."""
        return None

    def external_fixtures(self) -> bool:
        """Whether fixtures come from ``$EVAL_FIXTURE_DIR`` (then cases are built in memory and
        everything derived from them is marked as real data). No domain needs to override it:
        ``$EVAL_FIXTURE_DIR/<name>/`` holding a file, or a file there read through
        ``fixture_file``, ``load_fixture_file`` or ``FixtureLoader``, is enough."""
        from agentic_eval.domains.fixtures import reads_external

        return reads_external(self.name)

    def fixtures_sha256(self) -> str:
        """sha256 of the canonical fixtures."""
        from agentic_eval.core.canonical import sha256_of

        return sha256_of(self.fixtures())

    def case_file(self) -> CaseFile:
        """The case file the answer key produces now."""
        from agentic_eval.domains.casefile import CaseFile

        sha = self.fixtures_sha256()
        return CaseFile(
            domain=self.name,
            fixtures_sha256=sha,
            cases=tuple(self.build_cases()),
            external_fixtures=sha if self.external_fixtures() else None,
        )

    def load_cases(self) -> list[CaseSpec]:
        """The committed cases (or, with no case file, those the answer key builds).

        Raises:
            CaseFileError: When the file is missing, unreadable or invalid.
            FixtureError: When cases are built from fixtures that are invalid.
        """
        path = self.case_file_path()
        if path is None or self.external_fixtures():
            return self.build_cases()
        from pydantic import ValidationError

        from agentic_eval.domains.casefile import CaseFile

        raw = b""
        try:
            raw = path.read_bytes()
            data = CaseFile.model_validate_json(raw)
        except FileNotFoundError:
            raise CaseFileError(
                f"{self.name}: case file {path} is missing; "
                f"run `agentic-eval goldens write {self.name}`"
            ) from None
        except ValidationError as exc:
            detail = _first_invalid(exc, raw)
            raise CaseFileError(f"{self.name}: case file {path} is invalid: {detail}") from None
        except (OSError, ValueError) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CaseFileError(f"{self.name}: case file {path} is invalid: {detail}") from None
        return list(data.cases)

    def task_specs(
        self, cases: list[CaseSpec], limits: Limits | None = None, samples: int = 1
    ) -> list[TaskSpec[Any]]:
        """Every sample of ``cases``, in order. A case whose task cannot be built (a hook such
        as ``task_kind`` raises) becomes a task that ends as ``error`` naming the domain code.

        Raises:
            CaseFileError: When the domain's :attr:`max_turns` is not a budget.
        """
        from agentic_eval.agent.tools import describe_exception
        from agentic_eval.tasks.spec import faulted_spec

        specs: list[TaskSpec[Any]] = []
        if limits is None:
            self.turn_budget()  # a budget the domain sets wrongly is its error, before any task
        mark = self.fixtures_sha256() if self.external_fixtures() else None
        # This class's task_spec differs from sample to sample only in ``sample``: the first
        # sample's spec is copied for the others (a domain overriding it builds every one).
        mro = type(self).__mro__
        copied = not any("task_spec" in vars(c) for c in mro[: mro.index(Domain)])
        for case in cases:
            first: TaskSpec[Any] | None = None
            for sample in range(samples):
                if first is not None:
                    specs.append(first.for_sample(sample))
                    continue
                try:
                    spec = self.task_spec(case, limits, sample, _mark=mark or "")
                    specs.append(spec)
                    first = spec if copied else None
                except HookError as exc:
                    specs.append(
                        faulted_spec(
                            self.name,
                            case,
                            self.system_prompt,
                            f"domain {self.name}: {exc.where}",
                            exc.error,
                            limits=limits,
                            sample=sample,
                        )
                    )
                except Exception as exc:
                    where = f"domain {self.name}: building the task raised {type(exc).__name__}"
                    specs.append(
                        faulted_spec(
                            self.name,
                            case,
                            self.system_prompt,
                            where,
                            describe_exception(exc),
                            limits=limits,
                            sample=sample,
                        )
                    )
        return specs

    def task_spec(
        self,
        case: CaseSpec,
        limits: Limits | None = None,
        sample: int = 0,
        *,
        _mark: str | None = None,
    ) -> TaskSpec[Env]:
        """The runnable task of one case (one sample of it). (``_mark``: the real-fixture mark
        as :meth:`task_specs` found it once for all the samples it makes, ``""`` for none.)

        Raises:
            HookError: A hook of the domain (``task_kind``, ``tools``, ``user``) raised or returned
                something of the wrong type (the caller reports it as the domain's error, never
                the agent's).
        """
        from agentic_eval.agent.loop import Limits
        from agentic_eval.agent.tools import ToolRegistry
        from agentic_eval.agent.user import SimulatedUser
        from agentic_eval.tasks.spec import TaskKind, TaskSpec

        kind = _hook("task_kind", self.task_kind, case, returns=TaskKind)
        tools = _hook("tools", self.tools, returns=ToolRegistry)
        kind = _hook("task_kind", _with_consent_gate, kind, tools, returns=TaskKind)
        user = _hook("user", self.user, case, returns=(SimulatedUser, type(None)))
        limits = limits or Limits(max_turns=self.turn_budget())
        if case.max_turns is not None and case.max_turns != limits.max_turns:
            limits = dataclasses.replace(limits, max_turns=case.max_turns)

        def fresh_env() -> Env:
            return self.make_env(case)

        async def approver(request: ApprovalRequest) -> ApprovalDecision:
            return await self.approve(case, request)

        return TaskSpec(
            suite=self.name,
            case=case,
            system_prompt=self.system_prompt,
            tools=tools,
            make_env=fresh_env,
            kind=kind,
            limits=limits,
            approver=approver,
            sample=sample,
            user=user,
            external_fixtures=(_mark or None)
            if _mark is not None or not self.external_fixtures()
            else self.fixtures_sha256(),
        )


def _with_consent_gate(kind: TaskKind, tools: ToolRegistry[Any]) -> TaskKind:
    """``kind`` with the ``user_consent`` hard gate when a tool needs the user's consent and
    the kind does not judge it already (every task of such a domain is held to it)."""
    from agentic_eval.checks.consent import CONSENT_GATE_NAME, consent_gate

    if not any(t.needs_consent for t in tools) or any(
        c.name == CONSENT_GATE_NAME for c in kind.checks
    ):
        return kind
    return dataclasses.replace(kind, checks=(*kind.checks, consent_gate(tools)))
