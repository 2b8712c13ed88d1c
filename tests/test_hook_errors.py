"""A domain's own mistakes are named as the domain's, in one line: a hook that raises or returns
the wrong thing (``task_kind``, ``tools``, ``user``), a bad turn budget, a case file with an
invalid field, a user's backend or tool that breaks. Never an internal error, never the agent's
fault, never the exception's type said twice."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agent.tools import DomainFault, ToolRegistry
from agentic_eval.agent.user import SimulatedUser
from agentic_eval.backends.base import CallContext, ModelBackend
from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.cli.main import main
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.domains import unregister_domain
from agentic_eval.domains.onefile.loading import load_eval_file
from agentic_eval.evaluation.runner import run_tasks
from agentic_eval.evaluation.settings import RunSettings

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support_chat.py"


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    yield
    for name in ("support_chat", "bad_chat", "pinger"):
        unregister_domain(name)


def _outcome(domain: Any, agent: str = "careful") -> Any:
    case = next(c for c in domain.load_cases() if c.id == "refund-yes")
    specs = domain.task_specs([case])
    backend = ScriptedBackend(agent, domain.agents()[agent])
    seen: list[Any] = []
    asyncio.run(run_tasks(specs, backend, RunSettings(model="scripted"), on_case=seen.append))
    (run,) = seen
    return run.result.outcome


def _patched(monkeypatch: pytest.MonkeyPatch, hook: str, fn: Any) -> Any:
    (domain,) = load_eval_file(EXAMPLE)
    monkeypatch.setattr(type(domain), hook, fn)
    return domain


class _Broken(ModelBackend):
    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        raise RuntimeError("the user's model is down")


def _raise(*_: Any) -> Any:
    raise RuntimeError("user() exploded")


@pytest.mark.parametrize(
    ("hook", "fn", "reason"),
    [
        ("user", lambda self, case: "hello", "user() returned str: expected SimulatedUser or None"),
        ("user", _raise, "user() raised RuntimeError: user() exploded"),
        (
            "user",
            lambda self, case: SimulatedUser("x"),
            "user() raised ValueError: a SimulatedUser needs exactly one of script= and backend=",
        ),
        (
            "user",
            lambda self, case: SimulatedUser("x", script=lambda v: "hi", tools={"a": 1}),  # type: ignore[arg-type]
            "user() raised ValueError: a SimulatedUser's tools= is a ToolRegistry; got dict",
        ),
        (
            "user",
            lambda self, case: SimulatedUser("x", script="not callable"),  # type: ignore[arg-type]
            "user() raised ValueError: a SimulatedUser's script= is called; got str",
        ),
        ("tools", lambda self: None, "tools() returned NoneType: expected ToolRegistry"),
        ("task_kind", lambda self, case: 42, "task_kind() returned int: expected TaskKind"),
    ],
    ids=["user-str", "user-raises", "no-script", "tools-dict", "script-str", "tools-none", "kind"],
)
def test_a_hook_that_breaks_is_the_domains_error_named_once(
    monkeypatch: pytest.MonkeyPatch, hook: str, fn: Any, reason: str
) -> None:
    outcome = _outcome(_patched(monkeypatch, hook, fn))
    assert outcome.kind == "error"
    assert outcome.reason == f"domain support_chat: {reason}"


def test_a_user_backend_that_raises_is_named_as_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    def user(self: Any, case: Any) -> SimulatedUser:
        return SimulatedUser("x", backend=_Broken(), model="m")

    outcome = _outcome(_patched(monkeypatch, "user", user))
    assert outcome.kind == "error"
    assert outcome.reason == (
        "the user's backend raised RuntimeError, user turn 0: the user's model is down"
    )


def test_a_user_tool_that_raises_is_named_as_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_eval.backends.scripted import Call

    tools: ToolRegistry[Any] = ToolRegistry()

    @tools.tool()
    def poke(env: Any) -> str:  # pyright: ignore[reportUnusedFunction]
        """Poke."""
        raise KeyError("boom")

    def script(view: Any) -> Any:
        return Call("poke", {}) if not view.results else "done ###STOP###"

    def user(self: Any, case: Any) -> SimulatedUser:
        return SimulatedUser("x", script=script, tools=tools)

    outcome = _outcome(_patched(monkeypatch, "user", user))
    assert outcome.kind == "error"
    assert outcome.reason == "the user's tool poke raised KeyError: 'boom'"


def test_a_fault_says_the_exception_type_once() -> None:
    assert (
        DomainFault("tool t raised KeyError", "KeyError: 'x'").reason
        == "tool t raised KeyError: 'x'"
    )
    assert DomainFault("tool t raised KeyError", "KeyError").reason == "tool t raised KeyError"
    assert DomainFault("approver returned a non-decision", "3").reason == (
        "approver returned a non-decision: 3"
    )


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str]:
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    return code, out + err


BAD_BUDGET = f"""
import sys
sys.path.insert(0, {str(EXAMPLE.parent)!r})
from support_chat import SupportChat


class BadChat(SupportChat):
    name = "bad_chat"
    max_turns = {{budget}}


bad = BadChat()
"""


@pytest.mark.parametrize("budget", ["0", "-1", "'abc'", "1000", "2.5", "True"])
@pytest.mark.parametrize(
    "command", ["run {f} --backend scripted --agent careful --no-history", "mutants {f}"]
)
def test_a_bad_domain_budget_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], budget: str, command: str
) -> None:
    path = tmp_path / "bad_chat.py"
    path.write_text(BAD_BUDGET.replace("{budget}", budget), encoding="utf-8")
    code, out = _cli(capsys, f"agentic-eval {command.format(f=path)}")
    assert code == 2, out
    line = "agentic-eval: error: domain bad_chat: max_turns must be a whole number from 1 to 200"
    assert out.strip().splitlines() == [f"{line}, not {eval(budget)!r}"]


@pytest.mark.parametrize("value", ["abc", -1, 0, 2.5, 1000])
def test_a_bad_case_budget_in_a_case_file_names_the_case_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object
) -> None:
    eval_file = tmp_path / "pinger.py"
    eval_file.write_text(
        "from pydantic import BaseModel\nimport agentic_eval\n\n"
        "class Out(BaseModel):\n    n: int\n\n"
        'pinger = agentic_eval.domain("pinger", system_prompt="s", instruction="i", output=Out, '
        'cases=[{"id": "k1"}, {"id": "k2"}])\n',
        encoding="utf-8",
    )
    assert _cli(capsys, f"agentic-eval goldens write {eval_file}")[0] == 0
    case_file = tmp_path / "pinger.cases.json"
    data = json.loads(case_file.read_text())
    data["cases"][1]["max_turns"] = value
    case_file.write_text(json.dumps(data))
    code, out = _cli(capsys, f"agentic-eval list cases {eval_file}")
    assert code == 2, out
    (line,) = out.strip().splitlines()
    assert line.startswith(
        f"agentic-eval: error: pinger: case file {case_file} is invalid: case k2, max_turns: "
    )
