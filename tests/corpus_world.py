"""A real job's history, built with the real services, for the corpus tests.

The lead-intelligence workflow, a job of origin ``real`` created by a human operator:
- research, attempt 1: the reference agent (run through ``attempt_step``, so what it retrieved is
  kept), approved;
- synthesize, attempt 1: the reference agent, rejected by the operator with a reason (or, with
  ``synthesize="approve"``, approved, and the history ends there);
- research reopened and approved again with a different brief (an upstream output that changed
  after synthesize was first claimed);
- the company's About page changed ("Leeds since 2002" -> "Bradford since 2002") in the
  fixtures, and synthesize, attempt 2, run on it and approved.

A replay of synthesize must serve what attempt 1 saw: the first brief, "Leeds", and, as the
first decision rejected it, its reason as feedback.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.evaluation.scenario import attempt_step
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.lead_intel.fixtures import COMMITTED, SUITE
from agentic_eval.workflow.lead_intel.scenarios import WEBSITE
from agentic_eval.workflow.records import Job
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow

OLD_PLACE, NEW_PLACE = "Leeds since 2002", "Bradford since 2002"
REASON = "the registered office is missing"


def reference() -> ScriptedBackend:
    return ScriptedBackend("reference", AGENTS["reference"])


def move_the_company(fixture_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on the fixtures say the company is in Bradford (an external fixture file)."""
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    for source_set in data["source_sets"]:
        for page in source_set["pages"]:
            page["text"] = page["text"].replace(OLD_PLACE, NEW_PLACE)
    target = fixture_dir / SUITE / COMMITTED.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(fixture_dir))


@dataclass
class History:
    job: Job
    first_brief: dict[str, Any]
    second_brief: dict[str, Any]
    first_attempt: str
    rejection: str
    approval: str


def build_history(
    wf: Workflow,
    fixture_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    origin: str = "real",
    synthesize: str = "reject",
) -> History:
    """The job history the module docstring describes (after a rejection, the fixtures end
    moved to Bradford)."""
    s = get_scenario("synthesize.grounded")
    flow = s.workflow
    suffix = os.urandom(3).hex()
    human = wf.ensure_user(f"olivia-{suffix}", "operator")
    worker = wf.ensure_user(f"rita-{suffix}", "worker")
    wf.ensure_template(flow.key, flow.step_keys(), title=flow.title)
    job = wf.create_job(
        flow.key, created_by=human.id, requirements=s.requirements, inputs=s.inputs,
        title=f"Acme {suffix}", origin=origin,  # type: ignore[arg-type]
    )  # fmt: skip

    def agent(step: str) -> str:
        run = asyncio.run(
            attempt_step(
                wf, job.id, step, workflow=flow, backend=reference(),
                settings=RunSettings("scripted:reference"), case_id=f"job.{job.id}.{step}",
            )
        )  # fmt: skip
        return run.attempt_id

    researched = agent("research")
    wf.decide(researched, human.id, "approve")
    first_brief = dict(wf.attempt(researched).output or {})
    second_brief = {**first_brief, "sources": [*first_brief["sources"], WEBSITE + "#team"]}
    first_attempt = agent("synthesize")
    if synthesize == "approve":
        approval = wf.decide(first_attempt, human.id, "approve").id
        return History(wf.job(job.id), first_brief, first_brief, first_attempt, "", approval)
    rejection = wf.decide(first_attempt, human.id, "reject", REASON).id
    wf.reopen_step(job.id, "research", human.id, "add the team page")
    claim = wf.claim_step(job.id, "research", worker.id)
    wf.decide(wf.finish_attempt(claim.id, second_brief).id, human.id, "approve")
    move_the_company(fixture_dir, monkeypatch)
    second_attempt = agent("synthesize")
    approval = wf.decide(second_attempt, human.id, "approve").id
    return History(wf.job(job.id), first_brief, second_brief, first_attempt, rejection, approval)
