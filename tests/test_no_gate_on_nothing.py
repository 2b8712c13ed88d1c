"""A gate never passes on nothing (issue 17, class 2).

Any command asked to gate (`report --fail-on-regression`, a replay of a named domain or of a
named recordings folder) exits non-zero when there is nothing to judge, with one line saying
what was missing. Only the bare `run` (what `make run` calls) may skip a domain with no
recordings, and it says so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentic_eval.cli.main import main

COMMITTED = Path(__file__).resolve().parent.parent / "evals" / "recordings"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.delenv("AGENTIC_EVAL_DATABASE_URL", raising=False)


@pytest.mark.parametrize(
    "args",
    [
        ("report", "--fail-on-regression"),
        ("report", "retail_ops", "--base", "baseline", "--fail-on-regression"),
        ("report", "retail_ops", "--fail-on-regression", "--format", "json"),
    ],
    ids=["bare", "named-baseline", "named-json"],
)
def test_fail_on_regression_with_no_history_exits_non_zero(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _cli(capsys, *args)
    assert code == 2, err
    assert "nothing" in err and "--fail-on-regression" in err


def test_fail_on_regression_with_a_single_run_exits_non_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, _ = _cli(capsys, "run", "retail_ops", "--backend", "scripted", "--cases", "match-001")
    assert code == 0
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert (
        code == 2
        and "retail_ops / reference (enforce, scripted): nothing compared (only one" in err
    )
    code, _, err = _cli(capsys, "report", "--fail-on-regression")
    assert code == 2, err
    _cli(capsys, "run", "retail_ops", "--backend", "scripted", "--cases", "match-001")
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 0, err  # two runs, compared, nothing regressed


def test_a_suite_without_a_comparison_beside_one_with_is_a_warning_when_unnamed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for _ in range(2):
        _cli(capsys, "run", "retail_ops", "--backend", "scripted", "--cases", "match-001")
    _cli(capsys, "run", "browser_ops", "--backend", "scripted", "--cases", "*-001")
    code, _, err = _cli(capsys, "report", "--fail-on-regression")
    assert code == 0 and "warning: --fail-on-regression: browser_ops / reference" in err
    code, _, err = _cli(capsys, "report", "browser_ops", "retail_ops", "--fail-on-regression")
    assert code == 2 and "error: --fail-on-regression: browser_ops" in err


@pytest.mark.parametrize(
    "args",
    [
        ("run", "retail_ops", "--recordings", "/nonexistent/rec"),
        ("run", "--recordings", "/nonexistent/rec"),
        ("run", "retail_ops", "--recordings", "{empty}"),
        ("run", "--recordings", "{empty}", "--json"),
    ],
    ids=["named-domain-missing-folder", "missing-folder", "named-domain-empty", "empty-json"],
)
def test_a_replay_of_nothing_is_inconclusive(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    args = tuple(a.replace("{empty}", str(tmp_path / "empty")) for a in args)
    code, _, err = _cli(capsys, *args)
    assert code == 2, err  # nothing judged: no verdict
    assert "agentic-eval: error:" in err and "nothing" in err


def test_a_named_domain_without_recordings_fails_beside_one_with(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rec = tmp_path / "rec"
    shutil.copytree(COMMITTED / "retail_ops" / "reference", rec / "retail_ops" / "reference")
    code, _, err = _cli(capsys, "run", "retail_ops", "browser_ops", "--recordings", str(rec))
    assert code == 1
    assert "error: browser_ops: nothing recorded under" in err


def test_the_bare_run_skips_a_domain_with_no_recordings_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = tmp_path / "evals" / "recordings"
    shutil.copytree(COMMITTED / "retail_ops" / "reference", rec / "retail_ops" / "reference")
    monkeypatch.chdir(tmp_path)  # the default recordings folder, as `make run` uses it
    code, _, err = _cli(capsys, "run", "--no-history")
    assert code == 0, err
    assert "browser_ops: skipped: nothing recorded under" in err


def test_a_kill_matrix_of_nothing_is_not_a_pass(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentic_eval.evaluation.killmatrix import kill_matrix

    assert kill_matrix([]).ok is False
    monkeypatch.setattr("agentic_eval.cli.mutants.resolve_domains", lambda names: [])
    for extra in ((), ("--json",), ("--markdown",)):
        code, _, err = _cli(capsys, "mutants", *extra)
        assert code == 2 and "kill matrix: nothing to run" in err


@pytest.mark.parametrize("name", ["naive copy", "naive%2", ".hidden"])
def test_transcripts_in_a_folder_no_replay_reads_are_not_passed_over_in_silence(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rec = tmp_path / "rec"
    shutil.copytree(COMMITTED / "retail_ops" / "reference", rec / "retail_ops" / "reference")
    shutil.copytree(COMMITTED / "retail_ops" / "naive", rec / "retail_ops" / name)
    for args in (
        ("run", "--recordings", str(rec)),
        ("run", "retail_ops", "--recordings", str(rec)),
    ):
        code, _, err = _cli(capsys, *args, "--no-history")
        assert code == 1, err
        assert f"retail_ops / {name}: " in err and "nothing replays them" in err


def test_rescore_of_a_folder_with_nothing_to_replay_counts_no_negative(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rec = tmp_path / "rec"
    folder = rec / "retail_ops" / "reference"
    folder.mkdir(parents=True)
    shutil.copy(COMMITTED / "retail_ops" / "reference" / "scorecard.json", folder)
    code, out, _ = _cli(capsys, "rescore", "retail_ops", "--recordings", str(rec))
    assert code == 1 and "0 re-judged, 0 unchanged, 1 refused" in out
