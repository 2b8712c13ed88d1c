"""`agentic-eval corpus list`: the human-decided steps, newest job first, with the first verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.evaluation.scenario import seed_job
from agentic_eval.store import Store
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow


@pytest.fixture()
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", url)
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    return url


def _history(url: str) -> tuple[str, str]:
    store = Store(url)
    wf = Workflow(store)
    wf.ensure_template("corpus-cli", ["research", "write"], title="Corpus CLI")
    human = wf.ensure_user("olivia", "operator")
    bot = wf.ensure_user("bot", "agent")
    job = wf.create_job("corpus-cli", created_by=human.id)
    claim = wf.claim_step(job.id, "research", bot.id)
    attempt = wf.finish_attempt(claim.id, {"text": "draft"})
    wf.decide(attempt.id, human.id, "reject", "cites \x1b[31mno source")
    claim = wf.claim_step(job.id, "research", bot.id)
    wf.decide(wf.finish_attempt(claim.id, {"text": "second"}).id, human.id, "approve")
    seeded = seed_job(wf, get_scenario("synthesize.missing_revenue"))
    store.close()
    return job.id, seeded


def test_list_shows_the_first_verdict_and_leaves_eval_jobs_out(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    job, seeded = _history(url)
    assert main(["corpus", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["job", "step", "verdict", "template", "origin", "first", "claimed"]
    assert lines[1].split()[:5] == [job, "research", "rejected", "corpus-cli", "real"]
    assert lines[2].split() == ["reason:", "cites", "\\x1b[31mno", "source"]  # escaped, not run
    assert lines[-1] == "1 case(s): 0 approved (judged), 1 rejected"
    assert seeded not in out
    assert main(["corpus", "list", "--origin", "scenario"]) == 0
    out = capsys.readouterr().out
    assert seeded in out and job not in out


def test_an_empty_corpus_says_so(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "list"]) == 0
    assert capsys.readouterr().out.strip() == (
        "no decided steps of real, imported jobs match: the corpus is empty"
    )


def test_a_backwards_date_range_is_a_usage_error(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["corpus", "list", "--since", "2026-12-01", "--until", "2026-11-01"]) == 2
    assert "must be before until" in capsys.readouterr().err


def test_the_origin_choices_are_the_workflows_origins() -> None:
    from agentic_eval.cli.corpus import ORIGINS
    from agentic_eval.workflow.records import JOB_ORIGINS

    assert ORIGINS == JOB_ORIGINS
