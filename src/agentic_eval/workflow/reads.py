"""The read side of the workflow service: jobs, steps, transitions, claims, attempts, decisions,
feedback, and the outputs that stood at a given moment."""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session

from agentic_eval.store.db import Store, StoreError, describe_db_error, safe_url
from agentic_eval.store.workflow_tables import (
    WfAttempt,
    WfClaim,
    WfDecision,
    WfJob,
    WfStep,
    WfTemplate,
    WfTransition,
    WfUser,
)
from agentic_eval.workflow import rows
from agentic_eval.workflow.errors import NotFound
from agentic_eval.workflow.records import (
    Attempt,
    Claim,
    Decision,
    Job,
    JobOrigin,
    Retrieved,
    Step,
    Template,
    Transition,
    User,
)
from agentic_eval.workflow.retrievals import read_retrievals

Clock = Callable[[], datetime]

FEEDBACK_FROM = ("submitted", "approved")
"""A step sent back to ``pending`` from one of these states was sent back by an operator (a
rejection, or a reopening of an approved step): the reason is feedback for the next attempt."""


class RaceLost(StoreError):
    """A unique constraint refused a write because another writer got there first."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class WorkflowReads:
    """The store connection and the read methods of :class:`agentic_eval.workflow.Workflow`."""

    def __init__(self, store: Store, *, clock: Clock | None = None) -> None:
        """Open the workflow on ``store``, migrating it to the newest schema.

        Args:
            store: the store that also holds eval runs (SQLite or PostgreSQL).
            clock: where every written time comes from; aware datetimes only. Default: now in UTC.
        """
        store.migrate()
        self.store = store
        self._clock: Clock = clock or _utc_now

    @contextmanager
    def _session(self, doing: str) -> Generator[Session]:
        """One transaction: committed at the end, rolled back if anything raises. Database errors
        become one-line :class:`StoreError` (``RaceLost`` for a refused unique key); domain
        errors pass through unchanged."""
        url = self.store.url
        try:
            with Session(self.store.engine, expire_on_commit=False) as session, session.begin():
                yield session
        except IntegrityError as exc:
            raise RaceLost(
                f"cannot {doing} in {safe_url(url)}: {describe_db_error(exc, url)}"
            ) from None
        except SQLAlchemyError as exc:
            raise StoreError(
                f"cannot {doing} in {safe_url(url)}: {describe_db_error(exc, url)}"
            ) from None

    # -- rows, inside a session -------------------------------------------------------------

    @staticmethod
    def _job_row(s: Session, job_id: str) -> WfJob:
        row = s.scalars(select(WfJob).where(WfJob.id == job_id)).first()
        if row is None:
            raise NotFound(f"no job {job_id}")
        return row

    @staticmethod
    def _user_row(s: Session, user_id: str) -> WfUser:
        row = s.scalars(select(WfUser).where(WfUser.id == user_id)).first()
        if row is None:
            raise NotFound(f"no user {user_id}")
        return row

    @staticmethod
    def _step_rows(s: Session, job_id: str) -> list[WfStep]:
        stmt = select(WfStep).where(WfStep.job_id == job_id).order_by(WfStep.position)
        return list(s.scalars(stmt))

    @classmethod
    def _step_row(cls, s: Session, job_id: str, step_key: str) -> WfStep:
        row = s.scalars(
            select(WfStep).where(WfStep.job_id == job_id, WfStep.key == step_key)
        ).first()
        if row is None:
            cls._job_row(s, job_id)
            raise NotFound(f"job {job_id} has no step {step_key}")
        return row

    @staticmethod
    def _feedback(s: Session, job_id: str, step_key: str) -> list[str]:
        stmt = (
            select(WfTransition.reason)
            .where(
                WfTransition.job_id == job_id,
                WfTransition.step_key == step_key,
                WfTransition.to_state == "pending",
                WfTransition.from_state.in_(FEEDBACK_FROM),
            )
            .order_by(WfTransition.seq)
        )
        return list(s.scalars(stmt))

    # -- public reads -----------------------------------------------------------------------

    def user(self, user_id: str) -> User:
        """A user by id; :class:`NotFound` if there is none."""
        with self._session("read a user") as s:
            return rows.user(self._user_row(s, user_id))

    def users(self) -> list[User]:
        """Every user, oldest first."""
        with self._session("read the users") as s:
            return [rows.user(r) for r in s.scalars(select(WfUser).order_by(WfUser.seq))]

    def user_named(self, name: str) -> User:
        """A user by name; :class:`NotFound` if there is none."""
        with self._session("read a user") as s:
            row = s.scalars(select(WfUser).where(WfUser.name == name)).first()
            if row is None:
                raise NotFound(f"no user named {name!r}")
            return rows.user(row)

    def template(self, key: str) -> Template:
        """A template by key; :class:`NotFound` if there is none."""
        with self._session("read a template") as s:
            row = s.get(WfTemplate, key)
            if row is None:
                raise NotFound(f"no template {key}")
            return rows.template(row)

    def job(self, job_id: str) -> Job:
        """A job by id; :class:`NotFound` if there is none."""
        with self._session("read a job") as s:
            return rows.job(self._job_row(s, job_id))

    def jobs(
        self,
        *,
        template_key: str | None = None,
        decided: bool | None = None,
        origins: Collection[JobOrigin] | None = None,
    ) -> list[Job]:
        """Jobs, newest first.

        Args:
            template_key: only jobs of this template.
            decided: True for jobs with at least one operator decision, False for jobs with none.
            origins: only jobs of these origins (``HUMAN_ORIGINS``: the jobs whose decisions a
                human made); default: every job.
        """
        stmt = select(WfJob).order_by(WfJob.created_at.desc(), WfJob.seq.desc())
        if template_key is not None:
            stmt = stmt.where(WfJob.template_key == template_key)
        if origins is not None:
            stmt = stmt.where(WfJob.origin.in_(list(origins)))
        if decided is not None:
            has_decision = exists().where(WfDecision.job_id == WfJob.id)
            stmt = stmt.where(has_decision if decided else ~has_decision)
        with self._session("list jobs") as s:
            return [rows.job(r) for r in s.scalars(stmt)]

    def steps(self, job_id: str) -> list[Step]:
        """A job's steps in template order."""
        with self._session("read steps") as s:
            self._job_row(s, job_id)
            return [rows.step(r) for r in self._step_rows(s, job_id)]

    def transitions(self, job_id: str) -> list[Transition]:
        """Every state change of the job and its steps, in the order they happened."""
        with self._session("read transitions") as s:
            self._job_row(s, job_id)
            stmt = select(WfTransition).where(WfTransition.job_id == job_id)
            return [rows.transition(r) for r in s.scalars(stmt.order_by(WfTransition.seq))]

    def claims(self, job_id: str) -> list[Claim]:
        """The job's claims, oldest first."""
        with self._session("read claims") as s:
            self._job_row(s, job_id)
            stmt = select(WfClaim).where(WfClaim.job_id == job_id).order_by(WfClaim.seq)
            return [rows.claim(r) for r in s.scalars(stmt)]

    def first_claim(self, job_id: str, step_key: str) -> Claim | None:
        """The first claim ever made on the step (what its first attempt saw starts there)."""
        with self._session("read claims") as s:
            self._step_row(s, job_id, step_key)
            stmt = (
                select(WfClaim)
                .where(WfClaim.job_id == job_id, WfClaim.step_key == step_key)
                .order_by(WfClaim.seq)
            )
            row = s.scalars(stmt).first()
            return rows.claim(row) if row is not None else None

    def attempts(self, job_id: str, step_key: str | None = None) -> list[Attempt]:
        """The job's attempts (or one step's), in the order they were started."""
        with self._session("read attempts") as s:
            stmt = select(WfAttempt).where(WfAttempt.job_id == job_id)
            if step_key is None:
                self._job_row(s, job_id)
            else:
                self._step_row(s, job_id, step_key)
                stmt = stmt.where(WfAttempt.step_key == step_key)
            return [rows.attempt(r) for r in s.scalars(stmt.order_by(WfAttempt.seq))]

    def attempt(self, attempt_id: str) -> Attempt:
        """An attempt by id; :class:`NotFound` if there is none."""
        with self._session("read an attempt") as s:
            row = s.scalars(select(WfAttempt).where(WfAttempt.id == attempt_id)).first()
            if row is None:
                raise NotFound(f"no attempt {attempt_id}")
            return rows.attempt(row)

    def retrievals(self, attempt_id: str) -> list[Retrieved]:
        """What the attempt's tools retrieved, in order, with the exact texts (empty for an
        attempt that retrieved nothing or was made before retrievals were kept)."""
        with self._session("read retrievals") as s:
            if s.scalars(select(WfAttempt.id).where(WfAttempt.id == attempt_id)).first() is None:
                raise NotFound(f"no attempt {attempt_id}")
            return read_retrievals(s, attempt_id)

    def decisions(self, job_id: str) -> list[Decision]:
        """The operators' decisions on the job's attempts, oldest first."""
        with self._session("read decisions") as s:
            self._job_row(s, job_id)
            stmt = select(WfDecision).where(WfDecision.job_id == job_id)
            return [rows.decision(r) for r in s.scalars(stmt.order_by(WfDecision.seq))]

    def feedback(self, job_id: str, step_key: str) -> list[str]:
        """The reasons the step has been sent back so far, oldest first: each rejection's reason
        (and each reopening's, see ``Workflow.reopen_step``)."""
        with self._session("read feedback") as s:
            self._step_row(s, job_id, step_key)
            return self._feedback(s, job_id, step_key)

    def outputs_as_of(self, job_id: str, at: datetime) -> dict[str, dict[str, Any]]:
        """Per step key, the output of the newest attempt approved at or before ``at`` (decision
        time ``<= at``): what stood at that moment, whatever happened later. Steps with no
        approval by then are absent.

        Args:
            job_id: the job.
            at: an aware datetime (a naive one raises :class:`WorkflowError`).
        """
        cutoff = rows.aware(at, "outputs_as_of(at)")
        with self._session("read outputs") as s:
            self._job_row(s, job_id)
            stmt = (
                select(WfDecision, WfAttempt)
                .join(WfAttempt, WfAttempt.id == WfDecision.attempt_id)
                .where(WfDecision.job_id == job_id, WfDecision.decision == "approve")
                .order_by(WfDecision.seq)
            )
            found: dict[str, tuple[datetime, dict[str, Any]]] = {}
            for decision, attempt in s.execute(stmt):
                decided_at = rows.utc(decision.at)
                if decided_at > cutoff or attempt.output is None:
                    continue
                kept = found.get(attempt.step_key)
                if kept is None or decided_at >= kept[0]:
                    found[attempt.step_key] = (decided_at, dict(attempt.output))
        return {key: output for key, (_, output) in found.items()}
