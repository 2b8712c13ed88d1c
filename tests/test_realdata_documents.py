"""Documents derived from real fixtures are not written into a git work tree (issue 17: a JUnit
file, a report's Markdown/JSON/JUnit or its HTML carry real values but no mark the guard could
find, so they are refused where git could pick them up, as recordings and case files are)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.domains.retail_ops.fixtures import FIXTURES_PATH

REAL_PO = "PO-REAL-77001"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    data = json.loads(FIXTURES_PATH.read_text())
    text = json.dumps(data).replace("PO-4001", REAL_PO)
    (tmp_path / "real" / "retail_ops").mkdir(parents=True)
    (tmp_path / "real" / "retail_ops" / "fixtures.json").write_text(text)
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "real"))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(tmp_path / "private-history"))
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, timeout=60)
    return repo, tmp_path / "outside"


RUN = ("run", "retail_ops", "--backend", "scripted", "--agent", "naive", "--cases", "match-*")


@pytest.mark.parametrize("fmt", ["junit", "markdown", "json"])
def test_a_run_on_real_fixtures_writes_no_document_into_a_repository(
    fmt: str, setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, outside = setup
    code = main([*RUN, "--format", fmt, "--output", str(repo / f"results.{fmt}")])
    assert code == 2
    assert "refusing to write --output" in capsys.readouterr().err
    assert not list(repo.iterdir())[1:]  # only .git
    outside.mkdir()
    assert main([*RUN, "--format", fmt, "--output", str(outside / f"results.{fmt}")]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_a_report_on_real_fixtures_writes_no_document_into_a_repository(
    option: str, setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, outside = setup
    main(list(RUN))
    main(list(RUN))
    capsys.readouterr()
    args = ["report", "retail_ops", "--format", "markdown"]
    assert main([*args, option, str(repo / "report.out")]) == 2
    assert "refusing to write" in capsys.readouterr().err
    assert not (repo / "report.out").exists()
    outside.mkdir()
    assert main([*args, option, str(outside / "report.out")]) == 0
