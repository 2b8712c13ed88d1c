"""No workflow claim outlives its process (issue 17 §5): a claim is a lease its holder renews;
SIGINT/SIGTERM release it as interrupted; once a dead holder's lease expires, the next claim of
the step (or ``agentic-eval workflow recover``) releases it and its attempt is abandoned; a
claim still being renewed is never taken. On SQLite and on the local PostgreSQL, in process and
against real ``agentic-eval step`` processes signalled mid-attempt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError

from agentic_eval.backends.scripted import respond
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.process import this_process
from agentic_eval.store import Store
from agentic_eval.store.workflow_tables import SYSTEM_USER_ID, WfClaim
from agentic_eval.testing import FakeProvider
from agentic_eval.workflow import (
    LEASE_ENV,
    ClaimConflict,
    IllegalTransition,
    Job,
    NotAnOperator,
    User,
    Workflow,
    WorkflowError,
    lease_seconds,
)
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.rows import utc

STEPS = ("research", "synthesize")
TEMPLATE = "lead_intelligence_leases"
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
SCENARIO = "synthesize.grounded"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Db:
    kind: str
    store: Store
    url: str | None
    """What the child processes are given as AGENTIC_EVAL_DATABASE_URL (None: the home's
    SQLite file)."""
    home: Path


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, isolated_home: Path) -> Iterator[Db]:
    if request.param == "sqlite":
        store = Store(f"sqlite:///{isolated_home / 'agentic-eval.db'}")
        yield Db(request.param, store, None, isolated_home)
        store.close()
        return
    # a database of its own: the step processes seed the real lead_intelligence template, and
    # recover acts on every job, neither of which may leak into the session's shared database
    import psycopg

    base = request.getfixturevalue("pg_url")
    name = f"agentic_eval_leases_{os.getpid()}_{os.urandom(3).hex()}"
    admin = "host=127.0.0.1 user=postgres dbname=test"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    url = base.rsplit("/", 1)[0] + f"/{name}"
    store = Store(url)
    yield Db(request.param, store, url, isolated_home)
    store.close()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def _users(wf: Workflow) -> tuple[User, User, User]:
    suffix = os.urandom(4).hex()  # names are unique per database; PostgreSQL's is shared
    return (
        wf.ensure_user(f"olivia-{suffix}", "operator"),
        wf.ensure_user(f"bot-{suffix}", "agent"),
        wf.ensure_user(f"rival-{suffix}", "agent"),
    )


def _job(wf: Workflow, operator: User) -> Job:
    wf.ensure_template(TEMPLATE, STEPS)
    return wf.create_job(TEMPLATE, created_by=operator.id)


# -- in process ---------------------------------------------------------------------------------


def test_an_expired_claim_is_released_by_the_next_claim_and_its_attempt_abandoned(
    db: Db,
) -> None:
    clock = Clock()
    holder = Workflow(db.store, clock=clock, lease=120, heartbeat=False)  # it died: no renewal
    rival = Workflow(db.store, clock=clock, lease=120, heartbeat=False)
    operator, bot, other = _users(holder)
    job = _job(holder, operator)
    dead = holder.claim_step(job.id, "research", bot.id)
    assert dead.lease_expires_at == START + timedelta(seconds=120)
    assert dead.holder == this_process() and dead.heartbeat_at == START

    clock.now = START + timedelta(seconds=119)  # not expired yet: the claim stands
    with pytest.raises(ClaimConflict, match="lease has not expired"):
        rival.claim_step(job.id, "research", other.id)

    clock.now = START + timedelta(seconds=121)
    fresh = rival.claim_step(job.id, "research", other.id)
    old, new = rival.attempts(job.id, "research")
    assert (old.id, old.status, old.output) == (dead.attempt_id, "abandoned", None)
    assert old.finished_at == clock.now
    assert (new.id, new.number, new.status) == (fresh.attempt_id, 2, "running")
    claims = {c.id: c for c in rival.claims(job.id)}
    assert claims[dead.id].status == "released" and claims[fresh.id].status == "live"
    release = next(t for t in rival.transitions(job.id) if t.to_state == "pending")
    assert (release.step_key, release.from_state, release.actor_id) == (
        "research",
        "claimed",
        SYSTEM_USER_ID,
    )
    assert rival.user(SYSTEM_USER_ID).role == "system"
    assert bot.name in release.reason and dead.holder in release.reason
    assert f"lease expired at {dead.lease_expires_at.isoformat()}" in release.reason
    assert release.reason not in rival.feedback(job.id, "research")  # no operator feedback
    # the dead holder, back, cannot finish what it no longer holds; the message says why
    with pytest.raises(IllegalTransition, match="lease expired at"):
        holder.finish_attempt(dead.id, {"late": True})


def test_the_holder_may_finish_after_expiry_while_nobody_released_it(db: Db) -> None:
    clock = Clock()
    wf = Workflow(db.store, clock=clock, lease=10, heartbeat=False)
    operator, bot, _ = _users(wf)
    job = _job(wf, operator)
    claim = wf.claim_step(job.id, "research", bot.id)
    clock.now = START + timedelta(minutes=5)
    assert [c.id for c in wf.expired_claims() if c.job_id == job.id] == [claim.id]
    assert wf.finish_attempt(claim.id, {"ok": True}).status == "submitted"
    assert all(c.job_id != job.id for c in wf.expired_claims())


def test_recover_releases_every_expired_claim_and_only_those(db: Db) -> None:
    clock = Clock()
    wf = Workflow(db.store, clock=clock, lease=60, heartbeat=False)
    operator, bot, other = _users(wf)
    stale_job, fresh_job = _job(wf, operator), _job(wf, operator)
    stale = wf.claim_step(stale_job.id, "research", bot.id)
    clock.now = START + timedelta(seconds=50)
    wf.claim_step(fresh_job.id, "research", other.id)
    clock.now = START + timedelta(seconds=61)  # stale expired at 60, fresh expires at 110

    with pytest.raises(NotAnOperator):
        wf.recover(bot.id)
    released = [r for r in wf.recover(operator.id) if r.job_id in (stale_job.id, fresh_job.id)]
    assert [(r.claim_id, r.attempt_status, r.claimant) for r in released] == [
        (stale.id, "abandoned", bot.name)
    ]
    (r,) = released
    assert (r.released_by, r.released_at, r.lease_expires_at) == (
        operator.name,
        clock.now,
        stale.lease_expires_at,
    )
    last = wf.transitions(stale_job.id)[-1]
    assert (last.actor_id, last.to_state, last.reason) == (operator.id, "pending", r.reason)
    assert [c.status for c in wf.claims(fresh_job.id)] == ["live"]
    assert [s.state for s in wf.steps(stale_job.id)] == ["pending", "pending"]
    assert all(r.job_id != stale_job.id for r in wf.recover())  # nothing left to release


def test_a_heartbeating_claim_is_renewed_and_never_taken(db: Db) -> None:
    holder = Workflow(db.store, lease=0.6)  # renewed every 0.2 s
    rival = Workflow(db.store, lease=0.6, heartbeat=False)
    operator, bot, other = _users(holder)
    job = _job(holder, operator)
    claim = holder.claim_step(job.id, "research", bot.id)
    time.sleep(2.0)  # more than three leases
    assert holder.heartbeat.beats >= 3 and holder.heartbeat.errors == []
    with pytest.raises(ClaimConflict):
        rival.claim_step(job.id, "research", other.id)
    assert all(r.job_id != job.id for r in rival.recover())
    (now,) = holder.claims(job.id)
    assert now.lease_expires_at is not None and claim.lease_expires_at is not None
    assert now.lease_expires_at > claim.lease_expires_at + timedelta(seconds=1)
    assert holder.finish_attempt(claim.id, {"ok": True}).status == "submitted"
    assert holder.heartbeat.held() == ()
    holder.heartbeat.stop()  # no renewal in flight when the store closes


def test_a_claim_released_by_someone_else_stops_being_renewed(db: Db) -> None:
    holder = Workflow(db.store, lease=0.3)
    operator, bot, _ = _users(holder)
    job = _job(holder, operator)
    claim = holder.claim_step(job.id, "research", bot.id)
    Workflow(db.store, heartbeat=False).cancel_job(job.id, operator.id, "lead went cold")
    _wait_for(lambda: holder.heartbeat.lost, timeout=10)
    assert holder.heartbeat.lost == [claim.id] and holder.heartbeat.held() == ()
    (after,) = holder.claims(job.id)
    assert after.status == "released"
    holder.heartbeat.stop()


def test_interrupt_releases_the_held_claims_and_a_later_clean_up_is_a_no_op(db: Db) -> None:
    wf = Workflow(db.store, heartbeat=False)
    operator, bot, other = _users(wf)
    job, elsewhere = _job(wf, operator), _job(wf, operator)
    claim = wf.claim_step(job.id, "research", bot.id)
    kept = wf.claim_step(elsewhere.id, "research", bot.id)
    (released,) = wf.interrupt("SIGTERM received by a test", [claim.id, "not-held"])
    assert (released.claim_id, released.attempt_status, released.released_by) == (
        claim.id,
        "interrupted",
        bot.name,
    )
    again = wf.finish_attempt(claim.id, None, note="interrupted: CancelledError")
    assert (again.status, again.note) == ("interrupted", released.reason)
    with pytest.raises(IllegalTransition, match="interrupted"):
        wf.finish_attempt(claim.id, {"too": "late"})
    last = wf.transitions(job.id)[-1]
    assert (last.actor_id, last.from_state, last.to_state) == (bot.id, "claimed", "pending")
    assert last.reason == "attempt 1 interrupted: SIGTERM received by a test"
    assert [c.status for c in wf.claims(elsewhere.id)] == ["live"]  # not among those named
    assert [r.claim_id for r in wf.interrupt("again")] == [kept.id]
    assert wf.interrupt("and again") == []  # nothing held any more
    rival = Workflow(db.store, heartbeat=False)
    assert rival.claim_step(job.id, "research", other.id).status == "live"


def test_reopening_releases_an_expired_claim_on_a_later_step(db: Db) -> None:
    clock = Clock()
    wf = Workflow(db.store, clock=clock, lease=30, heartbeat=False)
    operator, bot, _ = _users(wf)
    job = _job(wf, operator)
    first = wf.finish_attempt(wf.claim_step(job.id, "research", bot.id).id, {"ok": True})
    wf.decide(first.id, operator.id, "approve")
    wf.claim_step(job.id, "synthesize", bot.id)
    with pytest.raises(IllegalTransition, match="synthesize is claimed"):
        wf.reopen_step(job.id, "research", operator.id, "redo it")
    clock.now = START + timedelta(minutes=1)
    assert wf.reopen_step(job.id, "research", operator.id, "redo it").state == "pending"
    assert [a.status for a in wf.attempts(job.id, "synthesize")] == ["abandoned"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", 120.0),
        ("2.5", 2.5),
        ("abc", None),
        ("0", None),
        ("nan", None),
        ("0.001", None),  # shorter than a renewal can be relied on
        ("1e18", None),  # would overflow the date arithmetic (it was exit 70)
        ("9999999999999", None),
        ("604800", 604800.0),
    ],
)
def test_the_lease_comes_from_the_environment(
    value: str, expected: float | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(LEASE_ENV, value)
    if expected is None:
        with pytest.raises(WorkflowError, match=LEASE_ENV):
            lease_seconds()
        return
    assert lease_seconds() == expected
    wf = Workflow(Store(f"sqlite:///{tmp_path / 'l.db'}"))
    assert wf.lease == timedelta(seconds=expected)
    assert wf.heartbeat.interval == pytest.approx(expected / 3)
    assert lease_seconds(7) == 7.0  # a parameter wins over the environment


_AT = "'2026-11-01 09:00:00'"
_BEFORE_LEASES = (
    f"INSERT INTO wf_user (id, name, role, created_at) VALUES ('u1', 'olivia', 'operator', {_AT})",
    f"INSERT INTO wf_user (id, name, role, created_at) VALUES ('u2', 'bot', 'agent', {_AT})",
    f"INSERT INTO wf_template (key, title, steps, created_at) VALUES ('t', 't', '[\"r\"]', {_AT})",
    "INSERT INTO wf_job (id, template_key, title, state, requirements, inputs, created_by, "
    f"created_at, revision) VALUES ('j1', 't', 't', 'in_progress', '{{}}', '{{}}', 'u1', {_AT}, 1)",
    "INSERT INTO wf_step (job_id, key, position, state, created_at) VALUES "
    f"('j1', 'r', 0, 'claimed', {_AT})",
    "INSERT INTO wf_claim (id, job_id, step_key, attempt_id, claimant_id, claimed_at, status) "
    f"VALUES ('c1', 'j1', 'r', 'a1', 'u2', {_AT}, 'live')",
    "INSERT INTO wf_attempt (id, job_id, step_key, number, claim_id, started_at, note, feedback, "
    f"status) VALUES ('a1', 'j1', 'r', 1, 'c1', {_AT}, '', '[]', 'running')",
)
"""A 0004 database as the hostile probe left it: a live claim whose process died."""


def test_a_0004_database_gains_leases_and_its_stranded_live_claim_is_recoverable(db: Db) -> None:
    from agentic_eval.store.db import _upgrade  # pyright: ignore[reportPrivateUsage]

    with db.store.engine.begin() as conn:
        _upgrade(conn, "0004")
        for statement in _BEFORE_LEASES:
            conn.execute(text(statement))
    wf = Workflow(db.store)  # migrates to 0005
    (claim,) = wf.claims("j1")
    assert (claim.status, claim.lease_expires_at, claim.holder) == ("live", None, None)
    assert [c.id for c in wf.expired_claims()] == ["c1"]
    (released,) = wf.recover()
    assert (released.claim_id, released.claimant) == ("c1", "bot")
    assert released.released_by == wf.user(SYSTEM_USER_ID).name == "agentic-eval"
    assert "claimed before leases" in released.reason
    assert wf.attempts("j1")[0].status == "abandoned"
    assert wf.claim_step("j1", "r", "u2").status == "live"
    with db.store.engine.connect() as conn:
        indexes = {i["name"]: i for i in inspect(conn).get_indexes("wf_claim")}
    assert indexes["uq_wf_claim_live_step"]["unique"]
    second = _BEFORE_LEASES[5].replace("'c1'", "'c9'").replace("'a1'", "'a9'")
    with pytest.raises(IntegrityError), db.store.engine.begin() as conn:  # the index holds
        conn.execute(text(second))


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["step", "--scenario", SCENARIO], "abc", f"{LEASE_ENV}='abc' is not a number"),
        (
            ["workflow", "recover"],
            "-1",
            f"{LEASE_ENV}='-1' must be a number of seconds from 1 to 604800",
        ),
        (["workflow", "recover", "--as", "nobody"], None, "no user named 'nobody'"),
        (["workflow", "recover", "--as", " "], None, "--as is empty"),
    ],
)
def test_workflow_commands_refuse_a_bad_lease_or_operator_in_one_line(
    args: list[str],
    env: str | None,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentic_eval.cli.main import main

    if env is not None:
        monkeypatch.setenv(LEASE_ENV, env)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# -- real processes ----------------------------------------------------------------------------


class Gate:
    """A fake model that answers as the reference agent, but holds its first answer until
    :attr:`release` is set: the attempt is mid-flight, its claim held, for as long as we like."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()
        self._first = True

    def __call__(self, request: ModelRequest) -> ModelResponse:
        if self._first:
            self._first = False
            self.arrived.set()
            self.release.wait(60)
        return respond(AGENTS["reference"], request)


@dataclass
class Child:
    proc: subprocess.Popen[str]
    gate: Gate
    db: Db

    def wait_mid_attempt(self) -> Row[Any]:
        """Block until the child's agent is waiting on the model; its live claim."""
        deadline = time.monotonic() + 60
        while not self.gate.arrived.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                _, err = self.proc.communicate(timeout=30)
                pytest.fail(f"step never reached the model (exit {self.proc.returncode}): {err}")
        claim = self.claim()
        assert claim is not None and claim.status == "live"
        return claim

    def claim(self) -> Row[Any] | None:
        """The newest ``wf_claim`` row this child made (its holder names the child's pid): the
        agent's, after the seeded upstream steps' claims."""
        table = WfClaim.__table__
        with self.db.store.engine.connect() as conn:
            stmt = select(table).where(table.c.holder.like(f"% pid {self.proc.pid}"))
            return conn.execute(stmt.order_by(table.c.seq.desc())).first()

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


def _env(db: Db, lease: float | None) -> dict[str, str]:
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(db.home), "ANTHROPIC_API_KEY": "k"}
    env.pop(LEASE_ENV, None)
    env.pop("AGENTIC_EVAL_DATABASE_URL", None)
    if db.url is not None:
        env["AGENTIC_EVAL_DATABASE_URL"] = db.url
    if lease is not None:
        env[LEASE_ENV] = str(lease)
    return env


@pytest.fixture
def child(db: Db, request: pytest.FixtureRequest) -> Iterator[Child]:
    """A live ``agentic-eval step`` (SQLite or PostgreSQL) against a gated fake model, with the
    lease in seconds given by indirect parametrisation (default: the 120 s default)."""
    lease: float | None = getattr(request, "param", None)
    gate = Gate()
    with FakeProvider(gate) as fake:
        cmd = [sys.executable, "-m", "agentic_eval", "step", "--scenario", SCENARIO,
               "--provider", "anthropic", "--base-url", fake.anthropic_base_url,
               "--model", "fake-model", "--agent", "fake", "--retries", "0",
               "--timeout", "60"]  # fmt: skip
        proc = subprocess.Popen(
            cmd, env=_env(db, lease), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            yield Child(proc, gate, db)
        finally:
            gate.release.set()
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=30)


def _transitions_of(wf: Workflow, claim: Row[Any]) -> list[Any]:
    return [t for t in wf.transitions(claim.job_id) if t.step_key == claim.step_key]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signalled_step_releases_its_claim_as_interrupted(
    child: Child, db: Db, sig: signal.Signals, code: int
) -> None:
    held = child.wait_mid_attempt()
    wf = Workflow(db.store, heartbeat=False)
    _, _, rival = _users(wf)
    with pytest.raises(ClaimConflict):  # the child holds it (default lease: 120 s)
        wf.claim_step(held.job_id, held.step_key, rival.id)
    child.proc.send_signal(sig)
    returncode, _, err = child.finish(timeout=30)
    assert returncode == code, err
    assert f"released the claim of step {held.step_key} of job {held.job_id}" in err
    assert "Traceback" not in err
    (attempt,) = [a for a in wf.attempts(held.job_id, held.step_key) if a.id == held.attempt_id]
    assert (attempt.status, attempt.output) == ("interrupted", None)
    last = _transitions_of(wf, held)[-1]
    assert (last.from_state, last.to_state, last.actor_id) == (
        "claimed",
        "pending",
        held.claimant_id,
    )
    assert f"interrupted: {sig.name} received by agentic-eval step" in last.reason
    assert f"pid {child.proc.pid}" in last.reason
    again = wf.claim_step(held.job_id, held.step_key, rival.id)  # at once: no lease to wait out
    assert again.status == "live"


@pytest.mark.parametrize("child", [2.0], indirect=True)
def test_a_killed_steps_claim_is_taken_once_its_lease_expires(child: Child, db: Db) -> None:
    first = child.wait_mid_attempt()
    assert first.lease_expires_at is not None
    renewed = _wait_for(lambda: _renewed_past(child, first))
    child.proc.kill()  # SIGKILL: no handler runs; only the lease can free the step
    assert child.finish(timeout=30)[0] == -signal.SIGKILL
    wf = Workflow(db.store, heartbeat=False)
    _, _, rival = _users(wf)
    with pytest.raises(ClaimConflict):  # the last renewal still stands
        wf.claim_step(renewed.job_id, renewed.step_key, rival.id)
    assert renewed.lease_expires_at is not None
    expiry = utc(renewed.lease_expires_at)
    _sleep_until(expiry)
    claim = wf.claim_step(renewed.job_id, renewed.step_key, rival.id)
    attempts = {a.id: a for a in wf.attempts(renewed.job_id, renewed.step_key)}
    assert attempts[renewed.attempt_id].status == "abandoned"
    assert attempts[claim.attempt_id].status == "running"
    release = _transitions_of(wf, renewed)[-2]  # then the rival's claim
    assert (release.from_state, release.to_state, release.actor_id) == (
        "claimed",
        "pending",
        SYSTEM_USER_ID,
    )
    assert wf.user(renewed.claimant_id).name in release.reason
    assert f"lease expired at {expiry.isoformat()}" in release.reason
    assert f"pid {child.proc.pid}" in release.reason


@pytest.mark.parametrize("child", [2.0], indirect=True)
def test_workflow_recover_releases_a_killed_steps_expired_claim(child: Child, db: Db) -> None:
    held = child.wait_mid_attempt()
    child.proc.kill()
    child.finish(timeout=30)
    last = child.claim()
    assert last is not None and last.lease_expires_at is not None
    expiry = utc(last.lease_expires_at)
    env = _env(db, None)
    cmd = [sys.executable, "-m", "agentic_eval", "workflow", "recover"]
    _sleep_until(expiry)
    dry = subprocess.run(
        [*cmd, "--dry-run"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert dry.returncode == 0 and f"expired: claim {held.id}" in dry.stdout, dry.stderr
    wf = Workflow(db.store, heartbeat=False)
    assert [c.status for c in wf.claims(held.job_id) if c.id == held.id] == ["live"]  # dry run
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if held.id in x]
    claimant = wf.user(held.claimant_id).name
    assert line.startswith(f"released: claim {held.id} of step {held.step_key}")
    assert f"claimed by {claimant}, held by " in line and f"pid {child.proc.pid}" in line
    assert f"lease expired at {expiry.isoformat()}" in line
    (attempt,) = [a for a in wf.attempts(held.job_id, held.step_key) if a.id == held.attempt_id]
    assert attempt.status == "abandoned"
    last_t = _transitions_of(wf, held)[-1]
    assert (last_t.to_state, last_t.actor_id) == ("pending", SYSTEM_USER_ID)
    assert {s.key: s.state for s in wf.steps(held.job_id)}[held.step_key] == "pending"


@pytest.mark.parametrize("child", [1.0], indirect=True)
def test_a_live_steps_heartbeat_keeps_its_claim(child: Child, db: Db) -> None:
    held = child.wait_mid_attempt()
    time.sleep(3.5)  # three and a half leases, the agent still waiting on the model
    wf = Workflow(db.store, heartbeat=False)
    _, _, rival = _users(wf)
    with pytest.raises(ClaimConflict):
        wf.claim_step(held.job_id, held.step_key, rival.id)
    assert all(r.claim_id != held.id for r in wf.recover())
    now = child.claim()
    assert now is not None and now.heartbeat_at is not None and held.heartbeat_at is not None
    assert utc(now.heartbeat_at) - utc(held.heartbeat_at) >= timedelta(seconds=2)  # renewed
    child.gate.release.set()
    returncode, out, err = child.finish()
    assert returncode == 0, err
    assert "outcome: passed" in out
    (attempt,) = [a for a in wf.attempts(held.job_id, held.step_key) if a.id == held.attempt_id]
    assert attempt.status == "submitted"
    assert [t.to_state for t in _transitions_of(wf, held)][-2:] == ["claimed", "submitted"]


def test_sigterm_at_the_operator_prompt_exits_143(isolated_home: Path) -> None:
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(isolated_home)}
    env.pop("AGENTIC_EVAL_DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_eval", "step", "--scenario", SCENARIO, "--interactive"],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    seen = bytearray()
    try:
        assert proc.stdout is not None
        reader = threading.Thread(target=_drain, args=(proc.stdout.fileno(), seen), daemon=True)
        reader.start()
        _wait_for(lambda: b"operator decision" in seen or None)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert b"SIGTERM: stopping step" in err


# -- helpers -----------------------------------------------------------------------------------


def _drain(fd: int, into: bytearray) -> None:
    while chunk := os.read(fd, 4096):
        into.extend(chunk)


def _wait_for(probe: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.05)
    pytest.fail("timed out waiting")


def _renewed_past(child: Child, first: Row[Any]) -> Row[Any] | None:
    now = child.claim()
    assert first.lease_expires_at is not None
    if now is None or now.lease_expires_at is None:
        return None
    return now if utc(now.lease_expires_at) > utc(first.lease_expires_at) else None


def _sleep_until(moment: datetime) -> None:
    delay = (moment - datetime.now(UTC)).total_seconds() + 0.2
    assert delay < 30
    if delay > 0:
        time.sleep(delay)


def test_sigterm_during_scenarios_releases_the_claim_in_flight(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`scenarios` is a workflow command too: a signal while an agent holds a claim releases it
    as interrupted and exits 143, as `step` and `run` do."""
    import asyncio
    import os
    import signal

    from agentic_eval.cli.main import main
    from agentic_eval.recordings.replay import ReplayBackend
    from agentic_eval.store.db import Store
    from agentic_eval.workflow.service import Workflow

    original = ReplayBackend.complete
    calls = {"n": 0}

    async def slow(self: ReplayBackend, request: object, call: object) -> object:
        calls["n"] += 1
        if calls["n"] == 3:  # well inside some agent's claimed attempt
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        return await original(self, request, call)  # type: ignore[arg-type]

    monkeypatch.setattr(ReplayBackend, "complete", slow)
    code = main(["scenarios"])
    err = capsys.readouterr().err
    assert code == 143, err
    assert "SIGTERM: stopping scenarios" in err and "interrupted" in err
    wf = Workflow(Store())
    jobs = wf.jobs()
    assert jobs and not [c for j in jobs for c in wf.claims(j.id) if c.status == "live"]
    notes = [a.note for j in jobs for a in wf.attempts(j.id)]
    assert any("SIGTERM" in n for n in notes), notes


def test_an_attempt_cancelled_in_flight_is_interrupted_not_failed() -> None:
    """A Ctrl-C that reaches the agent's attempt before any handler (asyncio cancels the main
    task) ends the attempt `interrupted` and frees the step, as a handled signal does."""
    import asyncio

    from agentic_eval.backends.scripted import ScriptedBackend
    from agentic_eval.evaluation.scenario import run_scenario
    from agentic_eval.evaluation.settings import RunSettings
    from agentic_eval.workflow.scenarios import get_scenario

    class Slow(ScriptedBackend):
        async def complete(self, request: Any, call: Any) -> Any:
            await asyncio.sleep(30)
            return await super().complete(request, call)

    wf = Workflow(Store())
    s = get_scenario("synthesize.grounded")
    backend = Slow("reference", AGENTS["reference"])

    async def go() -> None:
        task = asyncio.create_task(run_scenario(wf, s, backend, RunSettings(model="scripted")))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    job = wf.jobs()[0]
    (attempt,) = wf.attempts(job.id, "synthesize")
    assert attempt.status == "interrupted"
    assert not [c for c in wf.claims(job.id) if c.status == "live"]
    assert {st.key: st.state for st in wf.steps(job.id)}["synthesize"] == "pending"
