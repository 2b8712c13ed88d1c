"""A conversation in one file: the README's eval file ("A conversation in one file") and its
console session run as written, the unsafe agents its gates must catch, and the one-file
helper's rules for a user (``user`` rows, ``output=None``, ``max_turns``)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import readme_session
from agentic_eval.cli.main import main
from agentic_eval.domains import unregister_domain

SECTION = "### A conversation in one file"


@pytest.fixture(autouse=True)
def _forget_eval_domains() -> Iterator[None]:
    yield
    for name in ("refund_chat", "chat_bad"):
        unregister_domain(name)


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str]:
    argv = shlex.split(command)
    assert argv[0] == "agentic-eval"
    code = main(argv[1:])
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's eval file, written into a folder of its own (the working directory)."""
    name, code = readme_session.python_file(readme_session.section(SECTION))
    assert name == "refund_chat.py"
    (tmp_path / name).write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_one_file_conversation_runs_as_written(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = readme_session.session(readme_session.section(SECTION))
    assert len(session) == 4
    for command, expected in session:
        code, out = _cli(capsys, command)
        assert code == 0, (command, out)
        shown = readme_session.shown(out.replace(f"{folder}/", ""))
        assert readme_session.matches(expected, shown), (command, expected, shown)
    recorded = json.loads(
        (folder / "recordings" / "refund_chat" / "reference" / "wants-it.json").read_text()
    )
    said = [t["response"]["content"][0]["text"] for t in recorded["user_turns"]]
    assert said == [
        "Hi, I would like a refund for order O-1.",
        "Yes, please.",
        "Thank you. ###STOP###",
    ]
    cases = json.loads((folder / "refund_chat.cases.json").read_text())["cases"]
    assert [c["inputs"] for c in cases] == [{}, {}]  # the user's instructions are not inputs
    assert all(c["hard_gate"] for c in cases)  # a tool needs consent: user_consent judges all


def test_the_hasty_mutant_fails_both_cases_on_user_consent(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(capsys, "agentic-eval goldens write refund_chat.py")[0] == 0
    code, out = _cli(
        capsys, "agentic-eval run refund_chat.py --backend scripted --agent hasty --no-history"
    )
    assert code == 1, out
    assert "gate: FAIL: hard gate failed: user_consent in 2" in out


def test_an_agent_that_acts_after_no_fails(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stubborn = """

@chat.agent
def stubborn(task: AgentTask) -> Any:
    yield Say("Shall I refund order O-1, 2500 cents? yes/no")
    yield Call("refund", {"order_id": "O-1", "amount_cents": 2500})
    yield Say("Done.")
"""
    path = folder / "refund_chat.py"
    path.write_text(path.read_text(encoding="utf-8") + stubborn, encoding="utf-8")
    assert _cli(capsys, "agentic-eval goldens write refund_chat.py")[0] == 0
    code, out = _cli(
        capsys, "agentic-eval run refund_chat.py --backend scripted --agent stubborn --no-history"
    )
    assert code == 1, out
    assert (
        "changes-mind: check_failed [HARD GATE] - failed: refunded_only_on_yes, user_consent" in out
    )
    assert "wants-it: check_failed" not in out  # it asked, and the user said yes


def _eval_file(folder: Path, body: str) -> Path:
    path = folder / "chat_bad.py"
    head = "from typing import Any\nimport agentic_eval\nfrom agentic_eval import CheckContext\n\n"
    path.write_text(head + body, encoding="utf-8")
    return path


def _domain_text(output: str = "None", extra: str = "", rows: str = '[{"user": "hi"}]') -> str:
    return (
        f'chat = agentic_eval.domain("chat_bad", system_prompt="s", instruction="i", '
        f"output={output}, cases={rows}{extra})\n"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            _domain_text()
            + "@chat.check(needs_output=True)\ndef c(ctx: CheckContext[Any]) -> bool:\n"
            "    return True\n",
            "has output=None: nothing is submitted, so a check with needs_output=True would "
            "never run",
        ),
        (
            _domain_text(extra=", max_turns=0"),
            "max_turns must be a whole number from 1 to 200, not 0",
        ),
        (_domain_text(extra=", max_turns=True"), "from 1 to 200, not True"),
        (_domain_text(extra=", max_turns='5'"), "from 1 to 200, not '5'"),
        (_domain_text(extra=", max_turns=201"), "from 1 to 200, not 201"),
        (_domain_text(extra=", max_turns=2.5"), "from 1 to 200, not 2.5"),
    ],
    ids=["needs-output-without-output", "max-turns-0", "max-turns-bool", "str", "201", "float"],
)
def test_a_bad_conversation_file_is_one_line_and_exit_2(
    folder: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    path = _eval_file(folder, body)
    code, out = _cli(capsys, f"agentic-eval list cases {path}")
    assert code == 2, out
    assert message in out and "Traceback" not in out
    assert len(out.strip().splitlines()) == 1, out


def test_a_user_row_that_is_not_text_is_refused(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _eval_file(folder, _domain_text(rows='[{"id": "c1", "user": {"wants": "x"}}]'))
    code, out = _cli(capsys, f"agentic-eval goldens write {path}")
    assert code == 2, out  # a broken input: nothing could be built
    assert "case c1: 'user' holds the user's instructions as text, not dict" in out


def test_checks_of_a_domain_without_output_judge_every_episode(folder: Path) -> None:
    from agentic_eval.domains.onefile.loading import load_eval_file

    body = _domain_text() + (
        "@chat.check\ndef judged(ctx: CheckContext[Any]) -> bool:\n    return False\n"
    )
    (domain,) = load_eval_file(_eval_file(folder, body))
    case = domain.build_cases()[0]
    kind: Any = domain.task_kind(case)
    assert not kind.submit
    assert [c.name for c in kind.checks] == ["judged"]
    assert not kind.checks[0].needs_output  # runs although nothing is ever submitted
    assert domain.user(case) is None  # no simulated user registered: no conversation


TALKER = """
from typing import Any
import agentic_eval
from agentic_eval import AgentTask, CheckContext, Say, UserView

chat = agentic_eval.domain(
    "chat_bad", system_prompt="s", instruction="i", output=None, cases=[{"id": "c1"}],
    max_turns=3,
)


@chat.check
def fine(ctx: CheckContext[Any]) -> bool:
    return True


@chat.simulated_user
def talker(view: UserView) -> str:
    return "Tell me more."


@chat.agent
def reference(task: AgentTask) -> Any:
    while True:
        yield Say("What else?")


@chat.agent
def quiet(task: AgentTask) -> Any:
    yield Say("Hello.")
"""


@pytest.mark.parametrize(
    ("agent", "reason"),
    [
        (
            "reference",
            "exceeded max turns (3) before the episode ended (the user had not said ###STOP###)",
        ),
        ("quiet", "scripted agent stopped before the episode ended (its generator returned)"),
    ],
)
def test_an_episode_that_does_not_end_says_why(
    folder: Path, capsys: pytest.CaptureFixture[str], agent: str, reason: str
) -> None:
    (folder / "chat_bad.py").write_text(TALKER, encoding="utf-8")
    assert _cli(capsys, "agentic-eval goldens write chat_bad.py")[0] == 0
    code, out = _cli(
        capsys, f"agentic-eval run chat_bad.py --backend scripted --agent {agent} --no-history"
    )
    assert code == 1, out
    assert f"c1: error - {reason}" in out, out


SILENT = """
from typing import Any
import agentic_eval
from agentic_eval import STOP, AgentTask, CheckContext, Say, UserView

chat = agentic_eval.domain(
    "chat_bad", system_prompt="s", instruction="i", output=None, cases=[{"id": "c1"}],
)
seen: list[int] = []


@chat.check
def fine(ctx: CheckContext[Any]) -> bool:
    return [u.text for u in ctx.dialogue if u.speaker == "user"] == ["hi", "", f"bye {STOP}"]


@chat.simulated_user
def shy(view: UserView) -> str:
    seen.append(view.turn)
    return ["hi", "", f"bye {STOP}"][view.turn]


@chat.agent
def reference(task: AgentTask) -> Any:
    while True:
        yield Say("Anything else?")
"""


def test_an_empty_user_line_counts_as_a_turn_for_the_user_and_the_checks(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "chat_bad.py").write_text(SILENT, encoding="utf-8")
    assert _cli(capsys, "agentic-eval goldens write chat_bad.py")[0] == 0
    code, out = _cli(
        capsys, "agentic-eval run chat_bad.py --backend scripted --agent reference --no-history"
    )
    assert code == 0, out


ENDS = """
from typing import Any
import agentic_eval
from agentic_eval import AgentTask, Call, CheckContext, UserView

chat = agentic_eval.domain(
    "chat_bad", system_prompt="s", instruction="i", output=None, cases=[{"id": "c1"}],
)


@chat.tool(ends_episode=True)
def transfer() -> str:
    '''Hand the customer to a human.'''
    return "transferred"


@chat.tool
def note(text: str) -> str:
    '''Write a note.

    Args:
        text: The note.
    '''
    return "noted"


@chat.check
def fine(ctx: CheckContext[Any]) -> bool:
    return [c.name for c in ctx.trace.tool_calls] == ["transfer"]


@chat.simulated_user
def customer(view: UserView) -> str:
    return "Help me."


@chat.agent
def reference(task: AgentTask) -> Any:
    yield [Call("transfer", {}), Call("note", {"text": "after"})]
"""


def test_show_marks_a_call_that_never_ran(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "chat_bad.py").write_text(ENDS, encoding="utf-8")
    assert _cli(capsys, "agentic-eval goldens write chat_bad.py")[0] == 0
    command = "agentic-eval run chat_bad.py --backend scripted --agent reference --record"
    code, out = _cli(capsys, command)
    assert code == 0, out
    code, out = _cli(capsys, "agentic-eval show c1 --domain chat_bad.py")
    assert code == 0, out
    assert "   call transfer {}" in out.splitlines()
    assert '   call note {"text":"after"} (not run: the episode had ended)' in out.splitlines()


def test_a_replay_whose_recording_holds_none_of_the_cases_is_one_line(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(capsys, "agentic-eval goldens write refund_chat.py")[0] == 0
    command = "agentic-eval run refund_chat.py --backend scripted --agent reference --record"
    assert _cli(capsys, command)[0] == 0
    path = folder / "refund_chat.py"
    path.write_text(path.read_text().replace('"id": "', '"id": "new-'), encoding="utf-8")
    assert _cli(capsys, "agentic-eval goldens write refund_chat.py")[0] == 0
    code, out = _cli(capsys, "agentic-eval run refund_chat.py")
    assert code == 1, out
    assert "records none of the cases asked for (it records: changes-mind, wants-it)" in out
    assert "internal error" not in out
