"""A domain's own mistakes are named as the domain's, in one line: a hook that raises or returns
the wrong thing (``task_kind``, ``tools``, ``user``), a bad turn budget, a case file with an
invalid field, a user's backend or tool that breaks. Never an internal error, never the agent's
fault, never the exception's type said twice."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
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


@pytest.mark.parametrize("value", ["abc", -1, 0, 2.5, 1000, True, False, "3"])
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


BROKEN_HOOK = f"""
import sys
sys.path.insert(0, {str(EXAMPLE.parent)!r})
from support_chat import SupportChat


class BrokenChat(SupportChat):
    name = "bad_chat"

    def {{hook}}(self, *args):
        raise ValueError("the {{hook}} of this domain is broken")


bad = BrokenChat()
"""


@pytest.mark.parametrize(
    ("hook", "commands"),
    [
        ("agents", ["list agents", "mutants", "batch --backend scripted --agent careful"]),
        ("mutants", ["list agents", "mutants"]),
        ("roster", ["list agents"]),
        ("fixtures", ["list cases", "mutants", "run --backend scripted --agent careful"]),
        ("build_cases", ["list cases", "batch --backend scripted --agent careful"]),
    ],
)
def test_a_hook_that_raises_outside_a_task_is_the_domains_error_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hook: str, commands: list[str]
) -> None:
    """Not an internal error (exit 70, "please report it"): the file, line and function of the
    domain's code that raised, exit 2, in every command that calls the hook."""
    path = tmp_path / "bad_chat.py"
    path.write_text(BROKEN_HOOK.replace("{hook}", hook), encoding="utf-8")
    line = next(
        n for n, text in enumerate(path.read_text().splitlines(), 1) if "raise ValueError" in text
    )
    for command in commands:
        history = "" if command.split()[0] in ("list", "mutants") else " --no-history"
        code, out = _cli(capsys, f"agentic-eval {command} {path}{history}")
        assert code == 2, (command, out)
        assert out.strip().splitlines()[-1] == (
            f"agentic-eval: error: domain bad_chat: ValueError: the {hook} of this domain is "
            f"broken (raised in {hook}(), {path}:{line})"
        ), command


def test_code_of_ours_that_raises_is_still_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A built-in domain is ours: its fault is a bug to report (exit 70), whoever loaded."""
    from agentic_eval.domains import get_domain

    domain = get_domain("retail_ops")

    def agents(self: Any) -> Any:
        raise ValueError("a bug of ours")

    monkeypatch.setattr(type(domain), "agents", agents)
    code, out = _cli(
        capsys, "agentic-eval run retail_ops --backend scripted --agent reference --no-history"
    )
    assert code == 70, out
    assert "internal error: ValueError: a bug of ours" in out


def test_a_plugin_packages_fault_names_its_module(tmp_path: Path) -> None:
    """The whole top-level package of a plugin's domain is its code, not only the module that
    defines the class."""
    from agentic_eval.domains import register_domain
    from agentic_eval.domains.blame import domain_fault

    pkg = tmp_path / "acme_evals"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXAMPLE.parent)!r})\n"
        "from support_chat import SupportChat\nfrom acme_evals.helpers import load\n\n"
        "class Acme(SupportChat):\n    name = 'acme'\n\n"
        "    def fixtures(self):\n        return load()\n\nDOMAIN = Acme()\n",
        encoding="utf-8",
    )
    (pkg / "helpers.py").write_text(
        "def load():\n    raise OSError('acme data missing')\n", encoding="utf-8"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import acme_evals  # pyright: ignore[reportMissingImports]

        register_domain(acme_evals.DOMAIN)  # pyright: ignore[reportUnknownMemberType]
        try:
            acme_evals.DOMAIN.fixtures()  # pyright: ignore[reportUnknownMemberType]
        except OSError as exc:
            fault = domain_fault(exc)
        else:  # pragma: no cover
            raise AssertionError("fixtures() did not raise")
        helpers = pkg / "helpers.py"  # outside the working folder: said whole
        assert fault == (f"domain acme: OSError: acme data missing (raised in load(), {helpers}:2)")
        try:
            raise ValueError("not the domain's")
        except ValueError as exc:
            assert domain_fault(exc) is None
    finally:
        sys.path.remove(str(tmp_path))
        unregister_domain("acme")
        for name in [m for m in sys.modules if m.partition(".")[0] == "acme_evals"]:
            del sys.modules[name]


class _Nasty(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def test_an_exception_whose_str_raises_is_named_by_its_type() -> None:
    from agentic_eval.core.text import exception_message, exception_text

    assert exception_text(_Nasty()) == "_Nasty: <its str() raised RuntimeError>"
    assert exception_message(_Nasty()) == "<its str() raised RuntimeError>"
    assert exception_text(KeyError("a\n b")) == "KeyError: 'a\\n b'"
    assert exception_text(ValueError()) == "ValueError"


HOSTILE_STR = f"""
import sys
sys.path.insert(0, {str(EXAMPLE.parent)!r})
import support_chat
from support_chat import SupportChat


class Nasty(Exception):
    def __str__(self):
        raise RuntimeError("no str for you")


def _boom(*args):
    raise Nasty()


class BrokenChat(SupportChat):
    name = "bad_chat"
{{patch}}

bad = BrokenChat()
"""


@pytest.mark.parametrize(
    ("patch", "command", "code", "says"),
    [
        (
            "    agents = _boom",
            "list agents {f}",
            2,
            "agentic-eval: error: domain bad_chat: Nasty: <its str() raised RuntimeError> "
            "(raised in _boom(), {f}:14)",
        ),
        (
            "    make_env = _boom",
            "run {f} --backend scripted --agent careful --no-history",
            1,  # every case ends as error, named; the run itself finishes and is judged
            "refund-yes: error - make_env raised Nasty: <its str() raised RuntimeError>",
        ),
        (
            "    def tools(self):\n"
            "        from agentic_eval import ToolRegistry\n"
            "        registry = ToolRegistry()\n"
            "        @registry.tool()\n"
            "        def get_order(shop, order_id: str) -> str:\n"
            '            """Look an order up.\n\n'
            "            Args:\n"
            "                order_id: The order.\n"
            '            """\n'
            "            raise Nasty()\n"
            "        return registry",
            "run {f} --backend scripted --agent careful --no-history",
            1,
            "status-14: error - tool get_order raised Nasty: <its str() raised RuntimeError>",
        ),
    ],
    ids=["hook", "make_env", "tool"],
)
def test_a_domain_exception_whose_str_raises_crashes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    patch: str,
    command: str,
    code: int,
    says: str,
) -> None:
    path = tmp_path / "bad_chat.py"
    path.write_text(HOSTILE_STR.replace("{patch}", patch), encoding="utf-8")
    got, out = _cli(capsys, f"agentic-eval {command.format(f=path)}")
    assert got == code, out
    assert "Traceback" not in out and "internal error" not in out
    assert says.format(f=path) in out, out
