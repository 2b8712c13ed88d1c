"""The corpus selection: human-decided steps, newest job first, judged by the first decision.

Built with the real workflow services on SQLite and PostgreSQL: a rejected-then-approved step
is a ``rejected`` case whose feedback is the first reason (the later approval was shaped by it),
an approved step is judged, and jobs an eval seeded or a workflow batch drove are left out
unless asked for.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentic_eval.corpus import corpus_cases
from agentic_eval.evaluation.scenario import seed_job
from agentic_eval.store import Store
from agentic_eval.workflow.records import Job, User
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow

START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


class Ticker:
    """A clock that moves one minute per reading, so every written time is distinct."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


class World:
    def __init__(self, store: Store) -> None:
        self.clock = Ticker()
        self.wf = Workflow(store, clock=self.clock)
        suffix = os.urandom(4).hex()
        self.template = f"corpus-test-{suffix}"
        self.wf.ensure_template(self.template, ["research", "write"], title="Corpus test")
        self.human: User = self.wf.ensure_user(f"olivia-{suffix}", "operator")
        self.bot: User = self.wf.ensure_user(f"bot-{suffix}", "agent")

    def job(self, origin: str = "real") -> Job:
        return self.wf.create_job(self.template, created_by=self.human.id, origin=origin)  # type: ignore[arg-type]

    def attempt(self, job: Job, step: str, decision: str, reason: str = "") -> None:
        claim = self.wf.claim_step(job.id, step, self.bot.id)
        attempt = self.wf.finish_attempt(claim.id, {"text": f"{step} by the bot"})
        self.wf.decide(attempt.id, self.human.id, decision, reason)  # type: ignore[arg-type]


@pytest.fixture()
def world(wf: Workflow) -> World:
    """On each store (conftest's ``wf``), with a clock of its own."""
    return World(wf.store)


def _history(w: World) -> dict[str, Job]:
    older = w.job()
    w.attempt(older, "research", "reject", "no source for the revenue figure")
    w.attempt(older, "research", "approve")
    w.attempt(older, "write", "approve")
    batch = w.job("workflow-batch")
    w.attempt(batch, "research", "approve")
    undecided = w.job()
    w.wf.claim_step(undecided.id, "research", w.bot.id)
    newer = w.job()
    w.attempt(newer, "research", "approve")
    return {"older": older, "batch": batch, "undecided": undecided, "newer": newer}


def _keys(cases: list, jobs: dict[str, Job]) -> list[tuple[str, str, str, tuple[str, ...]]]:  # type: ignore[type-arg]
    names = {j.id: n for n, j in jobs.items()}
    return [(names[c.job.id], c.step_key, c.verdict, c.feedback) for c in cases]


def test_newest_first_first_decision_and_its_reason(world: World) -> None:
    jobs = _history(world)
    cases = corpus_cases(world.wf, template=world.template)
    assert _keys(cases, jobs) == [
        ("newer", "research", "approved", ()),
        ("older", "research", "rejected", ("no source for the revenue figure",)),
        ("older", "write", "approved", ()),
    ]
    first = cases[1]
    assert first.decision.reason == "no source for the revenue figure"
    assert first.first_claimed_at == world.wf.first_claim(jobs["older"].id, "research").claimed_at  # type: ignore[union-attr]
    assert first.decision.operator_id == world.human.id


def test_eval_jobs_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    """On SQLite only: seeding a scenario adds the real workflow templates, which the session's
    shared PostgreSQL database must not get (other modules add them their way)."""
    store = Store(f"sqlite:///{tmp_path / 'seeded.db'}")
    world = World(store)
    jobs = _history(world)
    seeded = seed_job(world.wf, get_scenario("synthesize.missing_revenue"))
    everything = {c.job.id for c in corpus_cases(world.wf)}
    assert seeded not in everything and jobs["batch"].id not in everything
    assert jobs["newer"].id in everything
    batch = corpus_cases(world.wf, template=world.template, origins=["workflow-batch"])
    assert _keys(batch, jobs) == [("batch", "research", "approved", ())]
    store.close()


def test_limit_and_dates(world: World) -> None:
    jobs = _history(world)
    top = corpus_cases(world.wf, template=world.template, limit=2)
    assert [c.step_key for c in top] == ["research", "research"]
    newer = jobs["newer"].created_at
    assert {c.job.id for c in corpus_cases(world.wf, template=world.template, since=newer)} == {
        jobs["newer"].id
    }
    assert {c.job.id for c in corpus_cases(world.wf, template=world.template, until=newer)} == {
        jobs["older"].id
    }
    with pytest.raises(ValueError, match="limit must be at least 1"):
        corpus_cases(world.wf, limit=0)
    with pytest.raises(ValueError, match="must be before until"):
        corpus_cases(world.wf, since=newer, until=newer)
