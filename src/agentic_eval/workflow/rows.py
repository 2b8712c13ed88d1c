"""From table rows to records, and the value rules both directions share: UTC times, JSON that
PostgreSQL and SQLite store alike."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from agentic_eval.store.db import clean
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
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.records import (
    Attempt,
    AttemptStatus,
    Claim,
    ClaimStatus,
    Decision,
    DecisionKind,
    Job,
    JobOrigin,
    JobState,
    Role,
    Step,
    StepState,
    Template,
    Transition,
    User,
)


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime; a naive one (as SQLite returns) is taken as UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _maybe_utc(moment: datetime | None) -> datetime | None:
    return utc(moment) if moment is not None else None


def aware(moment: datetime, what: str) -> datetime:
    """``moment`` in UTC; raises :class:`WorkflowError` if it is naive (its zone is unknown)."""
    if moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None:
        raise WorkflowError(f"{what} is a naive datetime ({moment.isoformat()}): give its timezone")
    return moment.astimezone(UTC)


def json_object(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """A JSON copy of ``value`` (NUL characters dropped, as the store does), or
    :class:`WorkflowError` when it is not a JSON object with finite numbers."""
    if not isinstance(value, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise WorkflowError(f"{what} must be a JSON object, not {type(value).__name__}")
    try:
        text = json.dumps(clean(dict(value)), allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise WorkflowError(f"{what} is not storable as JSON: {exc}") from None
    return cast(dict[str, Any], json.loads(text))


def user(row: WfUser) -> User:
    """The record of a ``wf_user`` row."""
    return User(id=row.id, name=row.name, role=cast(Role, row.role), created_at=utc(row.created_at))


def template(row: WfTemplate) -> Template:
    """The record of a ``wf_template`` row."""
    return Template(
        key=row.key, title=row.title, steps=tuple(row.steps), created_at=utc(row.created_at)
    )


def job(row: WfJob) -> Job:
    """The record of a ``wf_job`` row."""
    return Job(
        id=row.id,
        template_key=row.template_key,
        title=row.title,
        state=cast(JobState, row.state),
        requirements=dict(row.requirements),
        inputs=dict(row.inputs),
        created_by=row.created_by,
        created_at=utc(row.created_at),
        origin=cast(JobOrigin, row.origin),
    )


def step(row: WfStep) -> Step:
    """The record of a ``wf_step`` row."""
    return Step(
        job_id=row.job_id,
        key=row.key,
        position=row.position,
        state=cast(StepState, row.state),
        created_at=utc(row.created_at),
    )


def transition(row: WfTransition) -> Transition:
    """The record of a ``wf_transition`` row."""
    return Transition(
        id=row.id,
        job_id=row.job_id,
        step_key=row.step_key,
        actor_id=row.actor_id,
        at=utc(row.at),
        from_state=row.from_state,
        to_state=row.to_state,
        reason=row.reason,
    )


def claim(row: WfClaim) -> Claim:
    """The record of a ``wf_claim`` row."""
    return Claim(
        id=row.id,
        job_id=row.job_id,
        step_key=row.step_key,
        attempt_id=row.attempt_id,
        claimant_id=row.claimant_id,
        claimed_at=utc(row.claimed_at),
        released_at=_maybe_utc(row.released_at),
        status=cast(ClaimStatus, row.status),
        lease_expires_at=_maybe_utc(row.lease_expires_at),
        heartbeat_at=_maybe_utc(row.heartbeat_at),
        holder=row.holder,
    )


def attempt(row: WfAttempt) -> Attempt:
    """The record of a ``wf_attempt`` row."""
    return Attempt(
        id=row.id,
        job_id=row.job_id,
        step_key=row.step_key,
        number=row.number,
        claim_id=row.claim_id,
        started_at=utc(row.started_at),
        finished_at=utc(row.finished_at) if row.finished_at is not None else None,
        output=dict(row.output) if row.output is not None else None,
        note=row.note,
        feedback=list(row.feedback),
        status=cast(AttemptStatus, row.status),
    )


def decision(row: WfDecision) -> Decision:
    """The record of a ``wf_decision`` row."""
    return Decision(
        id=row.id,
        attempt_id=row.attempt_id,
        job_id=row.job_id,
        step_key=row.step_key,
        operator_id=row.operator_id,
        decision=cast(DecisionKind, row.decision),
        reason=row.reason,
        at=utc(row.at),
    )
