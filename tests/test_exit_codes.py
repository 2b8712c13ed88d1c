"""Exit 1 is the gate's verdict on the agent and nothing else (DESIGN.md, `agentic-eval --help`).

A command that cannot do what was asked (a store it cannot reach, a file it cannot write, a
recording it cannot read) exits 2: a CI job must not read "the agent failed" from it. Found as a
class: `run` and `batch` exited 1 on an unreachable PostgreSQL store, as did every command that
raised a plain ``click.ClickException`` (whose exit code is 1).
"""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest

from agentic_eval.cli import common
from agentic_eval.cli.main import main

CLI = Path(common.__file__).parent
UNREACHABLE = "postgresql+psycopg://evaluser@127.0.0.1:1/evals?connect_timeout=2"


def _raised_click_exceptions(tree: ast.AST) -> list[int]:
    """Lines that construct ``click.ClickException`` itself (exit code 1)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "ClickException"
    ]


def test_no_command_raises_a_plain_click_exception() -> None:
    found = {
        path.name: lines
        for path in sorted(CLI.glob("*.py"))
        if (lines := _raised_click_exceptions(ast.parse(path.read_text())))
    }
    assert found == {}, f"use CannotRun / InputError (exit 2), not click.ClickException: {found}"


def test_the_guard_sees_a_plain_click_exception() -> None:
    code = "import click\ndef f():\n    raise click.ClickException('x')\n"
    assert _raised_click_exceptions(ast.parse(code)) == [3]


def test_every_click_exception_of_ours_exits_2() -> None:
    """The subclasses the commands raise (CannotRun, InputError, HistoryProblem, ...)."""
    import importlib
    import inspect

    ours = []
    for path in sorted(CLI.glob("*.py")):
        module = importlib.import_module(f"agentic_eval.cli.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, click.ClickException) and cls.__module__ == module.__name__:
                ours.append(cls)
    assert common.CannotRun in ours and common.InputError in ours
    assert {cls.__name__: cls.exit_code for cls in ours if cls.exit_code != 2} == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "retail_ops", "--backend", "scripted", "--cases", "match-001"],
        ["batch", "retail_ops", "--samples", "1"],
        ["batch", "--scenario", "synthesize.missing_revenue", "--agent", "reference"],
        ["batch", "--resume", "0000"],
        ["scenarios"],
        ["view", "--port", "0"],
        ["corpus", "list"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_an_unreachable_store_exits_2_in_one_line(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", UNREACHABLE)
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("agentic-eval: error: cannot"), err
    assert "127.0.0.1:1" in err[0] and "Traceback" not in err[0]


def test_an_output_that_cannot_be_written_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", f"sqlite:///{tmp_path}/store.db")
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    (tmp_path / "taken").write_text("a file, not a folder")
    argv = ["run", "retail_ops", "--backend", "scripted", "--cases", "match-001", "--no-history",
            "--output", str(tmp_path / "taken" / "out.json")]  # fmt: skip
    assert main(argv) == 2
    assert "cannot write" in capsys.readouterr().err


def test_a_worker_that_cannot_reach_its_store_says_so_at_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before it takes a task (the broker is never dialled: nothing listens on port 1)."""
    pytest.importorskip("celery")
    from agentic_eval.workers import task

    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", UNREACHABLE)
    monkeypatch.setenv("AGENTIC_EVAL_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setattr(task, "_store", None)
    assert main(["worker", "--pool", "solo"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "127.0.0.1:1/evals" in err[0], err
