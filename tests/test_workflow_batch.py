"""``agentic-eval workflow batch`` (the seed's wf_batch) and the Operator plug point (issue 19,
parts 3 and 4, acceptance 3).

Whole jobs are driven through the real services with a policy as the operator: an attempt whose
checks failed is rejected with a reason naming them, every other one approved, up to the step's
limit. The jobs it leaves are a corpus (origin ``workflow-batch``) that ``batch --corpus``
replays: the approved cases judged, the rejected ones run and not judged.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.cli.main import main
from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.evaluation.driving import drive_job
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.store import Store
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.operators import CheckPolicy, OperatorDecision, Recorded, Review
from agentic_eval.workflow.records import Job
from agentic_eval.workflow.scenarios import get_job_fixture
from agentic_eval.workflow.service import Workflow


def _store(home: Path) -> Store:
    return Store(f"sqlite:///{home / 'agentic-eval.db'}")


def _out(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out


def test_a_hallucinating_agent_leaves_jobs_rejected_for_the_check_that_failed(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["workflow", "batch", "--fixture", "acme-widgets-b", "--runs", "20"]
    assert main([*args, "--agent", "hallucinating", "--no-history"]) == 1
    out = _out(capsys)
    table = out.split("samples:")[0]
    assert "research               20       20        0      0" in table
    assert "synthesize             60        0       60      0" in table
    assert "  rejected 60x: failed assert_facts_grounded: fact 'employees' cites" in table
    assert "draft_offer             0        0        0      0" in table
    assert "gate: FAIL (failure rate 20/20 = 100.0% > 1%)" in out
    wf = Workflow(_store(isolated_home))
    jobs = wf.jobs(origins=("workflow-batch",))
    assert len(jobs) == 20 and {j.state for j in jobs} == {"cancelled"}
    for job in jobs:
        decisions = wf.decisions(job.id)
        assert [(d.step_key, d.decision) for d in decisions] == [
            ("research", "approve"),
            *[("synthesize", "reject")] * 3,
        ]
        assert all(wf.user(d.operator_id).name == "policy-operator" for d in decisions)
        assert "assert_revenue_not_on_file" in decisions[1].reason
        attempts = wf.attempts(job.id, "synthesize")
        assert [a.feedback for a in attempts][1:] == [
            [decisions[1].reason],
            [decisions[1].reason, decisions[2].reason],
        ]  # each rejection's reason was the next attempt's feedback

    # the demo corpus: the approved research is judged, the rejected synthesize is not
    assert main(["batch", "--corpus", "--origin", "workflow-batch", "--no-history"]) == 0
    out = _out(capsys)
    assert "corpus: 40 case(s) run: 20 approved (judged, 20 samples), 20 rejected (run, not " in out
    assert "samples: 20\n" in out and "gate: PASS" in out


def test_a_learner_is_approved_once_the_feedback_names_the_price(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["workflow", "batch", "--fixture", "acme-widgets-a", "--runs", "2", "--no-history"]
    assert main([*args, "--agent", "learner"]) == 0
    out = _out(capsys)
    assert "draft_offer             4        2        2      0" in out
    assert "  rejected 2x: failed assert_price_from_notes: £14,000" in out
    wf = Workflow(_store(isolated_home))
    assert {j.state for j in wf.jobs(origins=("workflow-batch",))} == {"done"}


def test_a_workflow_batch_is_a_run_that_resumes_and_refuses_what_it_cannot_do(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["workflow", "batch", "--list"]) == 0
    listed = _out(capsys).splitlines()
    assert [line.split()[0] for line in listed] == [
        "acme-widgets-a", "acme-widgets-b", "acme-widgets-c", "acme-widgets-d",
    ]  # fmt: skip
    for args, says in [
        (["--fixture", "acme-widgets-z"], "unknown job fixture 'acme-widgets-z'"),
        ([], "name the --fixture"),
        (["--fixture", "acme-widgets-a", "--agent", "nobody"], "no scripted agent 'nobody'"),
        (["--fixture", "acme-widgets-a", "--model", "m"], "apply to live batches"),
    ]:
        assert main(["workflow", "batch", *args]) == 2, args
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, (args, err)
    store = _store(isolated_home)
    assert store.runs() == []  # refused before a run was opened


def _review(outcome: Outcome, checks: tuple[CheckResult, ...]) -> Review:
    job = Job("j", "t", "", "open", {}, {}, "u", None, "real")  # type: ignore[arg-type]
    return Review(job, "synthesize", 1, {}, outcome, checks, ())


def test_the_policy_names_every_failed_check_and_approves_the_rest() -> None:
    policy = CheckPolicy()
    ok = asyncio.run(policy(_review(Outcome(kind="passed"), (CheckResult(name="a", passed=True),))))
    assert ok == OperatorDecision.approve()
    failed = (
        CheckResult(name="grounded", passed=False, message="fact x cites y"),
        CheckResult(name="fine", passed=True),
        CheckResult(name="price", passed=False),
    )
    no = asyncio.run(policy(_review(Outcome(kind="check_failed", reason="r"), failed)))
    assert no == OperatorDecision.reject("failed grounded: fact x cites y; price")
    broke = asyncio.run(policy(_review(Outcome(kind="error", reason="max turns"), ())))
    assert broke == OperatorDecision.reject("error: max turns")
    with pytest.raises(ValueError, match="a rejection needs a reason"):
        OperatorDecision.reject("  ")
    with pytest.raises(ValueError, match="approves or rejects"):
        OperatorDecision("maybe")  # type: ignore[arg-type]


def test_a_recorded_operator_decides_a_whole_job_and_says_when_it_runs_out(
    tmp_path: Path,
) -> None:
    wf = Workflow(Store(f"sqlite:///{tmp_path / 'wf.db'}"))
    fixture = get_job_fixture("acme-widgets-a")
    backend = ScriptedBackend("hallucinating", AGENTS["hallucinating"])
    settings = RunSettings("scripted:hallucinating")
    says = [OperatorDecision.approve(), OperatorDecision.reject("no invented head counts")]
    operator = Recorded("olivia", says + [OperatorDecision.approve()] * 2)
    driven = asyncio.run(drive_job(wf, fixture, backend, settings, operator, max_attempts=2))
    assert driven.sample.result.outcome.kind == "passed"  # the human let the rest through
    assert [c.message for c in driven.sample.result.checks] == [
        "approved on attempt 1", "approved on attempt 2", "approved on attempt 1",
    ]  # fmt: skip
    assert wf.job(driven.job_id).state == "done"
    assert [a.feedback for a in wf.attempts(driven.job_id, "synthesize")] == [
        [], ["no invented head counts"],
    ]  # fmt: skip
    short = Recorded("olivia", [OperatorDecision.approve()])
    with pytest.raises(LookupError, match="recorded 1 decision"):
        asyncio.run(drive_job(wf, fixture, backend, settings, short))
