"""Claims as leases: renewing them, releasing the expired ones, and releasing one's own when the
process is interrupted. Every release is recorded as the step's transition back to ``pending``,
naming who released it and why.

A claim stays ``live`` until it is released; its lease only says from when on someone else may
release it. So the holder's own ``finish_attempt`` still succeeds after expiry if nobody has
released the claim yet, and fails (naming the release) if someone has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, or_, select, update
from sqlalchemy.orm import Session

from agentic_eval.core.process import this_process
from agentic_eval.store.db import Store
from agentic_eval.store.workflow_tables import (
    SYSTEM_USER_ID,
    SYSTEM_USER_NAME,
    WfAttempt,
    WfClaim,
    WfJob,
    WfUser,
)
from agentic_eval.workflow import rows
from agentic_eval.workflow.errors import NotFound
from agentic_eval.workflow.heartbeat import Heartbeat, lease_seconds
from agentic_eval.workflow.moves import WorkflowMoves
from agentic_eval.workflow.reads import Clock
from agentic_eval.workflow.records import AttemptStatus, Claim, ReleasedClaim


def _expired(now: datetime) -> ColumnElement[bool]:
    """A live claim whose lease ran out by ``now`` (or that never had one)."""
    return or_(WfClaim.lease_expires_at.is_(None), WfClaim.lease_expires_at <= now)


def expiry_text(claim: WfClaim) -> str:
    """Why an expired claim may be released: when its lease expired."""
    if claim.lease_expires_at is None:
        return "claimed before leases existed, never renewed"
    return f"lease expired at {rows.utc(claim.lease_expires_at).isoformat()}"


def _abandoned(by: str, holder: str | None, expiry: str, number: int, claimant: str) -> str:
    held = f", held by {holder}," if holder else ""
    return f"attempt {number} abandoned: the claim of {claimant}{held} released by {by}: {expiry}"


class WorkflowLeases(WorkflowMoves):
    """The moves plus the lease of every claim: renewal, expiry, interruption, recovery."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        lease: float | None = None,
        heartbeat: bool = True,
    ) -> None:
        """Open the workflow on ``store``, migrating it to the newest schema.

        Args:
            store: the store that also holds eval runs (SQLite or PostgreSQL).
            clock: where every written time comes from; aware datetimes only. Default: now in UTC.
            lease: seconds a claim lasts past its last renewal. Default:
                ``$AGENTIC_EVAL_CLAIM_LEASE``, else 120.
            heartbeat: renew the claims this object holds from a thread, every third of the
                lease (False: never renew; they expire one lease after their claim).

        Raises:
            WorkflowError: the lease is not a number of seconds above 0.
        """
        super().__init__(store, clock=clock)
        self.lease = timedelta(seconds=lease_seconds(lease))
        self.heartbeat = Heartbeat(
            self._renew_leases, self.lease.total_seconds() / 3, beat=heartbeat
        )
        """The claims this object holds, and the thread renewing them."""

    # -- holding ----------------------------------------------------------------------------

    def _hold(self, claim: WfClaim, now: datetime) -> None:
        """Stamp a new claim's lease (inside its session)."""
        claim.lease_expires_at = now + self.lease
        claim.heartbeat_at = now
        claim.holder = this_process()

    def _renew_leases(self, claim_ids: tuple[str, ...]) -> list[str]:
        """Push the lease of each still-live claim one lease past now; the ids not live any
        more (released by someone else) are returned. Takes no job lock: a renewal changes no
        state, and a release re-checks the expiry in its own ``UPDATE``."""
        with self._session("renew claim leases") as s:
            now = self._now()
            stmt = (
                update(WfClaim)
                .where(WfClaim.id.in_(claim_ids), WfClaim.status == "live")
                .values(lease_expires_at=now + self.lease, heartbeat_at=now)
            )
            s.execute(stmt.execution_options(synchronize_session=False))
            live = select(WfClaim.id).where(WfClaim.id.in_(claim_ids), WfClaim.status == "live")
            still = set(s.scalars(live))
        return [c for c in claim_ids if c not in still]

    # -- releasing --------------------------------------------------------------------------

    @staticmethod
    def _system_user(s: Session, now: datetime) -> WfUser:
        """The ``agentic-eval`` system user (made by migration 0005; made here if missing)."""
        row = s.scalars(select(WfUser).where(WfUser.id == SYSTEM_USER_ID)).first()
        if row is not None:
            return row
        name = SYSTEM_USER_NAME
        if s.scalars(select(WfUser.id).where(WfUser.name == name)).first() is not None:
            name = f"{SYSTEM_USER_NAME} (system)"
        row = WfUser(id=SYSTEM_USER_ID, name=name, role="system", created_at=now)
        s.add(row)
        s.flush()
        return row

    def _release(
        self,
        s: Session,
        job: WfJob,
        claim: WfClaim,
        *,
        status: AttemptStatus,
        actor: WfUser,
        now: datetime,
        why: Callable[[int, str], str],
        only_if_expired: bool,
    ) -> ReleasedClaim | None:
        """Release a live claim without output: the attempt becomes ``status``, the step goes
        back to ``pending``, recorded as a transition by ``actor`` for ``why(attempt number,
        claimant name)``. The ``UPDATE`` re-checks that the claim is still live (and, with
        ``only_if_expired``, still expired), so a renewal or a finish that got there first wins;
        None then."""
        attempt = s.scalars(select(WfAttempt).where(WfAttempt.id == claim.attempt_id)).one()
        claimant = self._user_row(s, claim.claimant_id).name
        stmt = update(WfClaim).where(WfClaim.id == claim.id, WfClaim.status == "live")
        if only_if_expired:
            stmt = stmt.where(_expired(now))
        stmt = stmt.values(status="released", released_at=now)
        result = s.execute(stmt.execution_options(synchronize_session=False))
        if cast(CursorResult[Any], result).rowcount != 1:
            return None
        s.refresh(claim)
        reason = why(attempt.number, claimant)
        attempt.status, attempt.finished_at, attempt.note = status, now, reason
        step = self._step_row(s, job.id, claim.step_key)
        self._move_step(s, job, step, "pending", actor.id, now, reason)
        self.heartbeat.drop(claim.id)
        return ReleasedClaim(
            job_id=job.id,
            step_key=claim.step_key,
            claim_id=claim.id,
            attempt_id=attempt.id,
            attempt_number=attempt.number,
            claimant=claimant,
            holder=claim.holder,
            lease_expires_at=(
                rows.utc(claim.lease_expires_at) if claim.lease_expires_at is not None else None
            ),
            released_at=now,
            released_by=actor.name,
            attempt_status=status,
            reason=reason,
        )

    def _release_expired(
        self, s: Session, job: WfJob, now: datetime, actor: WfUser | None = None
    ) -> list[ReleasedClaim]:
        """Release every expired live claim of the (locked) job; their attempts are
        ``abandoned``. ``actor``: who the release is recorded as (default: the system user)."""
        stmt = (
            select(WfClaim)
            .where(WfClaim.job_id == job.id, WfClaim.status == "live", _expired(now))
            .order_by(WfClaim.seq)
        )
        released: list[ReleasedClaim] = []
        for claim in s.scalars(stmt).all():
            who = actor or self._system_user(s, now)
            why = partial(_abandoned, who.name, claim.holder, expiry_text(claim))
            done = self._release(
                s, job, claim, status="abandoned", actor=who, now=now, why=why,
                only_if_expired=True,
            )  # fmt: skip
            if done is not None:
                released.append(done)
        return released

    # -- public -----------------------------------------------------------------------------

    def expired_claims(self) -> list[Claim]:
        """Every live claim whose lease has expired by now, oldest first (nothing released)."""
        with self._session("read expired claims") as s:
            now = self._now()
            stmt = select(WfClaim).where(WfClaim.status == "live", _expired(now))
            return [rows.claim(c) for c in s.scalars(stmt.order_by(WfClaim.seq))]

    def recover(self, actor_id: str | None = None) -> list[ReleasedClaim]:
        """Release every expired claim in the store: each attempt ``abandoned``, each step back
        to ``pending``, each release a transition naming the old claimant and when its lease
        expired. One transaction per job; a claim renewed or finished meanwhile is left alone.

        Args:
            actor_id: the operator the releases are recorded as (default: the ``agentic-eval``
                system user).

        Raises:
            NotAnOperator: ``actor_id`` is not an operator.
        """
        with self._session("find expired claims") as s:
            now = self._now()
            if actor_id is not None:
                self._operator(s, actor_id, "recover claims", "only operators release claims")
            stmt = select(WfClaim.job_id).where(WfClaim.status == "live", _expired(now))
            job_ids = list(dict.fromkeys(s.scalars(stmt.order_by(WfClaim.seq))))
        released: list[ReleasedClaim] = []
        for job_id in job_ids:
            with self._session("release expired claims") as s:
                try:
                    job = self._lock(s, job_id)
                except NotFound:  # deleted meanwhile
                    continue
                actor = self._user_row(s, actor_id) if actor_id is not None else None
                released.extend(self._release_expired(s, job, self._now(), actor))
        return released

    def interrupt(self, cause: str, claim_ids: Iterable[str] | None = None) -> list[ReleasedClaim]:
        """Release every claim this object holds (or only ``claim_ids`` among them), because
        its process or its attempt is being stopped: each attempt ``interrupted`` (no output),
        each step back to ``pending``, the transition by the claimant for ``cause``. Finishing
        such an attempt afterwards without output is a no-op, so a caller's own clean-up
        (``finish_attempt(claim, None)``) does not fail.

        Args:
            cause: why, e.g. ``"SIGTERM received by agentic-eval step (host pid 42)"``.
            claim_ids: release only these (default: every claim held).
        """
        released: list[ReleasedClaim] = []

        def why(number: int, claimant: str) -> str:
            return f"attempt {number} interrupted: {cause}"

        held = self.heartbeat.held()
        if claim_ids is not None:
            chosen = set(claim_ids)
            held = tuple(c for c in held if c in chosen)
        for claim_id in held:
            with self._session("release an interrupted claim") as s:
                job_id = s.scalars(select(WfClaim.job_id).where(WfClaim.id == claim_id)).first()
                if job_id is not None:
                    job = self._lock(s, job_id)
                    claim = s.scalars(select(WfClaim).where(WfClaim.id == claim_id)).one()
                    who = self._user_row(s, claim.claimant_id)
                    done = self._release(
                        s, job, claim, status="interrupted", actor=who, now=self._now(),
                        why=why, only_if_expired=False,
                    )  # fmt: skip
                    if done is not None:
                        released.append(done)
            self.heartbeat.drop(claim_id)
        return released
