"""One-file evals: the README's example file and commands, run as written, and the error paths.

The first test copies the eval file and the console session out of README.md ("Start with one
file"), runs each command through the CLI in the file's folder and compares what it prints
with what the README shows (``...`` stands for lines left out).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

import readme_session
from agentic_eval.cli.main import main
from agentic_eval.domains import get_domain, unregister_domain


@pytest.fixture(autouse=True)
def _forget_eval_domains() -> Iterator[None]:
    """Each test imports its own copy of a file: the domains it registered go with the test."""
    yield
    for name in ("refunds", "refunds_jsonl", "refunds_state"):
        unregister_domain(name)


def _example() -> tuple[str, str, list[tuple[str, list[str]]]]:
    """(file name, file text, [(command, expected output lines)]) from the README."""
    section = readme_session.section("### Start with one file")
    name, code = readme_session.python_file(section)
    return name, code, readme_session.session(section)


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str, str]:
    argv = shlex.split(command)
    assert argv[0] == "agentic-eval"
    code = main(argv[1:])
    out, err = capsys.readouterr()
    return code, out, err


def test_readme_one_file_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name, code, session = _example()
    assert name.endswith(".py") and len(session) >= 4
    folder = tmp_path / "evals_here"
    folder.mkdir()
    (folder / name).write_text(code, encoding="utf-8")
    monkeypatch.chdir(folder)
    for command, expected in session:
        status, out, err = _cli(capsys, command)
        assert status == 0, (command, out, err)
        shown = readme_session.shown(out.replace(f"{folder}/", ""))
        assert readme_session.matches(expected, shown), (command, expected, shown)
    # The files live beside the eval file, as the README says.
    assert (folder / "refunds.cases.json").is_file()
    recorded = sorted(p.name for p in (folder / "recordings" / "refunds" / "reference").iterdir())
    assert recorded == ["O-1.json", "O-2.json", "O-3.json", "scorecard.json"]


def test_recordings_stay_beside_the_file_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name, code, _ = _example()
    folder = tmp_path / "suite"
    folder.mkdir()
    path = folder / name
    path.write_text(code, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert _cli(capsys, f"agentic-eval goldens write {path}")[0] == 0
    status, out, _ = _cli(capsys, f"agentic-eval run {path} --backend scripted --record --json")
    assert status == 0
    (run,) = json.loads(out)["runs"]
    assert run["scorecard"]["totals"]["passed"] == 3
    assert (folder / "recordings" / "refunds" / "reference" / "scorecard.json").is_file()
    assert not (elsewhere / "recordings").exists() and not (elsewhere / "evals").exists()
    # --recordings still wins.
    other = tmp_path / "other"
    status, _, _ = _cli(
        capsys, f"agentic-eval run {path} --backend scripted --record --recordings {other}"
    )
    assert status == 0 and (other / "refunds" / "reference" / "O-1.json").is_file()
    status, out, _ = _cli(capsys, f"agentic-eval list recordings {path}")
    assert status == 0 and "refunds\treference\t3 transcripts" in out


def test_a_domain_instance_in_an_eval_file_records_beside_it_and_is_named_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = Path(__file__).resolve().parent.parent / "examples"
    folder = tmp_path / "suite"
    folder.mkdir()
    path = folder / "chat_eval.py"
    path.write_text(
        f"import sys\nsys.path.insert(0, {str(example)!r})\n"
        "from support_chat import SupportChat\n\nchat = SupportChat()\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    try:
        status, _, err = _cli(capsys, "agentic-eval run suite/chat_eval.py")
        assert status == 2  # nothing recorded: nothing judged
        assert err.strip().splitlines()[0] == (
            f"agentic-eval: error: support_chat: nothing recorded under {folder}/recordings to "
            "replay; record it with `agentic-eval run suite/chat_eval.py --backend scripted "
            "--record`"
        )
        status, _, _ = _cli(
            capsys,
            "agentic-eval run suite/chat_eval.py --backend scripted --agent careful --record",
        )
        assert status == 0
        assert (folder / "recordings" / "support_chat" / "careful" / "refund-yes.json").is_file()
        assert not (tmp_path / "evals").exists()
        monkeypatch.chdir(folder)
        assert _cli(capsys, f"agentic-eval run {path}")[0] == 0  # replays from anywhere
    finally:
        unregister_domain("support_chat")


def test_goldens_check_catches_a_changed_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, code, _ = _example()
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    assert _cli(capsys, f"agentic-eval goldens write {path}")[0] == 0
    assert '"paid_cents": 4500' in code
    path.write_text(code.replace('"paid_cents": 4500', '"paid_cents": 45000'), encoding="utf-8")
    status, _, err = _cli(capsys, f"agentic-eval goldens check {path}")
    assert status == 1
    assert "refunds: case O-1 field expected.refund_cents: committed 4500, computed 45000" in err


def test_missing_case_file_says_how_to_write_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, code, _ = _example()
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    status, _, err = _cli(capsys, f"agentic-eval run {path} --backend scripted")
    assert status == 2  # a broken input: nothing ran
    assert err.strip() == (
        f"agentic-eval: error: refunds: case file {tmp_path}/refunds.cases.json is missing; "
        f"run `agentic-eval goldens write {path}`"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no_such_eval.py: no such eval file"),
        ("x = 1\ndef broken(:\n", "bad_eval.py:2: syntax error: "),
        ("import json\n\nVALUE = json.dumps({})\n", "bad_eval.py: defines no domain"),
        (
            "x = 1\nraise RuntimeError('no fixtures here')\n",
            "bad_eval.py:2: importing the eval file raised RuntimeError: no fixtures here",
        ),
    ],
    ids=["missing", "syntax", "no-domain", "raises"],
)
@pytest.mark.parametrize(
    "command", ["run {}", "list cases {}", "list domains {}", "goldens check {}"]
)
def test_a_bad_eval_file_is_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str | None,
    message: str,
    command: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    target = "no_such_eval.py" if text is None else "bad_eval.py"
    if text is not None:
        (tmp_path / target).write_text(text, encoding="utf-8")
    status, out, err = _cli(capsys, "agentic-eval " + command.format(target))
    assert status == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"agentic-eval: error: {message}"), line
    assert "Traceback" not in err


def test_a_domain_named_like_a_registered_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, code, _ = _example()
    path = tmp_path / "clash.py"
    path.write_text(code.replace('"refunds",\n', '"retail_ops",\n', 1), encoding="utf-8")
    status, _, err = _cli(capsys, f"agentic-eval list cases {path}")
    assert status == 2
    assert "a domain named 'retail_ops' is already registered" in err


STATEFUL = '''
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

import agentic_eval
from agentic_eval import AgentTask, Call, CheckContext, Submit

ORDERS = {"O-1": (4500, True), "O-2": (3000, False)}


class Answer(BaseModel):
    refunded_cents: int


refunds = agentic_eval.domain(
    "NAME",
    system_prompt="Refund returned orders.",
    instruction="Refund the order if it was returned; submit what you refunded.",
    output=Answer,
    cases=CASES,
)


@refunds.tool
def get_order(order_id: str) -> dict[str, Any]:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    paid, returned = ORDERS[order_id]
    return {"paid_cents": paid, "returned": returned}


@refunds.tool(mutates="order_id")
def issue_refund(state: dict[str, int], order_id: str, amount_cents: int) -> dict[str, Any]:
    """Refund an order.

    Args:
        order_id: The order to refund.
        amount_cents: The amount in cents.
    """
    state[order_id] = amount_cents
    return {"refunded": order_id}


@refunds.answer_key
def expected(inputs: dict[str, Any]) -> dict[str, Any]:
    paid, returned = ORDERS[inputs["order_id"]]
    return {"refunds": {inputs["order_id"]: paid} if returned else {}}


@refunds.check(hard_gate=True, needs_output=False)
def refunds_match(ctx: CheckContext[dict[str, int]]) -> bool:
    return ctx.env == ctx.case.expected["refunds"]


def _run(task: AgentTask, everything: bool) -> Iterator[Any]:
    order_id = task.inputs["order_id"]
    (reply,) = yield Call("get_order", {"order_id": order_id})
    if not (reply.data["returned"] or everything):
        yield Submit({"refunded_cents": 0})
        return
    amount = reply.data["paid_cents"]
    yield Call("issue_refund", {"order_id": order_id, "amount_cents": amount})
    yield Submit({"refunded_cents": amount})


@refunds.agent
def reference(task: AgentTask) -> Iterator[Any]:
    return _run(task, everything=False)


@refunds.mutant("refunds_match", description="refunds orders never returned")
def refunds_everything(task: AgentTask) -> Iterator[Any]:
    return _run(task, everything=True)
'''


def _stateful(path: Path, name: str, cases: str) -> Path:
    path.write_text(STATEFUL.replace("NAME", name).replace("CASES", cases), encoding="utf-8")
    return path


def test_state_tools_hard_gate_and_mutant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _stateful(
        tmp_path / "stateful.py", "refunds_state", '[{"order_id": "O-1"}, {"order_id": "O-2"}]'
    )
    assert _cli(capsys, f"agentic-eval goldens write {path}")[0] == 0
    status, out, _ = _cli(capsys, f"agentic-eval list cases {path}")
    assert status == 0
    assert [ln.split("\t")[:4] for ln in out.splitlines()] == [
        ["refunds_state", "case-1", "refunds_state", "hard-gate"],
        ["refunds_state", "case-2", "refunds_state", "hard-gate"],
    ]
    status, out, _ = _cli(capsys, f"agentic-eval list domains {path} retail_ops")
    assert status == 0
    assert [ln.split("\t")[:2] for ln in out.splitlines()] == [
        ["refunds_state", "2 cases"],
        ["retail_ops", f"{len(get_domain('retail_ops').load_cases())} cases"],
    ]
    status, out, _ = _cli(capsys, f"agentic-eval run {path} --backend scripted --json")
    assert status == 0
    status, out, _ = _cli(
        capsys, f"agentic-eval run {path} --backend scripted --agent refunds_everything --json"
    )
    (run,) = json.loads(out)["runs"]
    assert status == 1 and run["scorecard"]["totals"]["hard_gate_failures"] == 1
    status, out, _ = _cli(capsys, f"agentic-eval mutants {path}")
    assert status == 0, out
    assert "kill matrix PASS: 1 mutants in 1 domain(s), 1/1 declared gates caught" in out
    status, _, err = _cli(capsys, f"agentic-eval batch {path} --processes 2")
    assert status == 2 and "is an eval file: its domain runs in this process only" in err


def test_jsonl_cases_and_real_fixtures_are_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    path = _stateful(suite / "jsonl_eval.py", "refunds_jsonl", '"cases.jsonl"')
    (suite / "cases.jsonl").write_text(
        '{"id": "one", "order_id": "O-1"}\n\n{"id": "two", "order_id": "O-2"}\n', encoding="utf-8"
    )
    assert _cli(capsys, f"agentic-eval goldens write {path}")[0] == 0
    committed = json.loads((suite / "refunds_jsonl.cases.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in committed["cases"]] == ["one", "two"]
    assert "external_fixtures" not in committed
    status, out, _ = _cli(capsys, f"agentic-eval run {path} --backend scripted --json")
    assert status == 0

    # A case file of the same name under EVAL_FIXTURE_DIR is real data: cases built from it,
    # everything written from it marked, goldens refused inside the repository's way.
    real = tmp_path / "real"
    (real / "refunds_jsonl").mkdir(parents=True)
    (real / "refunds_jsonl" / "cases.jsonl").write_text('{"id": "r1", "order_id": "O-1"}\n')
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(real))
    out_dir = tmp_path / "out"
    status, out, _ = _cli(
        capsys,
        f"agentic-eval run {path} --backend scripted --record --recordings {out_dir} --json",
    )
    assert status == 0
    (run,) = json.loads(out)["runs"]
    assert [c["case_id"] for c in run["scorecard"]["cases"]] == ["r1"]
    transcript = json.loads((out_dir / "refunds_jsonl" / "reference" / "r1.json").read_text())
    assert len(transcript["provenance"]["external_fixtures"]) == 64
    status, _, err = _cli(capsys, f"agentic-eval goldens write {path}")
    assert status == 2 and "using real fixtures from EVAL_FIXTURE_DIR" in err

    # An unreadable row is one line naming the file and the line.
    (real / "refunds_jsonl" / "cases.jsonl").write_text('{"id": "r1", "order_id": "O-1"}\n[1]\n')
    status, _, err = _cli(capsys, f"agentic-eval list cases {path}")
    assert status == 2
    assert err.strip() == (
        f"agentic-eval: error: {real}/refunds_jsonl/cases.jsonl:2: a case row is a JSON "
        "object, not list"
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            '{"id": "O-2", "order_id": "O-2"}',
            '{"id": "O 2", "order_id": "O-2"}',
            "refunds: case 2: id: Value error, case id 'O 2' must be",
        ),
        (
            '{"id": "O-2", "order_id": "O-2"}',
            '{"id": "O-2", "order_id": "O-9"}',
            "refunds: the answer key raised on case O-2: KeyError: 'O-9'",
        ),
        (
            '{"id": "O-2", "order_id": "O-2"}',
            '{"id": "O-1", "order_id": "O-2"}',
            "refunds: two cases have the id 'O-1'",
        ),
    ],
    ids=["bad-id", "answer-key-raises", "repeated-id"],
)
def test_bad_cases_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    name, code, _ = _example()
    assert old in code
    path = tmp_path / name
    path.write_text(code.replace(old, new), encoding="utf-8")
    status, out, err = _cli(capsys, f"agentic-eval goldens write {path}")
    assert status == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"agentic-eval: error: {message}"), line
