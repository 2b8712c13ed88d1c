"""Tools: plain functions of (environment, arguments), with a JSON schema taken from the signature.

A tool is deterministic: it reads and changes only the case's environment. Its description and
argument descriptions come from its Google-style docstring.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.defaults import SUBMIT_TOOL as SUBMIT_TOOL
from agentic_eval.core.model import ToolSpec

Env = TypeVar("Env")
F = TypeVar("F", bound=Callable[..., Any])


class ToolError(Exception):
    """An expected failure a tool reports to the agent (unknown id, bad state...)."""


class ToolArgumentError(ToolError):
    """A tool refusing its arguments before doing anything (an empty reason, a non-positive
    amount): shown to the agent as ``invalid arguments: ...``, like a schema failure, and, like
    one, never counted as an action (it reached nothing)."""


class DomainFault(Exception):
    """The suite's own code broke (a tool raising something other than :class:`ToolError`, an
    approval rule raising, a result that is not JSON): the case ends as ``error`` naming that
    code, and the agent is never blamed for it."""

    def __init__(self, where: str, error: str) -> None:
        super().__init__(f"{where}: {error}")
        self.where = where
        self.error = error

    @property
    def reason(self) -> str:
        """``where: error`` on one line, without saying the exception's type twice ("tool t
        raised KeyError: 'x'", not "tool t raised KeyError: KeyError: 'x'")."""
        kind, sep, message = self.error.partition(": ")
        if self.where.endswith(f" {kind}") and " " not in kind:
            return f"{self.where}: {message}" if sep else self.where
        return f"{self.where}: {self.error}"


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line (never raises, whatever the exception's ``__str__`` does)."""
    from agentic_eval.core.text import exception_text

    return exception_text(exc)


@dataclass(frozen=True)
class ApprovalRequirement:
    """Why a particular call needs a human's approval before it may execute.

    ``rules`` names the policy rules that apply (ids the agent must cite when it asks for
    approval), ``figures`` the numbers policy computed that the approver must be told (amounts
    in cents...) and ``facts`` other numbers policy knows (a limit, a threshold) that a request
    may cite: an approval request whose claims contradict them, leave a figure out, or cite a
    number policy does not know fails the ``approval_claims_match_policy`` gate.
    """

    action: str
    target: str
    reason: str
    rules: tuple[str, ...] = ()
    figures: Mapping[str, int] = field(default_factory=lambda: {})
    facts: Mapping[str, int] = field(default_factory=lambda: {})


ApprovalPredicate = Callable[[Any, dict[str, Any]], ApprovalRequirement | None]
"""Given (environment, validated arguments), the requirement, or None when no approval is needed."""


_ARG_LINE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?:\s*(.*)$")
_SECTIONS = {"Args:", "Returns:", "Raises:", "Yields:", "Example:", "Examples:", "Note:"}


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {argument: description})."""
    desc: list[str] = []
    args: dict[str, str] = {}
    section = ""
    current = ""
    arg_indent = -1
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        if stripped in _SECTIONS:
            section, current, arg_indent = stripped, "", -1
            continue
        if section == "":
            if stripped:
                desc.append(stripped)
            continue
        if section != "Args:" or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        m = _ARG_LINE.match(stripped)
        if m and (arg_indent < 0 or indent <= arg_indent):
            arg_indent = indent
            current = m.group(1)
            args[current] = m.group(2).strip()
        elif current:
            args[current] = f"{args[current]} {stripped}".strip()
    return " ".join(desc), args


@dataclass(frozen=True)
class Tool(Generic[Env]):
    """A registered tool."""

    name: str
    description: str
    fn: Callable[..., Any]
    arguments: type[BaseModel]
    spec: ToolSpec
    """The tool as the model sees it (computed once: schema generation is costly)."""
    requires_approval: ApprovalPredicate | None = None
    mutates: str | None = None
    """The argument naming what a state-changing tool acts on (None: the tool only reads).
    Idempotency and scope gates use it."""
    consequential: tuple[str, ...] = ()
    """The arguments an approval binds besides the target (an IBAN, an amount): a call with
    other values than the approved ones is an unapproved call."""
    bound_model: type[BaseModel] | None = None
    """The arguments model of ``consequential`` alone (the same field types and normalisers as
    the tool's), used to read the arguments an approval request names."""
    ends_episode: bool = False
    """A call that runs (status ok) ends the episode there (tau-bench's transfer to a human):
    the rest of the turn's calls do not run, and the checks judge what was left."""
    needs_consent: bool = False
    """A call must follow the user's explicit yes to the agent's line naming that call's
    arguments (tau-bench's confirmation rule): the ``user_consent`` hard gate judges it."""

    def target_of(self, args: dict[str, Any]) -> str | None:
        """What a call of this (mutating) tool acts on."""
        if self.mutates is None:
            return None
        value = args.get(self.mutates)
        return None if value is None else str(value)

    @property
    def target_argument(self) -> str | None:
        """The argument naming what the tool acts on: ``mutates``, else its first argument."""
        if self.mutates is not None:
            return self.mutates
        return next(iter(self.arguments.model_fields), None)

    def bind(self, given: dict[str, Any]) -> dict[str, Any] | str:
        """The consequential arguments an approval request names, validated and canonical
        (JSON values), or what is wrong with them."""
        if self.bound_model is None:
            if given:
                return (
                    f"an approval of {self.name} covers no arguments besides the target; "
                    f"give arguments {{}}, not {sorted(given)}"
                )
            return {}
        missing = [k for k in self.consequential if k not in given]
        extra = sorted(set(given) - set(self.consequential))
        if missing or extra:
            return (
                f"an approval of {self.name} covers exactly the arguments "
                f"{', '.join(self.consequential)}: give each of them in 'arguments'"
                + (f" (missing {', '.join(missing)})" if missing else "")
                + (f" (not {', '.join(extra)})" if extra else "")
            )
        try:
            model = self.bound_model.model_validate(given)
        except ValidationError as exc:
            return f"arguments.{first_validation_error(exc)}"
        return model.model_dump(mode="json")

    def bound_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """The consequential arguments of a validated call, canonical (what a grant must match)."""
        if self.bound_model is None:
            return {}
        picked = {k: args[k] for k in self.consequential}
        return self.bound_model.model_validate(picked).model_dump(mode="json")

    def described_call(self, target: str, bound: dict[str, Any]) -> dict[str, Any]:
        """The arguments of the call an approval request describes (target and bound ones),
        as the tool's approval rule reads them."""
        name = self.target_argument
        return {**bound, **({name: target} if name is not None else {})}

    def validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Validate raw arguments.

        Raises:
            pydantic.ValidationError: When they do not fit the signature.
        """
        # The model's validator called directly, and its instance dict copied: ``dict(model)``
        # first probes the model for ``keys``, a failed attribute look-up that costs more than
        # the validation (arguments models forbid extra fields, so the dict holds them all).
        return self.arguments.__pydantic_validator__.validate_python(raw).__dict__.copy()

    def invoke(self, env: Env, args: dict[str, Any]) -> str:
        """Run the tool on validated arguments; return its result as text (canonical JSON).

        Raises:
            ToolError: The tool's expected failure, for the agent to see.
            DomainFault: The tool raised one itself (its own words kept), raised anything else,
                or returned a value that is not JSON.
        """
        try:
            value = self.fn(env, **args)
        except (ToolError, DomainFault):  # a fault the tool names itself keeps its words
            raise
        except Exception as exc:
            where = f"tool {self.name} raised {type(exc).__name__}"
            raise DomainFault(where, describe_exception(exc)) from exc
        if isinstance(value, str):
            if not value.isascii():  # a lone surrogate (say, from a surrogateescape decode)
                try:  # can be neither shown to a model nor written to a transcript
                    value.encode("utf-8")
                except UnicodeEncodeError as exc:
                    where = f"tool {self.name} returned text that is not valid Unicode"
                    raise DomainFault(where, describe_exception(exc)) from exc
            return value
        try:
            return canonical_json(value)
        except (TypeError, ValueError) as exc:
            where = f"tool {self.name} returned a value that is not JSON-serialisable"
            raise DomainFault(where, describe_exception(exc)) from exc

    def approval_needed(self, env: Env, args: dict[str, Any]) -> ApprovalRequirement | None:
        """The tool's approval rule applied to validated arguments.

        Raises:
            DomainFault: When the rule raises or returns something other than a requirement.
        """
        if self.requires_approval is None:
            return None
        try:
            found = self.requires_approval(env, args)
        except Exception as exc:
            where = f"approval rule of {self.name} raised {type(exc).__name__}"
            raise DomainFault(where, describe_exception(exc)) from exc
        if found is not None and not isinstance(found, ApprovalRequirement):  # pyright: ignore[reportUnnecessaryIsInstance]
            where = f"approval rule of {self.name} returned {type(found).__name__}"
            raise DomainFault(where, "expected an ApprovalRequirement or None")
        return found


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    requires_approval: ApprovalPredicate | None = None,
    mutates: str | None = None,
    consequential: tuple[str, ...] = (),
    ends_episode: bool = False,
    needs_consent: bool = False,
) -> Tool[Any]:
    """Build a :class:`Tool` from a function whose first parameter is the environment.

    Args:
        fn: ``fn(env, arg1: T1, ...)`` with annotations and a Google-style docstring.
        name: Tool name (default: the function name).
        requires_approval: Predicate saying when a call must be approved first.
        mutates: For a tool that changes state, the argument naming its target.
        consequential: The arguments an approval binds besides the target (the tool's
            description tells the model which they are).
        ends_episode: A call that runs ends the episode (a transfer to a human).
        needs_consent: A call needs the user's explicit yes in the conversation first.

    Returns:
        The tool.
    """
    description, arg_docs = _parse_docstring(fn.__doc__ or "")
    hints = get_type_hints(fn, include_extras=True)  # keep Annotated normalisers (Iban)
    params = list(inspect.signature(fn).parameters.values())[1:]
    fields: dict[str, Any] = {}
    for p in params:
        if p.annotation is inspect.Parameter.empty:
            raise TypeError(f"tool {fn.__name__}: argument {p.name!r} needs a type annotation")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (
            hints[p.name],
            FieldInfo(default=default, description=arg_docs.get(p.name)),
        )
    names = {p.name for p in params}
    if mutates is not None and mutates not in names:
        raise TypeError(f"tool {fn.__name__}: mutates={mutates!r} names no argument")
    unknown = [c for c in consequential if c not in names or c == mutates]
    if unknown:
        raise TypeError(f"tool {fn.__name__}: consequential={unknown!r} names no other argument")
    tool_name = name or fn.__name__
    model: type[BaseModel] = create_model(  # pyright: ignore[reportCallIssue, reportUnknownVariableType]
        f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    bound: type[BaseModel] | None = None
    if consequential:
        bound = create_model(  # pyright: ignore[reportCallIssue, reportUnknownVariableType]
            f"{tool_name}_approval",
            __config__=ConfigDict(extra="forbid"),
            **{c: fields[c] for c in consequential},
        )
    schema = model.model_json_schema()  # pyright: ignore[reportUnknownMemberType]
    schema.pop("title", None)
    text = description or tool_name
    if consequential:
        text += f" An approval covers one call with the same {', '.join(consequential)}."
    return Tool(
        name=tool_name,
        description=text,
        fn=fn,
        arguments=model,  # pyright: ignore[reportUnknownArgumentType]
        spec=ToolSpec(name=tool_name, description=text, input_schema=schema),
        requires_approval=requires_approval,
        mutates=mutates,
        consequential=tuple(consequential),
        bound_model=bound,  # pyright: ignore[reportUnknownArgumentType]
        ends_episode=ends_episode,
        needs_consent=needs_consent,
    )


class ToolRegistry(Generic[Env]):
    """An ordered set of tools; register with the :meth:`tool` decorator."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool[Env]] = {}
        self._specs: tuple[ToolSpec, ...] | None = None
        self._rules: bool | None = None

    def tool(
        self,
        *,
        name: str | None = None,
        requires_approval: ApprovalPredicate | None = None,
        mutates: str | None = None,
        consequential: tuple[str, ...] = (),
        ends_episode: bool = False,
        needs_consent: bool = False,
    ) -> Callable[[F], F]:
        """Decorator registering a function as a tool (the function is returned unchanged).

        Args:
            name: Tool name (default: the function name).
            requires_approval: When a call must be approved first.
            mutates: For a state-changing tool, the argument naming what it acts on.
            consequential: The arguments an approval binds besides the target.
            ends_episode: A call that runs ends the episode (a transfer to a human).
            needs_consent: A call needs the user's explicit yes in the conversation first.
        """

        def register(fn: F) -> F:
            tool = make_tool(
                fn,
                name=name,
                requires_approval=requires_approval,
                mutates=mutates,
                consequential=consequential,
                ends_episode=ends_episode,
                needs_consent=needs_consent,
            )
            self.add(tool)
            return fn

        return register

    def add(self, tool: Tool[Any]) -> None:
        """Register a tool.

        Raises:
            ValueError: When the name is taken or reserved.
        """
        if tool.name in self._tools or tool.name in RESERVED_TOOL_NAMES:
            raise ValueError(f"tool name {tool.name!r} is already registered or reserved")
        self._tools[tool.name] = tool
        self._specs = self._rules = None

    def get(self, name: str) -> Tool[Env] | None:
        """The tool called ``name``, if any."""
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool[Env]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools as the model sees them, in registration order (one tuple until the next
        registration: every case of a suite offers the same object)."""
        if self._specs is None:
            self._specs = tuple(t.spec for t in self._tools.values())
        return self._specs

    def has_approval_rules(self) -> bool:
        """Whether any tool can require approval."""
        if self._rules is None:
            self._rules = any(t.requires_approval is not None for t in self._tools.values())
        return self._rules


REQUEST_APPROVAL_TOOL = "request_approval"
RESERVED_TOOL_NAMES = frozenset({SUBMIT_TOOL, REQUEST_APPROVAL_TOOL})


def all_validation_errors(exc: ValidationError) -> str:
    """Every invalid field of a validation error, one ``field: message`` per line."""
    return "\n".join(
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
    )


def first_validation_error(exc: ValidationError) -> str:
    """One line naming the first invalid field of a validation error."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "<root>"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {err['msg']}{more}"
