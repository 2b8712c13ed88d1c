"""The CLI's edges: version, help, and one-line usage errors with exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentic_eval import __version__
from agentic_eval.cli.main import main
from agentic_eval.domains import get_domain


def _err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agentic-eval {__version__}"


def test_console_script_version_runs_in_a_fresh_process() -> None:
    exe = Path(sys.executable).parent / "agentic-eval"
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"agentic-eval {__version__}"


def test_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "run" in out and "goldens" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "--bogus"], "No such option"),
        (["run", "no_such_domain"], "unknown domain 'no_such_domain'"),
        (["run", "--backend", "live", "--provider", "openai"], "needs --provider and --model"),
        (["run", "--record"], "--record applies to scripted and live runs"),
        (["run", "--approval", "observe"], "replay uses the recorded approval mode"),
        (["run", "--backend", "scripted", "--base-url", "http://x"], "apply to live runs only"),
        (["run", "--concurrency", "0"], "0 is not in the range"),
        (["nope"], "No such command"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1, lines
    assert lines[0].startswith("agentic-eval: error:") and fragment in lines[0]


def test_usage_error_in_a_real_process_has_no_traceback() -> None:
    exe = Path(sys.executable).parent / "agentic-eval"
    out = subprocess.run([str(exe), "run", "--bogus"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_readme_cli_reference_names_every_option() -> None:
    from agentic_eval.cli.app import cli

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    reference = readme.split("## CLI reference", 1)[1].split("\n## ", 1)[0]
    missing: list[str] = []

    def walk(command: object, path: str) -> None:
        import click

        assert isinstance(command, click.Command)
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                words = reference.replace("|", " ").split()
                assert name in words, f"{path} {name} is not in the README's CLI reference"
                walk(sub, f"{path} {name}")
            return
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("--") and flag not in ("--help",) and flag not in reference:
                    missing.append(f"{path} {flag}")

    walk(cli, "agentic-eval")
    assert not missing, missing


def test_show_full_prints_every_text_whole(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["show", "gate-001", "--agent", "naive"])
    cut = capsys.readouterr().out
    assert code == 0 and "..." in cut and "-- system prompt" not in cut
    code = main(["show", "gate-001", "--agent", "naive", "--full"])
    full = capsys.readouterr().out
    assert code == 0 and "-- system prompt" in full
    system = get_domain("retail_ops").system_prompt
    assert system.splitlines()[-1] in full  # the last line of the prompt, whole
    assert len(full) > 2 * len(cut)
