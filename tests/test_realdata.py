"""Real customer data never enters the repository: runs and goldens over EVAL_FIXTURE_DIR refuse
to write into a git work tree, everything derived from real fixtures carries a mark, and the
guard (`agentic-eval guard`, run by `make test` and so by CI) fails when git tracks real data."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.core.realdata import MARK
from agentic_eval.domains.retail_ops.fixtures import FIXTURES_PATH

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "src" / "agentic_eval" / "domains" / "retail_ops" / "cases.json"
REAL_EMAIL = "maria.lindqvist@real-customer.example"


@pytest.fixture
def real_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = json.loads(FIXTURES_PATH.read_text())
    data["suppliers"][0]["contact_email"] = REAL_EMAIL  # a real person's address
    folder = tmp_path / "real" / "retail_ops"
    folder.mkdir(parents=True)
    (folder / "fixtures.json").write_text(json.dumps(data))
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "real"))
    return tmp_path


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_goldens_write_refuses_the_repository_and_marks_what_it_writes(
    real_fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = CASES.read_bytes()
    assert main(["goldens", "write", "retail_ops"]) == 2
    assert "refusing to write its cases into a repository" in capsys.readouterr().err
    assert CASES.read_bytes() == before
    out = real_fixtures / "private-cases"
    assert main(["goldens", "write", "retail_ops", "--output", str(out)]) == 0
    written = json.loads((out / "retail_ops" / "cases.json").read_text())
    assert written[MARK] == written["fixtures_sha256"]
    assert CASES.read_bytes() == before


def test_goldens_check_names_fields_and_digests_never_real_values(
    real_fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["goldens", "check", "retail_ops"]) == 1
    err = capsys.readouterr().err
    assert "case chase-001 field expected.email_to" in err and "sha256" in err
    assert REAL_EMAIL not in err


def test_recording_real_fixtures_into_the_repository_is_refused(
    real_fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inside = REPO / "evals" / "recordings"
    before = sorted(p.name for p in (inside / "retail_ops").iterdir())
    code = main(["run", "retail_ops", "--backend", "scripted", "--record", "--cases", "chase-001"])
    assert code == 2
    assert "refusing to record into evals/recordings" in capsys.readouterr().err
    assert sorted(p.name for p in (inside / "retail_ops").iterdir()) == before
    outside = real_fixtures / "private-recordings"
    code = main(["run", "retail_ops", "--backend", "scripted", "--record", "--cases", "chase-*",
                 "--recordings", str(outside)])  # fmt: skip
    assert code == 0
    folder = outside / "retail_ops" / "reference"
    files = sorted(folder.iterdir())
    assert len(files) == 6  # five transcripts and the scorecard
    for path in files:
        assert f'"{MARK}"' in path.read_text(), path.name


def test_history_of_a_real_data_run_is_not_written_into_a_repository(
    real_fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = real_fixtures / "some-repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(repo / "history"))
    assert main(["run", "retail_ops", "--backend", "scripted", "--cases", "match-001"]) == 0
    assert "its history entry is not written" in capsys.readouterr().err
    assert not (repo / "history").exists()


def test_the_guard_fails_when_git_tracks_real_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "ok.json").write_text('{"fine": true}')
    _git("add", "ok.json", cwd=repo)
    assert main(["guard", "--repo", str(repo)]) == 0
    (repo / "derived.json").write_text(json.dumps({"domain": "x", MARK: "ab" * 32}))
    _git("add", "derived.json", cwd=repo)
    assert main(["guard", "--repo", str(repo)]) == 1
    assert f"derived.json: staged copy carries {MARK!r}" in capsys.readouterr().err
    _git("rm", "-q", "--cached", "derived.json", cwd=repo)
    fixture_dir = repo / "customer-fixtures"
    (fixture_dir / "retail_ops").mkdir(parents=True)
    shutil.copy(FIXTURES_PATH, fixture_dir / "retail_ops" / "fixtures.json")
    _git("add", "customer-fixtures", cwd=repo)
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(fixture_dir))
    assert main(["guard", "--repo", str(repo)]) == 1
    assert "lies under EVAL_FIXTURE_DIR" in capsys.readouterr().err


def test_this_repository_tracks_no_real_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guard", "--repo", str(REPO)]) == 0
    assert "holds real data" in capsys.readouterr().out
