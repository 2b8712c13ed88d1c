"""Plumbing shared by the workflow's services: the clock, the per-job lock, the operator check,
and the moves of jobs and steps, each written as a transition row."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from agentic_eval.store.workflow_tables import WfJob, WfStep, WfTransition, WfUser
from agentic_eval.workflow import rows
from agentic_eval.workflow.errors import NotAnOperator, NotFound
from agentic_eval.workflow.reads import WorkflowReads

LIVE_JOB_STATES = ("open", "in_progress")
"""A job in one of these states can still be worked on."""


def new_id() -> str:
    """A fresh uuid4 as text (every workflow id)."""
    return str(uuid.uuid4())


class WorkflowMoves(WorkflowReads):
    """The reads plus the helpers every writing service uses (inside one session)."""

    # -- plumbing ---------------------------------------------------------------------------

    def _now(self) -> datetime:
        return rows.aware(self._clock(), "the workflow clock's time")

    def _lock(self, s: Session, job_id: str) -> WfJob:
        """Bump the job's revision (taking the job's write lock), then read it."""
        bump = update(WfJob).where(WfJob.id == job_id).values(revision=WfJob.revision + 1)
        result = s.execute(bump.execution_options(synchronize_session=False))
        if cast(CursorResult[Any], result).rowcount != 1:
            raise NotFound(f"no job {job_id}")
        return self._job_row(s, job_id)

    @staticmethod
    def _job_id_of(s: Session, column: Any, id_column: Any, value: str, what: str) -> str:
        found = s.execute(select(column).where(id_column == value)).scalar()
        if found is None:
            raise NotFound(f"no {what} {value}")
        return str(found)

    def _operator(self, s: Session, user_id: str, action: str, rule: str) -> WfUser:
        row = self._user_row(s, user_id)
        if row.role != "operator":
            raise NotAnOperator(f"user {row.name} ({row.role}) cannot {action}: {rule}")
        return row

    @staticmethod
    def _record(
        s: Session,
        job: WfJob,
        step_key: str | None,
        actor_id: str,
        at: datetime,
        from_state: str,
        to_state: str,
        reason: str,
    ) -> None:
        s.add(
            WfTransition(
                id=new_id(),
                job_id=job.id,
                step_key=step_key,
                actor_id=actor_id,
                at=at,
                from_state=from_state,
                to_state=to_state,
                reason=reason,
            )
        )
        s.flush()

    def _move_job(
        self, s: Session, job: WfJob, to: str, actor_id: str, at: datetime, reason: str
    ) -> None:
        before, job.state = job.state, to
        self._record(s, job, None, actor_id, at, before, to, reason)

    def _move_step(
        self, s: Session, job: WfJob, step: WfStep, to: str, actor_id: str, at: datetime, why: str
    ) -> None:
        before, step.state = step.state, to
        self._record(s, job, step.key, actor_id, at, before, to, why)
