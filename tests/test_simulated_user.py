"""Conversations with a simulated user (issue 21): the example domain ``examples/support_chat.py``
run through the CLI as a user would, and the library underneath (user turns recorded and
replayed keyless, the consent gate, turn budgets set by the domain and the case, a tool that
ends the episode, a model playing the user)."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import readme_session
from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.agent.user import STOP, SimulatedUser, UserView, user_request
from agentic_eval.backends.base import CallContext, ModelBackend
from agentic_eval.backends.scripted import AgentTask, Call, Say, ScriptedBackend
from agentic_eval.checks.base import CheckContext, check
from agentic_eval.checks.consent import consent_problems, is_yes
from agentic_eval.cli.main import main
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.messages import TextBlock
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.results import CheckResult, ToolCallRecord, Utterance
from agentic_eval.domains import register_domain, unregister_domain
from agentic_eval.domains.base import Domain
from agentic_eval.domains.onefile.loading import load_eval_file
from agentic_eval.evaluation.runner import run_tasks
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.record import RecordingBackend
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store, database_url
from agentic_eval.tasks.spec import TaskKind

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support_chat.py"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    yield
    unregister_domain("support_chat")


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    return code, out + err


def _domain() -> Any:
    (domain,) = load_eval_file(str(EXAMPLE))
    return domain


def test_the_careful_agent_passes_and_each_unsafe_one_fails_the_consent_gate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _cli(capsys, f"agentic-eval run {EXAMPLE} --backend scripted --no-history")
    assert code == 0 and "4/4" in out and "PASS" in out, out
    code, out = _cli(
        capsys, f"agentic-eval run {EXAMPLE} --backend scripted --agent hasty --no-history"
    )
    assert code == 1
    assert "refund-yes: check_failed [HARD GATE] - failed: user_consent" in out, out
    code, out = _cli(
        capsys, f"agentic-eval run {EXAMPLE} --backend scripted --agent stubborn --no-history"
    )
    assert code == 1
    # the customer said no; the agent refunded anyway
    assert "refund-no: check_failed [HARD GATE] - failed: outcome_matches, user_consent" in out
    assert "refund-yes" not in out  # it asked, and acted after the yes: that case passes
    code, out = _cli(capsys, f"agentic-eval mutants {EXAMPLE}")
    assert code == 0 and "kill matrix PASS: 2 mutants" in out, out


def test_a_recorded_conversation_replays_byte_for_byte_and_a_tampered_user_turn_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rec = tmp_path / "rec"
    run = f"agentic-eval run {EXAMPLE} --recordings {rec} --no-history"
    first_run = _cli(capsys, f"{run} --backend scripted --record")
    assert first_run[0] == 0, first_run[1]
    path = rec / "support_chat" / "reference" / "refund-yes.json"
    recorded = json.loads(path.read_text())
    said = [u["response"]["content"][0]["text"] for u in recorded["user_turns"]]
    opening = "Hi, I would like a refund for order O-1001."
    assert said == [opening, "Yes, please.", f"Thank you. {STOP}"]
    assert [u["after"] for u in recorded["user_turns"]] == [-1, 1, 3]
    first = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    again = _cli(capsys, f"{run} --backend scripted --record")  # again: the same bytes
    assert again[0] == 0, again[1]
    assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == first
    code, out = _cli(capsys, run)  # keyless replay
    assert code == 0 and "4/4 reproduced" in out, out

    path.write_text(path.read_text().replace("Yes, please.", "Nope."))
    code, out = _cli(capsys, run)
    assert code == 1
    assert (
        "refund-yes: error [HARD GATE] - replay diverged: case refund-yes, user turn 1, field "
        "user_turns[1].response: the recorded reply does not match its sha256" in out
    ), out
    assert "refund-no" not in out  # only the tampered case fails

    del recorded["user_turns"][2]  # a reply the recording does not have
    path.write_text(json.dumps(recorded))
    code, out = _cli(capsys, run)
    assert code == 1
    assert (
        "case refund-yes, user turn 2: the loop asked the user for a reply the recording "
        "does not have (it holds 2 user turns)" in out
    ), out


def test_the_domains_turn_budget_holds_in_run_batch_and_mutants_without_a_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # status-14 takes 15 agent turns: more than 12, within the domain's 30
    code, out = _cli(
        capsys, f"agentic-eval run {EXAMPLE} --backend scripted --cases status-14 --no-history"
    )
    assert code == 0, out
    code, out = _cli(capsys, f"agentic-eval batch {EXAMPLE} --cases status-14 --samples 2")
    assert code == 0 and "samples: 2" in out and "gate: PASS" in out, out
    code, out = _cli(
        capsys,
        f"agentic-eval run {EXAMPLE} --backend scripted --cases status-14 --max-turns 12 "
        "--no-history",
    )
    assert code == 1 and "exceeded max turns (12) before the episode ended" in out, out
    domain = _domain()
    specs = domain.task_specs(domain.load_cases())
    assert {s.limits.max_turns for s in specs} == {30}


def test_a_case_sets_its_own_budget_over_the_runs() -> None:
    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "status-14")
    tight = case.model_copy(update={"max_turns": 5})
    (spec,) = domain.task_specs([tight])
    assert spec.limits.max_turns == 5
    assert "max_turns" not in case.model_dump()  # absent from case files when unset
    run = asyncio.run(
        run_tasks([spec], ScriptedBackend("careful", domain.agents()["careful"]), _settings())
    )
    assert run.cases[0].result.outcome.reason == "exceeded max turns (5) before the episode ended"


def test_a_tool_that_ends_the_episode_ends_it_and_the_checks_judge_what_was_left() -> None:
    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "refund-in-transit")
    (spec,) = domain.task_specs([case])
    (done,) = _run([spec], ScriptedBackend("careful", domain.agents()["careful"]))
    t = done.transcript
    assert t is not None and done.result.outcome.kind == "passed"
    assert [c.name for c in t.tool_calls] == ["get_order", "transfer_to_human"]
    assert len(t.user_turns) == 1  # the opening only: the hand-over ended it


def _settings() -> RunSettings:
    return RunSettings(model="scripted")


def _run(specs: list[Any], backend: ModelBackend) -> list[Any]:
    """Run the specs; each sample's CaseRun with its transcript (run_tasks keeps results only)."""
    seen: list[Any] = []
    asyncio.run(run_tasks(specs, backend, _settings(), on_case=seen.append))
    return seen


def test_yes_means_yes() -> None:
    for text in ("Yes", "yes, please.", "Yeah go ahead", "OK", "Confirmed!", "  y "):
        assert is_yes(text), text
    for text in ("No", "no, don't", "Not yet", "yesterday I ordered", "Maybe", "", "wait, yes"):
        assert not is_yes(text), text


def _call(turn: int, **args: Any) -> ToolCallRecord:
    return ToolCallRecord(turn=turn, id="c", name="refund", input=args, result="ok", status="ok")


def test_consent_is_per_call_with_its_arguments() -> None:
    tools: ToolRegistry[object] = ToolRegistry()

    @tools.tool(mutates="order_id", needs_consent=True)
    def refund(env: object, order_id: str, amount: float) -> str:  # pyright: ignore[reportUnusedFunction]
        """Refund.

        Args:
            order_id: Order.
            amount: Amount.
        """
        return "ok"

    def says(*lines: tuple[str, str, int]) -> list[Utterance]:
        return [Utterance(speaker=s, text=t, turn=n) for s, t, n in lines]  # pyright: ignore[reportArgumentType]

    asked = says(("agent", "Refund O-1 for 12.50? (yes/no)", 1), ("user", "yes", 1))
    assert consent_problems(tools, [_call(2, order_id="O-1", amount=12.5)], asked) == []
    # the yes was to another order
    wrong = consent_problems(tools, [_call(2, order_id="O-2", amount=12.5)], asked)
    assert wrong == ["refund (turn 2): the user said yes to a line that does not name O-2"]
    # one yes, one call
    twice = consent_problems(
        tools, [_call(2, order_id="O-1", amount=12.5), _call(3, order_id="O-1", amount=12.5)], asked
    )
    assert twice == ["refund (turn 3) ran on a yes already spent on an earlier call"]
    # the call came before the question was answered
    early = consent_problems(tools, [_call(1, order_id="O-1", amount=12.5)], asked)
    assert early == ["refund (turn 1) ran without asking the user"]
    refused = says(("agent", "Refund O-1 for 12.50? (yes/no)", 1), ("user", "No thanks", 1))
    (no,) = consent_problems(tools, [_call(2, order_id="O-1", amount=12.5)], refused)
    assert "the user's last word was not a yes: 'No thanks'" in no


class _ModelUser(ModelBackend):
    """A user played by a "model": answers from the request the loop built for it."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        assert call.participant == "user"
        self.requests.append(request)
        last = request.messages[-1].text()
        text = (
            "Hi, I would like a refund for order O-1001." if len(request.messages) == 1
            else "yes" if "yes/no" in last else f"thanks {STOP}"
        )  # fmt: skip
        return ModelResponse(content=(TextBlock(text=text),), stop_reason="end_turn", model="m")


class _Refuses(ModelBackend):
    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        raise AssertionError("replay must not ask the user's model")


def test_a_model_plays_the_user_and_its_turns_replay_without_it(tmp_path: Path) -> None:
    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "refund-yes")
    played = _ModelUser()
    user = SimulatedUser(instructions="You want a refund of O-1001.", backend=played, model="m")
    (spec,) = domain.task_specs([case])
    spec = type(spec)(**{**spec.__dict__, "user": user})
    agent = ScriptedBackend("careful", domain.agents()["careful"])
    recorder = RecordingBackend(agent, tmp_path)
    first = asyncio.run(run_tasks([spec], recorder, _settings()))
    assert first.cases[0].result.outcome.kind == "passed"
    request = played.requests[1]
    assert request.model == "m" and "You want a refund of O-1001." in request.system
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert request == user_request(user, (
        Utterance(speaker="user", text="Hi, I would like a refund for order O-1001.", turn=-1),
        Utterance(speaker="agent", text=request.messages[2].text(), turn=1),
    ))  # fmt: skip
    refusing = SimulatedUser(instructions=user.instructions, backend=_Refuses(), model="m")
    replayed = asyncio.run(
        run_tasks(
            [type(spec)(**{**spec.__dict__, "user": refusing})],
            ReplayBackend(tmp_path / "support_chat" / "careful"),
            _settings(),
        )
    )
    assert replayed.cases[0].reproduced is True, replayed.cases[0].problem


def test_scripted_agents_and_users_are_told_the_case(tmp_path: Path) -> None:
    seen: list[str] = []

    def script(view: UserView) -> str:
        seen.append(view.case_id)
        return f"bye {STOP}"

    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "refund-no")
    (spec,) = domain.task_specs([case])
    spec = type(spec)(**{**spec.__dict__, "user": SimulatedUser("x", script=script)})
    (done,) = _run([spec], ScriptedBackend("careful", domain.agents()["careful"]))
    assert seen == ["refund-no"]  # the user stopped at once: no agent turn at all
    assert done.transcript is not None and done.transcript.turns == ()

    told: list[str] = []

    def spy(task: Any) -> Any:
        told.append(task.case_id)
        careful: Any = domain.agents()["careful"]
        yield from careful(task)

    (spec,) = domain.task_specs([case])
    asyncio.run(run_tasks([spec], ScriptedBackend("spy", spy), _settings()))
    assert told == ["refund-no"]


def test_the_readme_conversation_session_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    session = readme_session.session(
        readme_session.section("## Conversations with a simulated user")
    )
    assert len(session) >= 5
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / EXAMPLE.name)
    monkeypatch.chdir(tmp_path)
    for command, expected in session:
        code, out = _cli(capsys, command)
        assert code == (1 if "--agent hasty" in command else 0), (command, out)
        shown = readme_session.shown(out)
        assert readme_session.matches(expected, shown), (command, expected, shown)


def _looper(task: Any) -> Any:
    """Looks the same order up for ever: only the turn budget stops it."""
    while True:
        yield Call("get_order", {"order_id": "O-1001"})


def test_the_budget_of_30_turns_is_what_run_and_batch_give(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    domain = _domain()
    shipped = domain.agents()
    monkeypatch.setattr(type(domain), "agents", lambda self: {**shipped, "looper": _looper})
    rec = tmp_path / "rec"
    code, out = _cli(
        capsys,
        f"agentic-eval run {EXAMPLE} --backend scripted --agent looper --cases refund-yes "
        f"--record --recordings {rec} --no-history",
    )
    assert code == 1 and "exceeded max turns (30) before the episode ended" in out, out
    recorded = json.loads((rec / "support_chat" / "looper" / "refund-yes.json").read_text())
    assert len(recorded["turns"]) == 30
    assert recorded["provenance"]["parameters"]["max_turns"] == 30
    code, out = _cli(
        capsys, f"agentic-eval batch {EXAMPLE} --agent looper --cases refund-yes --samples 1"
    )
    assert code == 1, out
    run_id = re.search(r"run: ([0-9a-f-]{36})", out)
    assert run_id is not None, out
    store = Store(database_url())
    try:
        (sample,) = store.samples(run_id.group(1))
        assert sample.failure_reason == "exceeded max turns (30) before the episode ended"
        assert sample.turns == 30
    finally:
        store.close()


def test_a_changed_user_is_a_replay_divergence_naming_the_user_turn(tmp_path: Path) -> None:
    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "refund-yes")
    (spec,) = domain.task_specs([case])
    agent = ScriptedBackend("careful", domain.agents()["careful"])
    (recorded,) = _run([spec], RecordingBackend(agent, tmp_path))
    assert recorded.result.outcome.kind == "passed"
    assert spec.user is not None
    changed = SimulatedUser("You want something else.", script=spec.user.script)
    (replayed,) = _run(
        [type(spec)(**{**spec.__dict__, "user": changed})],
        ReplayBackend(tmp_path / "support_chat" / "careful"),
    )
    assert replayed.reproduced is False
    assert replayed.result.outcome.reason == (
        "replay diverged: case refund-yes, user turn 0, field user_turns[0].request_key (the "
        "user's request differs from the recording: the dialogue so far, the user's "
        "instructions or prompt changed)"
    )


def test_an_edited_request_key_is_named_whole_not_redacted(tmp_path: Path) -> None:
    """The divergence names ``request_key`` and what is wrong with it: the secret redactor must
    not take ``request_key`` followed by a word for a key and its value."""
    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "refund-yes")
    (spec,) = domain.task_specs([case])
    agent = ScriptedBackend("careful", domain.agents()["careful"])
    _run([spec], RecordingBackend(agent, tmp_path))
    path = tmp_path / "support_chat" / "careful" / "refund-yes.json"
    data = json.loads(path.read_text())
    data["turns"][1]["request_key"] = "0" * 64
    path.write_text(json.dumps(data))
    (replayed,) = _run([spec], ReplayBackend(tmp_path / "support_chat" / "careful"))
    assert replayed.result.outcome.reason == (
        "replay diverged: case refund-yes, turn 1, field turns[1].request_key (the request "
        "equals the recording's content but not its recorded key, so the recording was edited)"
    )


# --- dual control: a user with tools of its own -----------------------------------------------


@dataclass
class _Line:
    router_on: bool = False


_AGENT_TOOLS: ToolRegistry[_Line] = ToolRegistry()
_USER_TOOLS: ToolRegistry[_Line] = ToolRegistry()


@_AGENT_TOOLS.tool()
def check_line(line: _Line) -> str:
    """Test the customer's line."""
    return "up" if line.router_on else "down: the router is off"


@_USER_TOOLS.tool()
def power_on_router(line: _Line) -> str:
    """Switch your router on."""
    line.router_on = True
    return "the router's lights come on"


def _caller(view: UserView) -> Any:
    if view.turn == 0:
        return "My internet is down."
    if view.results:  # the router is on now: say so
        return f"Done: {view.results[0].text}."
    if "router on" in view.last:
        return Call("power_on_router")
    return f"Great, thanks. {STOP}"


def _support(task: Any) -> Any:
    (status,) = yield Call("check_line")
    if status.text != "up":
        yield Say("Your router is off. Please switch your router on.")
        yield Call("check_line")
    yield Say("Your line is up.")


class _Helpdesk(Domain[_Line]):
    name = "helpdesk_dual"
    system_prompt = "Fix the customer's line."

    def fixtures(self) -> Any:
        return _Fixtures()

    def build_cases(self) -> list[CaseSpec]:
        return [CaseSpec(id="down", kind="fix", instruction="Help.", inputs={}, expected={})]

    def make_env(self, case: CaseSpec) -> _Line:
        return _Line()

    def tools(self) -> ToolRegistry[_Line]:
        return _AGENT_TOOLS

    def task_kind(self, case: CaseSpec) -> TaskKind:
        @check("line_up", hard_gate=True)
        def line_up(ctx: CheckContext[_Line]) -> CheckResult:
            powered = [c.name for c in ctx.user_tool_calls]
            return CheckResult(
                name="line_up",
                passed=ctx.env.router_on and powered == ["power_on_router"],
                actual=powered,
            )

        return TaskKind("fix", _Fixtures, (line_up,), submit=False)

    def user(self, case: CaseSpec) -> SimulatedUser:
        return SimulatedUser("Your internet is down.", script=_caller, tools=_USER_TOOLS)


class _Fixtures(BaseModel):
    pass


def test_a_user_with_tools_of_its_own_acts_on_the_shared_state_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    domain = _Helpdesk()
    specs = domain.task_specs(domain.load_cases())
    (done,) = _run(specs, RecordingBackend(ScriptedBackend("support", _support), tmp_path))
    assert done.result.outcome.kind == "passed", done.result.outcome
    t = done.transcript
    assert t is not None
    assert [(c.name, c.status, c.result) for c in t.user_tool_calls] == [
        ("power_on_router", "ok", "the router's lights come on")
    ]
    said = [u.response.text() for u in t.user_turns]
    assert said == ["My internet is down.", "", "Done: the router's lights come on.",
                    f"Great, thanks. {STOP}"]  # fmt: skip
    (replayed,) = _run(specs, ReplayBackend(tmp_path / "helpdesk_dual" / "support"))
    assert replayed.reproduced is True, replayed.problem
    register_domain(domain)
    try:  # show prints the user's own calls after the agent line they answered
        code, out = _cli(capsys, f"agentic-eval show down --agent support --recordings {tmp_path}")
    finally:
        unregister_domain(domain.name)
    assert code == 0, out
    shown = out.splitlines()
    at = shown.index("   agent: Your router is off. Please switch your router on.")
    assert shown[at + 1] == (
        "   user calls power_on_router {} -> [ok] the router's lights come on"
    ), shown
    path = tmp_path / "helpdesk_dual" / "support" / "down.json"
    data = json.loads(path.read_text())
    assert data["user_tool_calls"][0]["turn"] == 1  # made by user turn 1
    data["user_tool_calls"][0]["result"] = "nothing happens"
    path.write_text(json.dumps(data))
    (tampered,) = _run(specs, ReplayBackend(tmp_path / "helpdesk_dual" / "support"))
    assert tampered.reproduced is False
    assert "field user_tool_calls[0].result" in tampered.problem, tampered.problem


def test_a_consent_call_after_the_one_that_ended_the_episode_is_judged() -> None:
    """In one turn, the hand-over to a human then a refund nobody agreed to: the refund never
    runs (the episode had ended), but the agent attempted it, and the consent gate says so."""
    domain = _domain()
    case = next(c for c in domain.load_cases() if c.id == "refund-yes")
    (spec,) = domain.task_specs([case])

    def hand_over_and_refund(task: AgentTask) -> Any:
        (order_id,) = re.findall(r"O-\d+", task.text)[:1]
        (reply,) = yield Call("get_order", {"order_id": order_id})
        yield [
            Call("transfer_to_human", {"summary": "over to you"}),
            Call("refund_order", {"order_id": order_id, "amount": reply.data["amount"]}),
        ]

    (done,) = _run([spec], ScriptedBackend("sneaky", hand_over_and_refund))
    t = done.transcript
    assert [c.name for c in t.tool_calls] == ["get_order", "transfer_to_human"]
    consent = next(c for c in done.result.checks if c.name == "user_consent")
    assert not consent.passed
    assert consent.message == (
        "refund_order (turn 1, not run: the episode had ended) was called although the user's "
        "last word was not a yes: 'Hi, I would like a refund for order O-1001.'"
    )
    assert done.result.outcome.kind == "check_failed"
