"""``agentic-eval workflow run --operator NAME``: the operator REPL (issue 19, part 5,
acceptance 4), driven through a pseudo-terminal as a person would use it (pexpect), so the line
editing and history are readline's; and its session driven directly for what a terminal adds
nothing to."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pexpect
import pytest

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.cli.main import main
from agentic_eval.cli.workflow_repl import ReplSession
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.store import Store
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.service import Workflow

PROMPT = r"wf\[[^\]]*\]> "
PRICE = "the price of the automation package is not in my pricing notes"


def _store(home: Path) -> Store:
    return Store(f"sqlite:///{home / 'agentic-eval.db'}")


def _spawn(home: Path, *args: str) -> pexpect.spawn:
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(home), "TERM": "xterm", "PYTHONUNBUFFERED": "1"}
    child = pexpect.spawn(
        sys.executable, ["-m", "agentic_eval", "workflow", "run", *args],
        env=env, encoding="utf-8", timeout=60, dimensions=(50, 250),
    )  # fmt: skip
    child.expect(PROMPT)
    return child


def _say(child: pexpect.spawn, line: str) -> str:
    """Send a line, return what was printed before the next prompt."""
    child.sendline(line)
    child.expect(PROMPT)
    return str(child.before)


def test_an_operator_works_a_job_through_a_terminal(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["workflow", "users", "add", "olivia"]) == 0
    capsys.readouterr()
    child = _spawn(isolated_home, "--operator", "olivia", "--agent", "learner")
    created = _say(child, "new acme-widgets-a")
    job_id = created.split("job ", 1)[1].split()[0]
    assert "created from acme-widgets-a" in created
    assert "outcome: passed" in _say(child, "run")
    assert "approved by olivia: step research attempt 1" in _say(child, "a")
    _say(child, "run")
    _say(child, "a")
    shown = _say(child, "run")  # draft_offer: the learner invents a price until told
    assert "FAIL  assert_price_from_notes" in shown and "outcome: check_failed" in shown
    assert "rejected by olivia: step draft_offer attempt 1" in _say(child, f"r {PRICE}")
    again = _say(child, "rerun")
    assert f"feedback: {PRICE}" in again and "outcome: passed" in again
    assert "approved by olivia: step draft_offer attempt 2" in _say(child, "approve looks right")
    # readline: ^A goes to the start of the line and ^D deletes the stray x; the Up arrow
    # recalls the line before
    child.send("xstatus\x01\x04\r")
    child.expect(PROMPT)
    status = str(child.before)
    assert "(done, real)" in status and "draft_offer      approved   2 attempt(s)" in status
    child.send("\x1b[A\r")
    child.expect(PROMPT)
    assert "(done, real)" in str(child.before)
    history = _say(child, "hist")
    assert "olivia               step draft_offer submitted -> pending: " + PRICE in history
    assert "error: 's' is ambiguous: status, show, submit" in _say(child, "s")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    wf = Workflow(_store(isolated_home))
    job = wf.job(job_id)
    olivia = wf.user_named("olivia")
    assert (job.state, job.origin, job.created_by) == ("done", "real", olivia.id)
    decisions = wf.decisions(job_id)
    assert [(d.step_key, d.decision, d.reason) for d in decisions] == [
        ("research", "approve", ""),
        ("synthesize", "approve", ""),
        ("draft_offer", "reject", PRICE),
        ("draft_offer", "approve", "looks right"),
    ]
    assert {d.operator_id for d in decisions} == {olivia.id}
    assert (isolated_home / "workflow-run-history").read_text().count("rerun") == 1


def test_an_unknown_operator_or_a_non_operator_is_refused_in_one_line(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["workflow", "run", "--operator", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "agentic-eval: error: no user 'nobody': add the operator first (agentic-eval workflow "
        "users add nobody)\n"
    )
    assert main(["workflow", "users", "add", "rita", "--role", "worker"]) == 0
    capsys.readouterr()
    assert main(["workflow", "run", "--operator", "rita"]) == 2
    assert (
        capsys.readouterr().err == "agentic-eval: error: user rita is a worker, not an operator\n"
    )


def test_an_operators_own_submission_is_theirs_and_bad_ones_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wf = Workflow(Store(f"sqlite:///{tmp_path / 'wf.db'}"))
    olivia = wf.ensure_user("olivia", "operator")
    backend = ScriptedBackend("reference", AGENTS["reference"])
    s = ReplSession(wf, olivia, backend, RunSettings("scripted:reference"))

    async def go(*lines: str) -> str:
        capsys.readouterr()
        for line in lines:
            await s.execute(line)
        return capsys.readouterr().out

    assert "no job open" in asyncio.run(go("run"))
    asyncio.run(go("new acme-widgets-a"))
    brief = {"company_name": "Acme Widgets Ltd", "company_number": "04417321", "sources": []}
    (tmp_path / "brief.json").write_text(json.dumps(brief))
    bad = asyncio.run(go("submit '{\"company_name\": 3}'", "submit @nope.json", "submit {"))
    assert "error: not a ResearchBrief: " in bad and "error: cannot read nope.json" in bad
    assert "error: not JSON" in bad
    out = asyncio.run(go(f"submit @{tmp_path / 'brief.json'}", "a"))
    assert "submitted by olivia: step research attempt 1" in out
    assert "approved by olivia: step research attempt 1" in out
    assert s.job is not None
    (attempt,) = wf.attempts(s.job.id, "research")
    assert wf.claims(s.job.id)[0].claimant_id == olivia.id and attempt.output == brief
    assert "error: no attempt to decide on" in asyncio.run(go("a"))
    assert "error: unknown command 'dance'" in asyncio.run(go("dance"))
    assert "reject REASON (r)" in asyncio.run(go("help r"))
    assert asyncio.run(go("quit")) == "" and s.done


def test_the_role_choices_are_the_workflows_roles() -> None:
    from agentic_eval.cli.workflow_people import ROLES
    from agentic_eval.workflow.records import ROLES as WORKFLOW_ROLES

    assert ROLES == WORKFLOW_ROLES


def test_step_job_alone_lists_the_jobs_a_step_can_be_replayed_from(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["step", "--job"]) == 0
    assert "no job has a claimed step yet" in capsys.readouterr().out
    wf = Workflow(_store(isolated_home))
    olivia = wf.ensure_user("olivia", "operator")
    s = ReplSession(wf, olivia, ScriptedBackend("reference", AGENTS["reference"]),
                    RunSettings("scripted:reference"))  # fmt: skip
    asyncio.run(s.execute("new acme-widgets-a"))
    asyncio.run(s.execute("run"))
    unclaimed = wf.create_job(s.job.template_key, created_by=olivia.id)  # type: ignore[union-attr]
    capsys.readouterr()
    assert main(["step", "--job"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{s.job.id}  lead_intelligence  real  in_progress  research (")  # type: ignore[union-attr]
    assert unclaimed.id not in line
