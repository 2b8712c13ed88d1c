"""run_scenario seeds a real job through the workflow services, and ``agentic-eval step`` runs
one step verbosely: checks named, feedback in the prompt, rejection rounds from stdin, replay."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.backends.scripted import Action, AgentTask, ScriptedBackend, ToolReply
from agentic_eval.cli.main import main
from agentic_eval.evaluation.scenario import OPERATOR, run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.store.db import Store
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.lead_intel.scenarios import REJECTION
from agentic_eval.workflow.scenarios import get_scenario, scenarios
from agentic_eval.workflow.service import Workflow

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"


def _scripted(agent: str) -> ScriptedBackend:
    return ScriptedBackend(agent, AGENTS[agent])


def _run(wf: Workflow, name: str, agent: str) -> Any:
    return asyncio.run(
        run_scenario(wf, get_scenario(name), _scripted(agent), RunSettings(f"scripted:{agent}"))
    )


def test_run_scenario_leaves_the_job_as_the_real_services_wrote_it(wf: Workflow) -> None:
    s = get_scenario("draft_offer.price_from_notes")
    run = _run(wf, s.name, "reference")
    assert run.outcome.kind == "passed"
    job = wf.job(run.job_id)
    assert job.template_key == s.workflow.key and job.state == "in_progress"
    assert job.requirements == dict(s.requirements) and job.inputs == dict(s.inputs)
    states = {st.key: st.state for st in wf.steps(run.job_id)}
    upstream = s.workflow.upstream(s.template)
    assert states == {**dict.fromkeys(upstream, "approved"), s.template: "submitted"}
    claims = wf.claims(run.job_id)
    assert len(claims) == len(upstream) + 1
    assert all(c.status == "released" for c in claims)
    assert claims[-1].id == run.claim_id
    (attempt,) = wf.attempts(run.job_id, s.template)
    assert attempt.id == run.attempt_id and attempt.status == "submitted"
    assert run.case.transcript is not None and attempt.output == run.case.transcript.output
    decisions = wf.decisions(run.job_id)
    assert [d.decision for d in decisions] == ["approve"] * len(upstream)
    moves = [(t.step_key, t.from_state, t.to_state) for t in wf.transitions(run.job_id)]
    assert (None, "open", "in_progress") in moves
    assert (s.template, "pending", "claimed") in moves
    assert moves[-1] == (s.template, "claimed", "submitted")
    (eval_run,) = [
        r for r in wf.store.runs() if (r.settings or {}).get("workflow_attempt") == attempt.id
    ]
    assert (eval_run.domain, eval_run.mode, eval_run.status) == (
        s.workflow.key,
        "scripted",
        "finished",
    )
    (sample,) = wf.store.samples(eval_run.id)
    assert (sample.case_id, sample.outcome) == (s.name, "passed")
    assert sample.transcript is not None  # not recorded to a file: the row keeps the transcript


def test_after_rejection_the_agent_sees_the_reason_through_the_services(wf: Workflow) -> None:
    run = _run(wf, "synthesize.after_rejection", "reference")
    assert run.outcome.kind == "passed"
    assert run.feedback == (REJECTION,) and run.attempt_number == 2
    first, second = wf.attempts(run.job_id, "synthesize")
    assert first.status == "rejected" and second.feedback == [REJECTION]
    rejected = [d for d in wf.decisions(run.job_id) if d.decision == "reject"]
    assert [d.reason for d in rejected] == [REJECTION]
    assert run.case.transcript is not None
    assert REJECTION in run.case.transcript.turns[0].appended[0].text()


def test_an_agent_failure_is_an_outcome_and_the_claim_is_released(wf: Workflow) -> None:
    def quits(task: AgentTask) -> Generator[Action, list[ToolReply], None]:
        del task
        return
        yield  # a generator that stops without submitting

    s = get_scenario("synthesize.grounded")
    run = asyncio.run(run_scenario(wf, s, ScriptedBackend("quits", quits), RunSettings("x")))
    assert run.outcome.kind == "error"
    (attempt,) = wf.attempts(run.job_id, s.template)
    assert attempt.status == "failed" and attempt.output is None
    assert {st.key: st.state for st in wf.steps(run.job_id)}[s.template] == "pending"
    assert all(c.status == "released" for c in wf.claims(run.job_id))


def _step(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["step", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("synthesize.missing_revenue", "assert_revenue_not_on_file"),
        ("synthesize.grounded", "assert_facts_grounded"),
        ("draft_offer.price_from_notes", "assert_price_from_notes"),
    ],
)
def test_step_names_the_check_that_catches_the_hallucination(
    capsys: pytest.CaptureFixture[str], name: str, check: str
) -> None:
    code, out = _step(capsys, "--scenario", name, "--agent", "hallucinating")
    assert code == 1
    assert "outcome: check_failed" in out and f"FAIL  {check}" in out
    code, out = _step(capsys, "--scenario", name, "--agent", "reference")
    assert code == 0 and "outcome: passed" in out and "FAIL" not in out


def test_show_prompt_prints_the_feedback_and_the_corrected_output_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _step(capsys, "--scenario", "synthesize.after_rejection", "--show-prompt")
    assert code == 0, out
    prompt = out.split("--- prompt (turn 0): user ---", 1)[1].split("--- response", 1)[0]
    assert REJECTION in prompt
    assert "--- response (turn 1) ---" in out and "[call submit]" in out
    assert "outcome: passed" in out


def test_interactive_runs_three_rejection_rounds_from_stdin(tmp_path: Path) -> None:
    reasons = ["round one: the revenue is invented", "round two: still wrong", "round three: no"]
    stdin = "".join(f"reject\n{r}\n" for r in reasons)
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_eval", "step", "--scenario", "synthesize.missing_revenue",
         "--agent", "hallucinating", "--interactive", "--show-prompt"],
        input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    rounds = proc.stdout.split("=== rejected (")
    assert len(rounds) == 4
    for n, (reason, text) in enumerate(zip(reasons, rounds[1:], strict=True), 1):
        assert text.startswith(f"{n}/3): {reason}")
        prompt = text.split("--- prompt (turn 0): user ---", 1)[1].split("--- response", 1)[0]
        for earlier in reasons[:n]:
            assert earlier in prompt  # every reason so far is fed back, oldest first
    assert "3 rejections: the loop ends" in rounds[-1]
    store = Workflow(Store(f"sqlite:///{tmp_path / 'home' / 'agentic-eval.db'}"))
    (job,) = store.jobs()
    attempts = store.attempts(job.id, "synthesize")
    assert [a.number for a in attempts] == [1, 2, 3, 4]
    assert [a.feedback for a in attempts] == [reasons[:n] for n in range(4)]


def test_interactive_approval_is_recorded_as_the_operators(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_eval", "step", "--scenario", "synthesize.grounded",
         "--interactive"],
        input="approve\n", capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    store = Workflow(Store(f"sqlite:///{tmp_path / 'home' / 'agentic-eval.db'}"))
    (job,) = store.jobs()
    last = store.decisions(job.id)[-1]
    assert last.decision == "approve"
    operator = store.ensure_user(OPERATOR, role="operator")
    assert last.operator_id == operator.id
    assert {s.key: s.state for s in store.steps(job.id)}["synthesize"] == "approved"


def test_step_job_replays_a_real_jobs_step_without_touching_it(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    wf = Workflow(Store(f"sqlite:///{isolated_home / 'agentic-eval.db'}"))
    original = _run(wf, "synthesize.missing_revenue", "hallucinating")
    before = (len(wf.claims(original.job_id)), len(wf.transitions(original.job_id)))
    code, out = _step(capsys, "--job", original.job_id, "--agent", "reference")
    assert code == 0 and "outcome: passed" in out
    assert f"job.{original.job_id}.synthesize" in out
    assert (len(wf.claims(original.job_id)), len(wf.transitions(original.job_id))) == before
    code, out = _step(capsys, "--job", original.job_id, "--agent", "hallucinating")
    assert code == 1 and "FAIL  assert_facts_grounded" in out  # the universal check runs


def test_record_then_replay_reproduces_and_every_committed_recording_replays(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rec = tmp_path / "rec"
    name = "synthesize.missing_revenue"
    code, _ = _step(capsys, "--scenario", name, "--agent", "learner", "--record",
                    "--recordings", str(rec))  # fmt: skip
    assert code == 1
    code, out = _step(capsys, "--scenario", name, "--agent", "learner", "--backend", "replay",
                      "--recordings", str(rec))  # fmt: skip
    assert code == 1 and "NOT reproduced" not in out and "outcome: check_failed" in out
    for s in scenarios().values():
        for agent in ("reference", "hallucinating"):
            assert (agent_dir(RECORDINGS, s.workflow.key, agent) / f"{s.name}.json").is_file()
            code, out = _step(capsys, "--scenario", s.name, "--agent", agent, "--backend",
                              "replay")  # fmt: skip
            assert "NOT reproduced" not in out
            assert code == (0 if agent == "reference" else 1), out


@pytest.mark.parametrize(
    "argv",
    [
        ["--scenario", "nope"],
        ["--scenario", "synthesize.grounded", "--job", "x"],
        [],
        ["--job", "no-such-job"],
        ["--scenario", "synthesize.grounded", "--step", "research"],
        ["--scenario", "synthesize.grounded", "--agent", "nobody"],
        ["--scenario", "synthesize.grounded", "--backend", "replay", "--agent", "nobody"],
    ],
)
def test_usage_errors_exit_2_on_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code = main(["step", *argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_real_scenario_fixtures_are_marked_refused_in_a_repository_and_caught_by_the_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentic_eval.workflow.lead_intel.fixtures import COMMITTED, SUITE

    repo = tmp_path / "repo"
    real = repo / "customer-fixtures" / SUITE
    real.mkdir(parents=True)
    shutil.copy(COMMITTED, real / "sources.json")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(repo / "customer-fixtures"))
    name = "synthesize.grounded"
    code, out = _step(capsys, "--scenario", name, "--record", "--recordings", str(repo / "rec"))
    assert code == 2 and "refusing to record" in out
    outside = tmp_path / "outside"
    code, _ = _step(capsys, "--scenario", name, "--record", "--recordings", str(outside))
    assert code == 0
    (written,) = (outside / SUITE / "reference").glob("*.json")
    assert '"external_fixtures"' in written.read_text(encoding="utf-8")
    assert main(["guard", "--repo", str(repo)]) == 0  # nothing tracked yet
    subprocess.run(["git", "add", "customer-fixtures"], cwd=repo, check=True)
    assert main(["guard", "--repo", str(repo)]) == 1
    assert f"customer-fixtures/{SUITE}/sources.json: lies under EVAL_FIXTURE_DIR" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_live_step_records_and_its_rejection_rounds_replay(
    provider: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The live path (SDK, wire, loop, tools, checks, services) against the local fake provider,
    answering as the learner: wrong at first, right once the feedback names the revenue."""
    from agentic_eval.backends.scripted import respond
    from agentic_eval.core import ModelRequest, ModelResponse
    from agentic_eval.testing import FakeProvider

    def learner(request: ModelRequest) -> ModelResponse:
        return respond(AGENTS["learner"], request)

    monkeypatch.setenv("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY", "k")
    rec = tmp_path / "rec"
    name = "synthesize.missing_revenue"
    with FakeProvider(learner) as fake:
        url = fake.anthropic_base_url if provider == "anthropic" else fake.openai_base_url
        live = ["--provider", provider, "--base-url", url, "--model", "fake-model"]
        monkeypatch.setattr(
            "sys.stdin", io.StringIO("reject\nthe revenue figure is invented\nquit\n")
        )
        code, out = _step(capsys, "--scenario", name, *live, "--interactive", "--record",
                          "--recordings", str(rec), "--agent", "fake")  # fmt: skip
    assert code == 0, out
    assert out.count("outcome: check_failed") == 1 and out.count("outcome: passed") == 1
    assert sorted(p.name for p in (rec / "lead_intelligence" / "fake").iterdir()) == [
        f"{name}#2.json",  # '#' sorts before '.'
        f"{name}.json",
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO("reject\nthe revenue figure is invented\nquit\n"))
    code, out = _step(capsys, "--scenario", name, "--backend", "replay", "--agent", "fake",
                      "--recordings", str(rec), "--interactive")  # fmt: skip
    assert code == 0 and "NOT reproduced" not in out and "outcome: passed" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("reject\nsomething else entirely\nquit\n"))
    code, out = _step(capsys, "--scenario", name, "--backend", "replay", "--agent", "fake",
                      "--recordings", str(rec), "--interactive")  # fmt: skip
    assert code == 1 and "NOT reproduced" in out  # a different reason is a different prompt


def test_a_store_failure_after_the_agent_ran_leaves_no_live_claim(wf: Workflow) -> None:
    from agentic_eval.store.db import StoreError

    def broken(*args: object, **kwargs: object) -> str:
        raise StoreError("cannot start a run in the store: disk full")

    wf.store.start_run = broken  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="disk full"):
        _run(wf, "synthesize.grounded", "reference")
    job = wf.jobs()[0]  # the newest
    assert all(c.status == "released" for c in wf.claims(job.id))
    assert {s.key: s.state for s in wf.steps(job.id)}["synthesize"] == "submitted"


def test_a_real_jobs_step_carries_the_real_data_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    from agentic_eval.corpus import scenario_from_job
    from agentic_eval.workflow.lead_intel.fixtures import COMMITTED, SUITE

    wf = Workflow(Store(f"sqlite:///{isolated_home / 'agentic-eval.db'}"))
    job_id = _run(wf, "synthesize.grounded", "reference").job_id
    assert scenario_from_job(wf, job_id).external_fixtures is None
    (tmp_path / "real" / SUITE).mkdir(parents=True)
    shutil.copy(COMMITTED, tmp_path / "real" / SUITE / "sources.json")
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "real"))
    assert scenario_from_job(wf, job_id).external_fixtures is not None


def test_fixtures_without_what_a_scenario_needs_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from agentic_eval.workflow.lead_intel.fixtures import COMMITTED, SUITE

    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    data["source_sets"][0]["id"] = "real-only"
    (tmp_path / SUITE).mkdir()
    (tmp_path / SUITE / "sources.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path))
    for argv in (["step", "--list"], ["step", "--scenario", "synthesize.grounded"], ["scenarios"]):
        assert main(argv) == 2  # broken fixtures: no verdict
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "need source set 'acme-widgets-a'" in err, err


def test_scenarios_replays_rounds_and_fails_on_a_recording_of_no_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    shutil.copytree(RECORDINGS / "lead_intelligence", rec / "lead_intelligence")
    assert main(["scenarios", "--recordings", str(rec), "--agent", "learner"]) == 0
    out = capsys.readouterr().out
    assert "synthesize.missing_revenue (rejection round 1) | learner" in out
    folder = rec / "lead_intelligence" / "learner"
    shutil.copy(folder / "synthesize.grounded.json", folder / "synthesize.renamed.json")
    assert main(["scenarios", "--recordings", str(rec), "--agent", "learner"]) == 1
    assert "synthesize.renamed | learner" in capsys.readouterr().out


def test_seeded_outputs_must_fit_their_step() -> None:
    from dataclasses import replace

    s = get_scenario("draft_offer.price_from_notes")
    with pytest.raises(ValueError, match="seeded research output is not a valid ResearchBrief"):
        replace(s, upstream={**s.upstream, "research": {"garbage": True}})
