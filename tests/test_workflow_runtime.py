"""The governed workflow runtime, on SQLite and on the local PostgreSQL: legal transitions, a
transition row for every state change, claims, attempts kept by time, operator decisions, and
the domain errors (which change nothing) for every illegal move."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, inspect, select, text
from sqlalchemy.exc import IntegrityError

from agentic_eval.store import Store, StoreError
from agentic_eval.store.db import head_revision
from agentic_eval.store.workflow_tables import WORKFLOW_TABLES, WfClaim
from agentic_eval.workflow import (
    Attempt,
    Claim,
    ClaimConflict,
    IllegalTransition,
    Job,
    NotAnOperator,
    NotFound,
    User,
    Workflow,
    WorkflowError,
)

STEPS = ("research", "synthesize", "draft_offer")
TEMPLATE = "lead_intelligence"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class Ticker:
    """A clock that moves one second per reading, so every written time is distinct."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@dataclass
class World:
    wf: Workflow
    store: Store
    clock: Ticker
    operator: User
    agent: User


def _open_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    if kind == "sqlite":
        return Store(f"sqlite:///{tmp_path / 'db' / 'wf.db'}")
    return Store(request.getfixturevalue("pg_url"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    store = _open_store(request.param, tmp_path, request)
    clock = Ticker()
    wf = Workflow(store, clock=clock)
    # user names are unique per database, and the PostgreSQL database lives for the session
    suffix = os.urandom(4).hex()
    operator = wf.ensure_user(f"olivia-{suffix}", "operator")
    agent = wf.ensure_user(f"bot-{suffix}", "agent")
    wf.ensure_template(TEMPLATE, STEPS, title="Lead intelligence")
    yield World(wf, store, clock, operator, agent)
    store.close()


def _job(w: World, **inputs: Any) -> Job:
    return w.wf.create_job(
        TEMPLATE, created_by=w.operator.id, requirements={"company": "Acme"}, inputs=inputs
    )


def _submit(w: World, job: Job, step: str, output: dict[str, Any]) -> Attempt:
    claim = w.wf.claim_step(job.id, step, w.agent.id)
    return w.wf.finish_attempt(claim.id, output)


def _approve(w: World, job: Job, step: str, output: dict[str, Any]) -> Attempt:
    attempt = _submit(w, job, step, output)
    w.wf.decide(attempt.id, w.operator.id, "approve")
    return attempt


def _snapshot(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every workflow table."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with store.engine.connect() as conn:
        for model in WORKFLOW_TABLES:
            table = model.__table__
            rows = conn.execute(select(table).order_by(*table.primary_key.columns))
            out[table.name] = [tuple(r) for r in rows]
    return out


# -- the happy path ---------------------------------------------------------------------------


def test_a_job_runs_through_every_step_to_done(world: World) -> None:
    w = world
    job = _job(w, lead="Acme Widgets Ltd")
    assert (job.state, job.inputs, job.requirements) == (
        "open",
        {"lead": "Acme Widgets Ltd"},
        {"company": "Acme"},
    )
    assert job.title == "Lead intelligence" and job.created_by == w.operator.id
    assert [(s.key, s.position, s.state) for s in w.wf.steps(job.id)] == [
        (key, i, "pending") for i, key in enumerate(STEPS)
    ]
    for key in STEPS:
        _approve(w, job, key, {"step": key})

    assert w.wf.job(job.id).state == "done"
    assert {s.state for s in w.wf.steps(job.id)} == {"approved"}

    expected: list[tuple[str | None, str, str, str]] = [(None, "", "open", w.operator.id)]
    for i, key in enumerate(STEPS):
        expected.append((key, "pending", "claimed", w.agent.id))
        if i == 0:
            expected.append((None, "open", "in_progress", w.agent.id))
        expected.append((key, "claimed", "submitted", w.agent.id))
        expected.append((key, "submitted", "approved", w.operator.id))
    expected.append((None, "in_progress", "done", w.operator.id))
    transitions = w.wf.transitions(job.id)
    assert [(t.step_key, t.from_state, t.to_state, t.actor_id) for t in transitions] == expected
    times = [t.at for t in transitions]
    assert all(t.tzinfo is UTC for t in times) and times == sorted(times)
    assert times[-1] == w.clock.now  # the last approval and the job's done share its moment

    claims = w.wf.claims(job.id)
    assert [c.step_key for c in claims] == list(STEPS)
    assert {c.status for c in claims} == {"released"}
    assert all(c.released_at is not None and c.released_at > c.claimed_at for c in claims)
    attempts = w.wf.attempts(job.id)
    assert [(a.step_key, a.number, a.status, a.feedback) for a in attempts] == [
        (key, 1, "approved", []) for key in STEPS
    ]
    assert [a.claim_id for a in attempts] == [c.id for c in claims]
    assert [c.attempt_id for c in claims] == [a.id for a in attempts]
    decisions = w.wf.decisions(job.id)
    assert [(d.attempt_id, d.decision, d.operator_id) for d in decisions] == [
        (a.id, "approve", w.operator.id) for a in attempts
    ]
    assert w.wf.outputs_as_of(job.id, w.clock.now) == {key: {"step": key} for key in STEPS}
    first = w.wf.first_claim(job.id, "synthesize")
    assert first is not None and first.id == claims[1].id


def test_users_and_templates_are_idempotent_and_never_silently_redefined(world: World) -> None:
    w = world
    assert w.wf.ensure_user(w.operator.name, "operator") == w.operator
    assert w.wf.user(w.agent.id) == w.agent
    with pytest.raises(WorkflowError, match=r"exists as agent, not operator"):
        w.wf.ensure_user(w.agent.name, "operator")
    with pytest.raises(WorkflowError, match=r"unknown role 'boss'"):
        w.wf.ensure_user("someone", "boss")
    again = w.wf.ensure_template(TEMPLATE, list(STEPS))
    assert again.steps == STEPS and again == w.wf.template(TEMPLATE)
    with pytest.raises(WorkflowError, match=r"steps cannot change"):
        w.wf.ensure_template(TEMPLATE, ["research", "draft_offer"])
    with pytest.raises(WorkflowError, match=r"repeats a step key"):
        w.wf.ensure_template("twice", ["a", "a"])


def test_jobs_are_listed_newest_first_and_filter_by_template_and_decision(world: World) -> None:
    w = world
    other = f"other-{os.urandom(3).hex()}"
    w.wf.ensure_template(other, ["only"])
    undecided = _job(w)
    decided = _job(w)
    _approve(w, decided, "research", {"x": 1})
    elsewhere = w.wf.create_job(other, created_by=w.operator.id)
    listed = [j.id for j in w.wf.jobs()]
    assert listed.index(elsewhere.id) < listed.index(decided.id) < listed.index(undecided.id)
    assert [j.id for j in w.wf.jobs(template_key=other)] == [elsewhere.id]
    ours = {undecided.id, decided.id, elsewhere.id}
    assert {j.id for j in w.wf.jobs(decided=True)} & ours == {decided.id}
    assert {j.id for j in w.wf.jobs(decided=False)} & ours == {undecided.id, elsewhere.id}


# -- rejections and failures ------------------------------------------------------------------


def test_a_rejection_reason_is_the_next_attempts_feedback_and_reasons_accumulate(
    world: World,
) -> None:
    w = world
    job = _job(w)
    _approve(w, job, "research", {"sources": ["a"]})
    first = _submit(w, job, "synthesize", {"revenue": "£9m"})
    w.wf.decide(first.id, w.operator.id, "reject", "the revenue figure was wrong last time")
    assert w.wf.steps(job.id)[1].state == "pending"
    second = _submit(w, job, "synthesize", {"revenue": "£8m"})
    assert second.feedback == ["the revenue figure was wrong last time"]
    w.wf.decide(second.id, w.operator.id, "reject", "no source cites a revenue")
    third = w.wf.claim_step(job.id, "synthesize", w.agent.id)
    reasons = ["the revenue figure was wrong last time", "no source cites a revenue"]
    assert w.wf.feedback(job.id, "synthesize") == reasons
    attempts = w.wf.attempts(job.id, "synthesize")
    assert [(a.number, a.status, a.feedback) for a in attempts] == [
        (1, "rejected", []),
        (2, "rejected", reasons[:1]),
        (3, "running", reasons),
    ]
    assert attempts[2].id == third.attempt_id
    # the rejected attempts keep their outputs, and the decisions keep their reasons
    assert [a.output for a in attempts[:2]] == [{"revenue": "£9m"}, {"revenue": "£8m"}]
    assert [d.reason for d in w.wf.decisions(job.id) if d.decision == "reject"] == reasons
    assert w.wf.feedback(job.id, "research") == []


def test_an_attempt_without_output_fails_and_frees_the_step_without_feedback(
    world: World,
) -> None:
    w = world
    job = _job(w)
    claim = w.wf.claim_step(job.id, "research", w.agent.id)
    broken = w.wf.finish_attempt(claim.id, None, note="exceeded max turns")
    assert (broken.status, broken.output, broken.note) == ("failed", None, "exceeded max turns")
    assert w.wf.steps(job.id)[0].state == "pending"
    assert w.wf.claims(job.id)[0].status == "released"
    last = w.wf.transitions(job.id)[-1]
    assert (last.step_key, last.from_state, last.to_state) == ("research", "claimed", "pending")
    retry = w.wf.claim_step(job.id, "research", w.agent.id)
    (_, again) = w.wf.attempts(job.id, "research")
    assert (again.id, again.number, again.feedback) == (retry.attempt_id, 2, [])


# -- illegal moves: the named error, and nothing changed ---------------------------------------


@dataclass
class Scene:
    """Job A: research approved, synthesize claimed (attempt running). Job B: research
    submitted, its claim released."""

    a: Job
    b: Job
    research_a: Attempt
    synth_claim: Claim
    research_b: Attempt
    research_b_claim: str


def _scene(w: World) -> Scene:
    a = _job(w)
    research_a = _approve(w, a, "research", {"ok": True})
    synth_claim = w.wf.claim_step(a.id, "synthesize", w.agent.id)
    b = _job(w)
    research_b = _submit(w, b, "research", {"ok": True})
    return Scene(a, b, research_a, synth_claim, research_b, research_b.claim_id)


Illegal = Callable[[World, Scene], object]
ILLEGAL: dict[str, tuple[Illegal, type[Exception], str]] = {
    "approve an unfinished step": (
        lambda w, s: w.wf.decide(s.synth_claim.attempt_id, w.operator.id, "approve"),
        IllegalTransition,
        "step synthesize of job {a} is claimed, not submitted: cannot approve",
    ),
    "reject an unfinished step": (
        lambda w, s: w.wf.decide(s.synth_claim.attempt_id, w.operator.id, "reject", "no"),
        IllegalTransition,
        "step synthesize of job {a} is claimed, not submitted: cannot reject",
    ),
    "approve twice": (
        lambda w, s: w.wf.decide(s.research_a.id, w.operator.id, "approve"),
        IllegalTransition,
        "attempt 1 of step research of job {a} is approved, not submitted: cannot approve",
    ),
    "reject after approval": (
        lambda w, s: w.wf.decide(s.research_a.id, w.operator.id, "reject", "changed my mind"),
        IllegalTransition,
        "attempt 1 of step research of job {a} is approved, not submitted: cannot reject",
    ),
    "decide as an agent": (
        lambda w, s: w.wf.decide(s.research_b.id, w.agent.id, "approve"),
        NotAnOperator,
        "user {agent} (agent) cannot decide: only operators decide",
    ),
    "reject without a reason": (
        lambda w, s: w.wf.decide(s.research_b.id, w.operator.id, "reject"),
        IllegalTransition,
        "rejecting attempt 1 of step research of job {b} needs a reason",
    ),
    "reject with a blank reason": (
        lambda w, s: w.wf.decide(s.research_b.id, w.operator.id, "reject", "  \n"),
        IllegalTransition,
        "rejecting attempt 1 of step research of job {b} needs a reason",
    ),
    "an unknown decision": (
        lambda w, s: w.wf.decide(s.research_b.id, w.operator.id, "maybe"),
        WorkflowError,
        "unknown decision 'maybe': approve or reject",
    ),
    "claim past a claimed predecessor": (
        lambda w, s: w.wf.claim_step(s.a.id, "draft_offer", w.agent.id),
        IllegalTransition,
        "step draft_offer of job {a} cannot be claimed: step synthesize is claimed, not approved",
    ),
    "claim past a submitted predecessor": (
        lambda w, s: w.wf.claim_step(s.b.id, "synthesize", w.agent.id),
        IllegalTransition,
        "step synthesize of job {b} cannot be claimed: step research is submitted, not approved",
    ),
    "a second live claim": (
        lambda w, s: w.wf.claim_step(s.a.id, "synthesize", w.operator.id),
        ClaimConflict,
        "step synthesize of job {a} already has a live claim {claim}",
    ),
    "claim a submitted step": (
        lambda w, s: w.wf.claim_step(s.b.id, "research", w.agent.id),
        IllegalTransition,
        "step research of job {b} is submitted, not pending: cannot claim",
    ),
    "claim an approved step": (
        lambda w, s: w.wf.claim_step(s.a.id, "research", w.agent.id),
        IllegalTransition,
        "step research of job {a} is approved, not pending: cannot claim",
    ),
    "finish a released claim": (
        lambda w, s: w.wf.finish_attempt(s.research_b_claim, {"again": True}),
        IllegalTransition,
        "claim {b_claim} of step research of job {b} is released: cannot finish its attempt",
    ),
    "an output that is not JSON": (
        lambda w, s: w.wf.finish_attempt(s.synth_claim.id, {"when": datetime.now(UTC)}),
        WorkflowError,
        "the attempt's output is not storable as JSON",
    ),
    "cancel as an agent": (
        lambda w, s: w.wf.cancel_job(s.a.id, w.agent.id, "stop"),
        NotAnOperator,
        "user {agent} (agent) cannot cancel job {a}: only operators cancel jobs",
    ),
    "reopen a step with a later one claimed": (
        lambda w, s: w.wf.reopen_step(s.a.id, "research", w.operator.id, "redo"),
        IllegalTransition,
        "step research of job {a} cannot be reopened: the later step synthesize is claimed",
    ),
    "claim on an unknown job": (
        lambda w, s: w.wf.claim_step("no-such-job", "research", w.agent.id),
        NotFound,
        "no job no-such-job",
    ),
    "claim an unknown step": (
        lambda w, s: w.wf.claim_step(s.a.id, "polish", w.agent.id),
        NotFound,
        "job {a} has no step polish",
    ),
    "claim as an unknown user": (
        lambda w, s: w.wf.claim_step(s.b.id, "research", "nobody"),
        NotFound,
        "no user nobody",
    ),
    "finish an unknown claim": (
        lambda w, s: w.wf.finish_attempt("no-such-claim", {}),
        NotFound,
        "no claim no-such-claim",
    ),
    "decide on an unknown attempt": (
        lambda w, s: w.wf.decide("no-such-attempt", w.operator.id, "approve"),
        NotFound,
        "no attempt no-such-attempt",
    ),
    "decide as an unknown operator": (
        lambda w, s: w.wf.decide(s.research_b.id, "nobody", "approve"),
        NotFound,
        "no user nobody",
    ),
    "a job of an unknown template": (
        lambda w, s: w.wf.create_job("no-such-template", created_by=w.operator.id),
        NotFound,
        "no template no-such-template",
    ),
    "a job by an unknown user": (
        lambda w, s: w.wf.create_job(TEMPLATE, created_by="nobody"),
        NotFound,
        "no user nobody",
    ),
}


@pytest.mark.parametrize("case", list(ILLEGAL))
def test_an_illegal_move_raises_its_named_error_and_changes_nothing(
    world: World, case: str
) -> None:
    w = world
    scene = _scene(w)
    action, error, message = ILLEGAL[case]
    before = _snapshot(w.store)
    with pytest.raises(error) as info:
        action(w, scene)
    assert type(info.value) is error  # the named error itself, not merely a relative
    expected = message.format(
        a=scene.a.id,
        b=scene.b.id,
        agent=w.agent.name,
        claim=scene.synth_claim.id,
        b_claim=scene.research_b_claim,
    )
    assert expected in str(info.value) and "\n" not in str(info.value)
    assert _snapshot(w.store) == before


def test_reads_of_unknown_ids_raise_not_found(world: World) -> None:
    w = world
    job = _job(w)
    reads: list[Callable[[], object]] = [
        lambda: w.wf.job("nope"),
        lambda: w.wf.steps("nope"),
        lambda: w.wf.transitions("nope"),
        lambda: w.wf.claims("nope"),
        lambda: w.wf.attempts("nope"),
        lambda: w.wf.attempts(job.id, "polish"),
        lambda: w.wf.decisions("nope"),
        lambda: w.wf.feedback(job.id, "polish"),
        lambda: w.wf.feedback("nope", "research"),
        lambda: w.wf.outputs_as_of("nope", w.clock.now),
        lambda: w.wf.first_claim(job.id, "polish"),
        lambda: w.wf.user("nope"),
        lambda: w.wf.template("nope"),
        lambda: w.wf.attempt("nope"),
    ]
    for read in reads:
        with pytest.raises(NotFound):
            read()
    assert w.wf.first_claim(job.id, "research") is None


def test_the_database_itself_refuses_a_second_live_claim(world: World) -> None:
    w = world
    job = _job(w)
    live = w.wf.claim_step(job.id, "research", w.agent.id)

    def row(status: str) -> dict[str, Any]:
        return {
            "id": os.urandom(8).hex(),
            "job_id": job.id,
            "step_key": "research",
            "attempt_id": os.urandom(8).hex(),
            "claimant_id": w.operator.id,
            "claimed_at": w.clock(),
            "released_at": None,
            "status": status,
        }

    with pytest.raises(IntegrityError), w.store.engine.begin() as conn:
        conn.execute(insert(WfClaim).values(**row("live")))
    with w.store.engine.begin() as conn:  # the index is partial: released claims may pile up
        conn.execute(insert(WfClaim).values(**row("released")))
    assert [c.id for c in w.wf.claims(job.id) if c.status == "live"] == [live.id]


def test_concurrent_claimers_of_one_step_have_exactly_one_winner(world: World) -> None:
    w = world
    job = _job(w)
    contenders = [w.wf.ensure_user(f"{w.agent.name}-{i}", "worker") for i in range(4)]
    gate = threading.Barrier(len(contenders))
    won: list[Claim] = []
    lost: list[Exception] = []

    def claim(user: User) -> None:
        mine = Workflow(w.store, clock=w.clock)
        gate.wait()
        try:
            won.append(mine.claim_step(job.id, "research", user.id))
        except (ClaimConflict, StoreError) as exc:
            lost.append(exc)

    threads = [threading.Thread(target=claim, args=(u,)) for u in contenders]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(won) == 1 and len(lost) == len(contenders) - 1
    assert all(isinstance(e, ClaimConflict) for e in lost), lost
    assert [c.id for c in w.wf.claims(job.id)] == [won[0].id]
    assert len(w.wf.attempts(job.id)) == 1


# -- time ---------------------------------------------------------------------------------------


def test_outputs_as_of_answer_with_what_was_approved_at_that_moment(world: World) -> None:
    w = world
    job = _job(w)
    _approve(w, job, "research", {"sources": 2})
    before_t1 = w.clock.now
    first = _approve(w, job, "synthesize", {"revenue": "£9m"})
    t1 = w.clock.now  # the approval of the first synthesis
    assert w.wf.decisions(job.id)[-1].at == t1

    w.wf.reopen_step(job.id, "synthesize", w.operator.id, "the revenue figure was wrong")
    reopened = w.clock.now
    rejected = _submit(w, job, "synthesize", {"revenue": "£8m"})
    w.wf.decide(rejected.id, w.operator.id, "reject", "still invented")
    replacement = _approve(w, job, "synthesize", {"revenue": None})
    t2 = w.clock.now

    assert w.wf.outputs_as_of(job.id, before_t1) == {"research": {"sources": 2}}
    assert w.wf.outputs_as_of(job.id, t1)["synthesize"] == {"revenue": "£9m"}
    assert w.wf.outputs_as_of(job.id, reopened)["synthesize"] == {"revenue": "£9m"}
    assert w.wf.outputs_as_of(job.id, t2 - timedelta(seconds=1))["synthesize"] == {"revenue": "£9m"}
    assert w.wf.outputs_as_of(job.id, t2)["synthesize"] == {"revenue": None}
    # a moment given in another zone is the same moment
    elsewhere = t1.astimezone(timezone(timedelta(hours=-5)))
    assert w.wf.outputs_as_of(job.id, elsewhere)["synthesize"] == {"revenue": "£9m"}
    with pytest.raises(WorkflowError, match="naive datetime"):
        w.wf.outputs_as_of(job.id, t2.replace(tzinfo=None))

    # the replaced attempt is kept as it was; the reopening reason became feedback
    statuses = [(a.id, a.status) for a in w.wf.attempts(job.id, "synthesize")]
    assert statuses == [
        (first.id, "approved"),
        (rejected.id, "rejected"),
        (replacement.id, "approved"),
    ]
    assert w.wf.feedback(job.id, "synthesize") == ["the revenue figure was wrong", "still invented"]
    assert rejected.feedback == ["the revenue figure was wrong"]


def test_reopening_the_last_step_of_a_done_job_puts_it_back_in_progress(world: World) -> None:
    w = world
    job = _job(w)
    for key in STEPS:
        _approve(w, job, key, {"v": 1})
    assert w.wf.job(job.id).state == "done"
    with pytest.raises(IllegalTransition, match="later step draft_offer is approved"):
        w.wf.reopen_step(job.id, "synthesize", w.operator.id, "redo")
    with pytest.raises(NotAnOperator):
        w.wf.reopen_step(job.id, "draft_offer", w.agent.id, "redo")
    step = w.wf.reopen_step(job.id, "draft_offer", w.operator.id, "price not in the notes")
    assert step.state == "pending" and w.wf.job(job.id).state == "in_progress"
    tail = [(t.step_key, t.from_state, t.to_state) for t in w.wf.transitions(job.id)[-2:]]
    assert tail == [("draft_offer", "approved", "pending"), (None, "done", "in_progress")]
    _approve(w, job, "draft_offer", {"v": 2})
    assert w.wf.job(job.id).state == "done"


def test_times_come_from_the_clock_and_read_back_aware_in_utc(world: World) -> None:
    w = world
    job = _job(w)
    assert job.created_at == w.clock.now and job.created_at.tzinfo is UTC
    assert w.wf.job(job.id).created_at == w.clock.now
    naive = Workflow(w.store, clock=lambda: datetime(2026, 1, 1))
    with pytest.raises(WorkflowError, match="naive datetime"):
        naive.create_job(TEMPLATE, created_by=w.operator.id)
    offset = timezone(timedelta(hours=2))
    zoned = Workflow(w.store, clock=lambda: datetime(2026, 5, 1, 12, 0, tzinfo=offset))
    other = zoned.create_job(TEMPLATE, created_by=w.operator.id)
    assert w.wf.job(other.id).created_at == datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    assert w.wf.job(other.id).created_at.tzinfo is UTC


def test_cancelling_releases_the_live_claim_and_ends_the_job(world: World) -> None:
    w = world
    job = _job(w)
    claim = w.wf.claim_step(job.id, "research", w.agent.id)
    with pytest.raises(IllegalTransition, match="needs a reason"):
        w.wf.cancel_job(job.id, w.operator.id, "")
    cancelled = w.wf.cancel_job(job.id, w.operator.id, "lead went cold")
    assert cancelled.state == "cancelled"
    (released,) = w.wf.claims(job.id)
    assert (released.id, released.status) == (claim.id, "released")
    (attempt,) = w.wf.attempts(job.id)
    assert (attempt.status, attempt.note) == ("failed", "job cancelled: lead went cold")
    tail = [(t.step_key, t.from_state, t.to_state) for t in w.wf.transitions(job.id)[-2:]]
    assert tail == [("research", "claimed", "pending"), (None, "in_progress", "cancelled")]
    before = _snapshot(w.store)
    with pytest.raises(IllegalTransition, match=f"job {job.id} is cancelled: cannot claim"):
        w.wf.claim_step(job.id, "research", w.agent.id)
    with pytest.raises(IllegalTransition, match=f"job {job.id} is cancelled: cannot cancel"):
        w.wf.cancel_job(job.id, w.operator.id, "again")
    with pytest.raises(IllegalTransition):
        w.wf.finish_attempt(claim.id, {"late": True})
    assert _snapshot(w.store) == before


# -- the migration ------------------------------------------------------------------------------


def _issue3_database(url: str) -> None:
    """A database as the release before the workflow left it: at 0003, with a run, a sample and
    a history entry."""
    from agentic_eval.store.db import _upgrade  # pyright: ignore[reportPrivateUsage]

    s = Store(url)
    with s.engine.begin() as conn:
        _upgrade(conn, "0003")
        conn.execute(
            text(
                "INSERT INTO eval_run (id, domain, agent, agent_kind, backend, mode, model, "
                "approval_mode, started_at, status, samples, passed, check_failed, error, "
                "transient, hard_gate_failures, package_version, planned_samples) VALUES ('r1', "
                "'retail_ops', 'reference', 'scripted', 'scripted', 'replay', 'm', 'enforce', "
                "'2026-11-29 10:00:00', 'finished', 1, 1, 0, 0, 0, 0, '0.1.0', 1)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO eval_sample (run_id, case_id, sample, attempt, outcome, "
                "failure_reason, failure_where, checks, hard_gate_failed, unapproved_attempts, "
                "unapproved_executions, turns, tool_calls, input_tokens, output_tokens, "
                "duration_ms) VALUES ('r1', 'match-001', 0, 1, 'passed', '', '', '[]', false, "
                "0, 0, 3, 2, 0, 0, 1.5)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO history_entry (run_id, suite, recorded_at, entry, sha256) VALUES "
                "('r1', 'retail_ops', '2026-11-29 10:01:00', '{}', :sha)"
            ),
            {"sha": "0" * 64},
        )
    s.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_0003_database_is_upgraded_in_place_and_keeps_its_rows(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
    else:
        import psycopg

        base = request.getfixturevalue("pg_url")
        name = f"agentic_eval_wf_upgrade_{os.getpid()}"
        with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]
            c.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        url = base.rsplit("/", 1)[0] + f"/{name}"
    _issue3_database(url)
    store = Store(url)
    with store.engine.connect() as conn:
        assert not {t.__tablename__ for t in WORKFLOW_TABLES} & set(inspect(conn).get_table_names())
    wf = Workflow(store)  # migrates
    with store.engine.connect() as conn:
        tables = set(inspect(conn).get_table_names())
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        indexes = {i["name"]: i for i in inspect(conn).get_indexes("wf_claim")}
    assert {t.__tablename__ for t in WORKFLOW_TABLES} <= tables
    assert version == head_revision() == "0012"
    assert indexes["uq_wf_claim_live_step"]["unique"]
    (sample,) = store.samples("r1")
    assert (sample.case_id, sample.outcome, sample.duration_ms) == ("match-001", "passed", 1.5)
    (entry,) = store.history_entries("retail_ops")
    assert (entry.run_id, entry.entry) == ("r1", "{}")
    # and the upgraded database runs the workflow
    op = wf.ensure_user("olivia", "operator")
    wf.ensure_template(TEMPLATE, STEPS)
    job = wf.create_job(TEMPLATE, created_by=op.id)
    claim = wf.claim_step(job.id, "research", op.id)
    attempt = wf.finish_attempt(claim.id, {"ok": True})
    wf.decide(attempt.id, op.id, "approve")
    assert [s.state for s in wf.steps(job.id)] == ["approved", "pending", "pending"]
    store.close()


def test_the_migration_creates_the_workflow_tables_the_models_declare(world: World) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from agentic_eval.store.models import Base

    with world.store.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert [d for d in diffs if "wf_" in repr(d)] == []
