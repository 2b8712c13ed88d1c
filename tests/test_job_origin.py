"""Jobs carry their origin, so an eval's own jobs never pass for the corpus of human decisions.

A scenario seeds a job with an upstream approval and, for a rejection round, a rejection: both
are decisions, made by the eval. Before jobs had an origin, ``jobs(decided=True)`` returned them
beside the real ones. Now a seeded job is ``scenario``, a job made through the service is
``real`` unless told otherwise, and ``origins=HUMAN_ORIGINS`` selects the jobs a human decided.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from agentic_eval.evaluation.scenario import seed_job
from agentic_eval.store import Store
from agentic_eval.store.db import _upgrade
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.records import HUMAN_ORIGINS, JOB_ORIGINS
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow

SEEDED = "synthesize.missing_revenue"  # a scenario with seeded upstream approvals


@pytest.fixture()
def sqlite_wf(tmp_path: Path) -> Iterator[Workflow]:
    """A store of its own: seeding a scenario adds the real workflow templates, which the
    session's shared PostgreSQL database must not get (other modules add them their way)."""
    store = Store(f"sqlite:///{tmp_path / 'seeded.db'}")
    yield Workflow(store)
    store.close()


def _template(wf: Workflow) -> str:
    key = f"origin-test-{os.urandom(4).hex()}"
    wf.ensure_template(key, ["research", "write"], title="Origin test")
    return key


def _real_decided_job(wf: Workflow) -> str:
    """A job made through the service and decided by a human operator."""
    suffix = os.urandom(4).hex()
    human = wf.ensure_user(f"olivia-{suffix}", "operator")
    bot = wf.ensure_user(f"bot-{suffix}", "agent")
    job = wf.create_job(_template(wf), created_by=human.id, requirements={"company": "Acme"})
    claim = wf.claim_step(job.id, "research", bot.id)
    attempt = wf.finish_attempt(claim.id, {"summary": "Acme Ltd"})
    wf.decide(attempt.id, human.id, "reject", "the revenue figure has no source")
    return job.id


def test_a_seeded_job_is_a_scenario_job_and_a_made_one_is_real(sqlite_wf: Workflow) -> None:
    wf = sqlite_wf
    seeded = seed_job(wf, get_scenario(SEEDED))
    real = _real_decided_job(wf)
    assert wf.job(seeded).origin == "scenario"
    assert wf.job(real).origin == "real"
    decided = {j.id for j in wf.jobs(decided=True)}
    assert {seeded, real} <= decided  # both have decisions: the seeded one by the eval
    human = {j.id for j in wf.jobs(decided=True, origins=HUMAN_ORIGINS)}
    assert real in human and seeded not in human
    assert seeded in {j.id for j in wf.jobs(origins=["scenario"])}
    assert all(j.origin in HUMAN_ORIGINS for j in wf.jobs(origins=HUMAN_ORIGINS))


@pytest.mark.parametrize("origin", JOB_ORIGINS)
def test_every_origin_is_kept(wf: Workflow, origin: str) -> None:
    user = wf.ensure_user(f"u-{os.urandom(4).hex()}", "operator")
    job = wf.create_job(_template(wf), created_by=user.id, origin=origin)  # type: ignore[arg-type]
    assert wf.job(job.id).origin == origin
    assert [j.id for j in wf.jobs(origins=[origin]) if j.id == job.id] == [job.id]  # type: ignore[list-item]


def test_an_unknown_origin_is_refused_in_one_line(wf: Workflow) -> None:
    user = wf.ensure_user(f"u-{os.urandom(4).hex()}", "operator")
    with pytest.raises(WorkflowError, match=r"^unknown job origin 'synthetic' \(one of real, "):
        wf.create_job(_template(wf), created_by=user.id, origin="synthetic")  # type: ignore[arg-type]


def test_the_upgrade_marks_jobs_seeded_before_origins_existed(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'old.db'}")
    wf = Workflow(store)
    seeded = seed_job(wf, get_scenario(SEEDED))
    real = _real_decided_job(wf)
    with store.engine.begin() as conn:  # back to a store from before this revision
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(_migrations()))
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0008")
        columns = [r[1] for r in conn.execute(text("PRAGMA table_info(wf_job)"))]
        assert "origin" not in columns
    with store.engine.begin() as conn:
        _upgrade(conn)
    store.close()
    again = Workflow(Store(f"sqlite:///{tmp_path / 'old.db'}"))
    assert again.job(seeded).origin == "scenario"
    assert again.job(real).origin == "real"


def _migrations() -> Path:
    import agentic_eval.store.db as db

    return Path(db.__file__).parent / "migrations"
