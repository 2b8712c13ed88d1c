"""Real fixtures mark what is derived from them with no code of the domain's own (issue 21): a
domain written as the guide says (``fixture_file`` / ``load_fixture_file``, no
``external_fixtures`` override) run on ``$EVAL_FIXTURE_DIR`` records marked transcripts, and
``guard`` refuses them once they are staged in git."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.core.realdata import MARK
from agentic_eval.domains import unregister_domain
from agentic_eval.domains.fixtures import reads_external

EVAL = """
from pathlib import Path
from pydantic import BaseModel
from agentic_eval import CaseSpec, CheckResult, Domain, Submit, TaskKind, ToolRegistry, check
from agentic_eval.domains.fixtures import fixture_file, load_fixture_file

HERE = Path(__file__).parent


class Fixtures(BaseModel):
    total: int


class Answer(BaseModel):
    total: int


@check("total", hard_gate=True)
def total(ctx):
    return CheckResult(name="total", passed=ctx.output.total == ctx.case.expected["total"])


def reference(task):
    yield Submit({"total": task.inputs["total"]})


class Sums(Domain[dict]):
    name = "sums_guide"
    system_prompt = "Report the total."

    def fixtures(self) -> Fixtures:
        return load_fixture_file(Fixtures, fixture_file(self.name, HERE / "fixtures.json"))

    def build_cases(self):
        t = self.fixtures().total
        return [CaseSpec(id="c1", kind="sum", instruction="Total?", inputs={"total": t},
                         expected={"total": t})]

    def make_env(self, case):
        return {}

    def tools(self):
        return ToolRegistry()

    def task_kind(self, case):
        return TaskKind("sum", Answer, (total,))

    def agents(self):
        return {"reference": reference}


sums = Sums()
"""


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the eval file, the real-fixture folder) with ``$EVAL_FIXTURE_DIR`` set."""
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "sums_eval.py").write_text(EVAL)
    (work / "fixtures.json").write_text(json.dumps({"total": 3}))
    real = tmp_path / "real"
    (real / "sums_guide").mkdir(parents=True)
    (real / "sums_guide" / "fixtures.json").write_text(json.dumps({"total": 41}))
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(real))
    yield work / "sums_eval.py", real
    unregister_domain("sums_guide")


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        env.pop(name, None)
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60, env=env)


def test_a_guide_domain_on_real_fixtures_is_marked_and_guard_catches_its_recording(
    layout: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = layout
    rec = tmp_path / "rec"
    code = main(["run", str(path), "--backend", "scripted", "--record", "--recordings",
                 str(rec), "--no-history"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err + out.out
    transcript = json.loads((rec / "sums_guide" / "reference" / "c1.json").read_text())
    assert transcript["provenance"][MARK]  # marked, with no override in the domain
    assert transcript["output"] == {"total": 41}  # the real fixtures were read
    assert json.loads((rec / "sums_guide" / "reference" / "scorecard.json").read_text())[MARK]

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "evals").mkdir()
    (repo / "evals" / "c1.json").write_bytes(
        (rec / "sums_guide" / "reference" / "c1.json").read_bytes()
    )
    _git(repo, "add", "--", "evals/c1.json")
    code = main(["guard", "--repo", str(repo)])
    out = capsys.readouterr()
    assert code == 1 and "evals/c1.json" in out.err + out.out, out.err + out.out


def test_the_mark_follows_where_the_fixtures_were_read(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, real = layout
    assert reads_external("sums_guide")  # its folder holds a file
    assert not reads_external("another_domain")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(empty))
    assert not reads_external("sums_guide")
    monkeypatch.delenv("EVAL_FIXTURE_DIR")
    assert not reads_external("sums_guide")  # no real-fixture folder: nothing is real
    del real
