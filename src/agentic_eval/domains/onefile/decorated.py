"""A domain defined in one file: :func:`domain` builds it, decorators add its parts.

::

    refunds = agentic_eval.domain("refunds", system_prompt=..., instruction=...,
                                  output=Answer, cases=[{"order_id": "O-1"}, ...])

    @refunds.tool
    def get_order(order_id: str) -> dict[str, Any]: ...      # a plain typed function

    @refunds.answer_key
    def expected(inputs: dict[str, Any]) -> dict[str, Any]: ...   # each case's expectations

    @refunds.check
    def refunded_right(ctx: CheckContext[Any]) -> bool: ...

    @refunds.agent
    def reference(task: AgentTask) -> Iterator[Any]: ...     # a scripted agent

    @refunds.simulated_user
    def customer(view: UserView) -> str: ...     # optional: every case is a conversation

It is a :class:`~agentic_eval.domains.base.Domain` like any other: the same loop, checks, store,
gate, case file and recordings. Its files live beside the file that defines it:
``<folder>/<name>.cases.json`` (the case file ``goldens write`` writes) and, by the CLI's
default, ``<folder>/recordings/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, ValidationError

from agentic_eval.agent.approval import ApprovalRequest
from agentic_eval.agent.tools import (
    ApprovalPredicate,
    ToolRegistry,
    describe_exception,
    first_validation_error,
)
from agentic_eval.checks.base import Check, CheckContext, FunctionCheck
from agentic_eval.checks.gates import APPROVAL_GATE, CLAIMS_GATE
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.defaults import MAX_TURNS
from agentic_eval.core.results import CheckResult
from agentic_eval.domains.base import CaseFileError, Domain, Mutant
from agentic_eval.domains.fixtures import fixture_file
from agentic_eval.domains.onefile.plain import (
    JSON_VALUES,
    CaseRows,
    as_results,
    caller_file,
    plain_tool,
    read_jsonl,
    row_problem,
)
from agentic_eval.tasks.spec import TaskKind

if TYPE_CHECKING:
    from agentic_eval.agent.user import ScriptedUser, SimulatedUser
    from agentic_eval.backends.scripted import ScriptedAgent

F = TypeVar("F", bound=Callable[..., Any])
CheckFn = Callable[[CheckContext[Any]], "bool | CheckResult | Sequence[CheckResult]"]

ID_KEY = "id"
"""A case row's optional id; the other keys are the case's inputs."""
USER_KEY = "user"
"""A case row's optional instructions for the simulated user (what it wants, knows and will
say yes to): the user's script reads them as ``view.instructions``; the agent never sees them."""


class NoAnswer(BaseModel):
    """The answer of a domain with ``output=None``: none (the checks judge the episode)."""

    model_config = ConfigDict(extra="forbid")


class OneFileDomain(Domain[Any]):
    """A domain whose parts are registered by decorators (see the module docstring)."""

    def __init__(
        self,
        name: str,
        *,
        system_prompt: str,
        instruction: str,
        output: type[BaseModel] | None,
        cases: Sequence[Mapping[str, Any]] | str | Path,
        state: Callable[[dict[str, Any]], Any] | None = None,
        description: str = "",
        max_turns: int | None = None,
        source: str | Path | None = None,
    ) -> None:
        """Args:
        name: Domain name (a Python identifier; it names the case file and recordings).
        system_prompt: The system prompt of every case.
        instruction: What every case asks; each case's inputs are shown below it.
        output: The answer's pydantic model (the ``submit`` tool's input), or None: no
            ``submit`` tool, the checks judge what the episode left (a conversation with a
            ``user`` ends when the user stops or a tool ends it).
        cases: The case rows: a list of input dicts, or a JSON-lines file (one object a line)
            relative to the defining file. A row's ``id`` names the case (default
            ``case-<n>``); its other keys are the inputs. A file of that name under
            ``$EVAL_FIXTURE_DIR/<name>/`` replaces it: the run is then on real data, and
            everything derived from it is marked so.
        state: A fresh per-case state from the case's inputs (default: an empty dict); tools
            whose first parameter is ``state`` receive it and checks read it as ``ctx.env``.
        description: One line, for listings.
        max_turns: The turn budget of every case (default 12; ``--max-turns`` overrides).
        source: The defining file (default: the caller's module file).
        """
        if not name.isidentifier():
            raise ValueError(f"domain name {name!r} must be a Python identifier")
        self.name = name
        self.system_prompt = system_prompt
        self.description = description
        if max_turns is not None and (
            isinstance(max_turns, bool)
            or not isinstance(max_turns, int)  # pyright: ignore[reportUnnecessaryIsInstance]
            or not 1 <= max_turns <= MAX_TURNS
        ):
            raise ValueError(
                f"domain {name}: max_turns must be a whole number from 1 to {MAX_TURNS}, "
                f"not {max_turns!r}"
            )
        self.max_turns = max_turns
        self.instruction = instruction
        self.output = output
        self.source = Path(source).resolve() if source is not None else caller_file(2)
        self._cases = cases if isinstance(cases, str | Path) else [dict(r) for r in cases]
        for n, row in enumerate(self._cases if isinstance(self._cases, list) else [], 1):
            problem = row_problem(row, n)
            if problem:  # the agent sees the row as JSON, and the case file keeps it so
                raise ValueError(f"domain {name}: {problem} ({JSON_VALUES} only)")
        self._state = state
        self._tools: ToolRegistry[Any] = ToolRegistry()
        self._checks: list[Check] = []
        self._answer_key: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None
        self._agents: dict[str, ScriptedAgent] = {}
        self._mutants: list[Mutant] = []
        self._approver: Callable[[CaseSpec, ApprovalRequest], bool] | None = None
        self._user: ScriptedUser | None = None
        self._user_lines: tuple[object, dict[str, str]] | None = None

    # --- where its files are -------------------------------------------------------------

    @property
    def folder(self) -> Path:
        """The defining file's folder (the working directory when it is unknown)."""
        return self.source.parent if self.source is not None else Path.cwd()

    def _committed_cases(self) -> Path | None:
        """The JSON-lines case file named by ``cases=`` (None: cases are a list)."""
        if isinstance(self._cases, list):
            return None
        path = Path(self._cases)
        return path if path.is_absolute() else self.folder / path

    def cases_path(self) -> Path | None:
        """The JSON-lines case file in use: ``$EVAL_FIXTURE_DIR/<name>/<file name>`` when it
        exists, else the one named (None: cases are a list in the file)."""
        committed = self._committed_cases()
        return None if committed is None else fixture_file(self.name, committed)

    def case_file_path(self) -> Path:
        """The case file ``goldens write`` writes, beside the defining file."""
        return self.folder / f"{self.name}.cases.json"

    def recordings_root(self) -> Path:
        """Where its recordings go unless ``--recordings`` says otherwise."""
        return self.folder / "recordings"

    def external_fixtures(self) -> bool:
        """Whether its case rows come from ``$EVAL_FIXTURE_DIR`` (real data)."""
        return self.cases_path() != self._committed_cases()

    # --- decorators --------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        requires_approval: ApprovalPredicate | None = None,
        mutates: str | None = None,
        consequential: tuple[str, ...] = (),
        needs_consent: bool = False,
        ends_episode: bool = False,
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        requires_approval: ApprovalPredicate | None = None,
        mutates: str | None = None,
        consequential: tuple[str, ...] = (),
        needs_consent: bool = False,
        ends_episode: bool = False,
    ) -> F | Callable[[F], F]:
        """Register a plain typed function as a tool (``@d.tool`` or ``@d.tool(...)``).

        Its JSON schema comes from its type hints and Google-style docstring. A first
        parameter named ``state`` receives the case's state. ``requires_approval(state, args)``
        returns an :class:`~agentic_eval.agent.tools.ApprovalRequirement` when a call must be
        approved first; ``mutates``, ``consequential``, ``needs_consent`` (the user's explicit yes
        to this call first, judged by the ``user_consent`` hard gate) and ``ends_episode`` (a
        transfer to a human) are as for :meth:`~agentic_eval.agent.tools.ToolRegistry.tool`.
        """

        def register(f: F) -> F:
            self._tools.tool(
                name=name or f.__name__,
                requires_approval=requires_approval,
                mutates=mutates,
                consequential=consequential,
                needs_consent=needs_consent,
                ends_episode=ends_episode,
            )(plain_tool(f))
            return f

        return register(fn) if fn is not None else register

    @overload
    def check(self, fn: CheckFn, /) -> CheckFn: ...
    @overload
    def check(
        self,
        /,
        *,
        name: str | None = None,
        hard_gate: bool = False,
        needs_output: bool | None = None,
    ) -> Callable[[CheckFn], CheckFn]: ...
    def check(
        self,
        fn: CheckFn | None = None,
        /,
        *,
        name: str | None = None,
        hard_gate: bool = False,
        needs_output: bool | None = None,
    ) -> CheckFn | Callable[[CheckFn], CheckFn]:
        """Register a check: a function of the :class:`~agentic_eval.checks.CheckContext`
        returning a bool (pass or fail) or :class:`~agentic_eval.core.results.CheckResult`\\ s.

        Args:
            fn: The function (when used bare, ``@d.check``).
            name: Check name (default: the function name).
            hard_gate: A failure fails the case and the run outright.
            needs_output: Skip it when nothing valid was submitted (the default when the
                domain has an ``output``); pass False for a check of the trace or the final
                state alone. With ``output=None`` nothing is submitted, so every check judges
                the episode, and True is refused.

        Raises:
            ValueError: ``needs_output=True`` in a domain with ``output=None``.
        """
        if needs_output and self.output is None:
            raise ValueError(
                f"domain {self.name} has output=None: nothing is submitted, so a check with "
                "needs_output=True would never run"
            )
        skip_without_output = self.output is not None if needs_output is None else needs_output

        def register(f: CheckFn) -> CheckFn:
            label = name or f.__name__

            def judge(ctx: CheckContext[Any]) -> CheckResult | list[CheckResult]:
                return as_results(label, f(ctx))

            self._checks.append(FunctionCheck(label, judge, hard_gate, skip_without_output))
            return f

        return register(fn) if fn is not None else register

    def answer_key(
        self, fn: Callable[[dict[str, Any]], Mapping[str, Any]]
    ) -> Callable[[dict[str, Any]], Mapping[str, Any]]:
        """Register the answer key: a case's inputs to its expected values (``ctx.case.expected``
        in checks). Goldens are computed by it, never written by hand."""
        self._answer_key = fn
        return fn

    @overload
    def agent(self, fn: F, /) -> F: ...
    @overload
    def agent(self, name: str, /) -> Callable[[F], F]: ...
    def agent(self, arg: F | str, /) -> F | Callable[[F], F]:
        """Register a scripted agent (a generator of an ``AgentTask``), named after the
        function or as given: ``@d.agent`` or ``@d.agent("careful")``."""

        def register(f: F) -> F:
            self._agents[arg if isinstance(arg, str) else f.__name__] = f
            return f

        return register if isinstance(arg, str) else register(arg)

    def mutant(self, *gates: str, description: str = "") -> Callable[[F], F]:
        """Register an unsafe scripted agent and the hard gates that must catch it
        (``agentic-eval mutants FILE`` fails on an escape)."""

        def register(f: F) -> F:
            self._mutants.append(Mutant(f.__name__, f, tuple(gates), description or f.__name__))
            return f

        return register

    def approver(
        self, fn: Callable[[CaseSpec, ApprovalRequest], bool]
    ) -> Callable[[CaseSpec, ApprovalRequest], bool]:
        """Register the approver's decision on a request (default: every request denied)."""
        self._approver = fn
        return fn

    def simulated_user(self, fn: ScriptedUser) -> ScriptedUser:
        """Register a scripted simulated user: a function of the conversation so far
        (:class:`~agentic_eval.agent.user.UserView`: ``case_id``, ``instructions`` (the case
        row's ``user`` text), ``dialogue``, ``last``) returning its next line, ending it with
        :data:`~agentic_eval.agent.user.STOP`. Every case then is a conversation it opens."""
        self._user = fn
        return fn

    # --- the Domain interface ----------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """The case rows in use.

        Raises:
            FixtureError: A case file that is unreadable or holds something other than objects.
        """
        if isinstance(self._cases, list):
            return [dict(r) for r in self._cases]
        path = self.cases_path()
        assert path is not None  # cases are a file
        return read_jsonl(path)

    def fixtures(self) -> CaseRows:
        """The case rows, as the fixtures the case file's sha256 is taken of."""
        return CaseRows(rows=tuple(self.rows()))

    def build_cases(self) -> list[CaseSpec]:
        """Every case: a row's inputs, and the expectations the answer key computes from them.

        Raises:
            CaseFileError: A bad case id, a repeated id, or an answer key that raised.
        """
        cases: list[CaseSpec] = []
        hard = any(c.hard_gate for c in self._all_checks()) or any(
            t.needs_consent for t in self._tools
        )
        for n, row in enumerate(self.rows(), 1):
            inputs = {k: v for k, v in row.items() if k not in (ID_KEY, USER_KEY)}
            case_id = str(row.get(ID_KEY, f"case-{n}"))
            if not isinstance(row.get(USER_KEY, ""), str):
                raise CaseFileError(
                    f"{self.name}: case {case_id}: {USER_KEY!r} holds the user's instructions "
                    f"as text, not {type(row[USER_KEY]).__name__}"
                )
            try:
                expected = dict(self._answer_key(inputs)) if self._answer_key else {}
            except Exception as exc:
                raise CaseFileError(
                    f"{self.name}: the answer key raised on case {case_id}: "
                    f"{describe_exception(exc)}"
                ) from None
            try:
                cases.append(
                    CaseSpec(
                        id=case_id,
                        kind=self.name,
                        instruction=self.instruction,
                        inputs=inputs,
                        expected=expected,
                        hard_gate=hard,
                    )
                )
            except ValidationError as exc:
                raise CaseFileError(
                    f"{self.name}: case {n}: {first_validation_error(exc)}"
                ) from None
        seen: set[str] = set()
        for case in cases:
            if case.id in seen:
                raise CaseFileError(f"{self.name}: two cases have the id {case.id!r}")
            seen.add(case.id)
        return cases

    def load_cases(self) -> list[CaseSpec]:
        """The cases of the case file beside the defining file (see :meth:`Domain.load_cases`).

        Raises:
            CaseFileError: When it is missing (saying how to write it), unreadable or invalid.
            FixtureError: When cases are built from real case rows that are invalid.
        """
        if not self.external_fixtures() and not self.case_file_path().exists():
            where = self.source if self.source is not None else self.name
            raise CaseFileError(
                f"{self.name}: case file {self.case_file_path()} is missing; "
                f"run `agentic-eval goldens write {where}`"
            )
        return super().load_cases()

    def make_env(self, case: CaseSpec) -> Any:
        """A fresh state for one case."""
        return {} if self._state is None else self._state(dict(case.inputs))

    def tools(self) -> ToolRegistry[Any]:
        """The registered tools."""
        return self._tools

    def _all_checks(self) -> tuple[Check, ...]:
        gates: tuple[Check, ...] = ()
        if self._tools.has_approval_rules():  # a must-approve tool: its gates judge every case
            gates = (APPROVAL_GATE, CLAIMS_GATE)
        return (*self._checks, *gates)

    def task_kind(self, case: CaseSpec) -> TaskKind:
        """The output model and every registered check (plus the approval gates when a tool
        requires approval)."""
        if self.output is None:
            return TaskKind(self.name, NoAnswer, self._all_checks(), submit=False)
        return TaskKind(self.name, self.output, self._all_checks())

    def user(self, case: CaseSpec) -> SimulatedUser | None:
        """The registered scripted user, with the case row's ``user`` instructions."""
        if self._user is None:
            return None
        from agentic_eval.agent.user import SimulatedUser

        name = getattr(self._user, "__name__", "user")
        return SimulatedUser(self._user_instructions(case.id), script=self._user, name=name)

    def _user_instructions(self, case_id: str) -> str:
        """The ``user`` text of the case's row (read once per version of the case rows)."""
        path = self.cases_path()
        version: object = None
        if path is not None:
            try:
                stat = path.stat()
                version = (path, stat.st_mtime_ns, stat.st_size)
            except OSError:
                version = (path,)  # rows() says what is wrong with it
        if self._user_lines is None or self._user_lines[0] != version:
            rows = self.rows()
            lines = {
                str(r.get(ID_KEY, f"case-{n}")): r.get(USER_KEY, "") for n, r in enumerate(rows, 1)
            }
            self._user_lines = (version, {k: v for k, v in lines.items() if isinstance(v, str)})
        return self._user_lines[1].get(case_id, "")

    def decide_approval(self, case: CaseSpec, request: ApprovalRequest) -> bool:
        """The registered approver's decision (default: denied)."""
        return False if self._approver is None else bool(self._approver(case, request))

    def agents(self) -> dict[str, ScriptedAgent]:
        """The registered scripted agents."""
        return dict(self._agents)

    def mutants(self) -> tuple[Mutant, ...]:
        """The registered mutants."""
        return tuple(self._mutants)


def domain(
    name: str,
    *,
    system_prompt: str,
    instruction: str,
    output: type[BaseModel] | None,
    cases: Sequence[Mapping[str, Any]] | str | Path,
    state: Callable[[dict[str, Any]], Any] | None = None,
    description: str = "",
    max_turns: int | None = None,
) -> OneFileDomain:
    """A domain defined in the calling file; add its parts with the returned object's
    decorators (``tool``, ``answer_key``, ``check``, ``agent``, ``mutant``, ``approver``,
    ``simulated_user``).
    ``agentic-eval run path/to/file.py`` finds it. See :class:`OneFileDomain` for the
    arguments."""
    return OneFileDomain(
        name,
        system_prompt=system_prompt,
        instruction=instruction,
        output=output,
        cases=cases,
        state=state,
        description=description,
        max_turns=max_turns,
        source=caller_file(2),
    )
