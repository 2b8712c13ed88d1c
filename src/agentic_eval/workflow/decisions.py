"""Operator actions: decide on a submitted attempt, reopen an approved step, cancel a job."""

from __future__ import annotations

from sqlalchemy import select

from agentic_eval.store.workflow_tables import WfAttempt, WfClaim, WfDecision
from agentic_eval.workflow import rows
from agentic_eval.workflow.errors import IllegalTransition, NotFound, WorkflowError
from agentic_eval.workflow.leases import WorkflowLeases
from agentic_eval.workflow.moves import LIVE_JOB_STATES, new_id
from agentic_eval.workflow.records import DECISIONS, Decision, Job, Step


class WorkflowDecisions(WorkflowLeases):
    """What only operators may do."""

    # -- operator decisions -----------------------------------------------------------------

    def decide(
        self, attempt_id: str, operator_id: str, decision: str, reason: str = ""
    ) -> Decision:
        """An operator's decision on a ``submitted`` attempt.

        ``approve``: the attempt and its step become ``approved``, and the job ``done`` once
        every step is. ``reject`` (a reason is required): the attempt is ``rejected`` and the
        step goes back to ``pending``; the reason becomes feedback for the next attempt.

        Raises:
            NotAnOperator: the user is not an operator.
            IllegalTransition: the attempt is not submitted (unfinished, or already decided),
                the job is not live, or a rejection has no reason.
        """
        if decision not in DECISIONS:
            raise WorkflowError(f"unknown decision {decision!r}: approve or reject")
        with self._session("record a decision") as s:
            job_id = self._job_id_of(s, WfAttempt.job_id, WfAttempt.id, attempt_id, "attempt")
            job = self._lock(s, job_id)
            who = self._operator(s, operator_id, "decide", "only operators decide")
            attempt = s.scalars(select(WfAttempt).where(WfAttempt.id == attempt_id)).one()
            step = self._step_row(s, job_id, attempt.step_key)
            where = f"step {step.key} of job {job_id}"
            if job.state not in LIVE_JOB_STATES:
                raise IllegalTransition(f"job {job_id} is {job.state}: cannot {decision} {where}")
            if attempt.status == "running":
                raise IllegalTransition(
                    f"{where} is {step.state}, not submitted: cannot {decision}"
                )
            if attempt.status != "submitted":
                raise IllegalTransition(
                    f"attempt {attempt.number} of {where} is {attempt.status}, not submitted: "
                    f"cannot {decision}"
                )
            if decision == "reject" and not reason.strip():
                raise IllegalTransition(
                    f"rejecting attempt {attempt.number} of {where} needs a reason"
                )
            now = self._now()
            row = WfDecision(
                id=new_id(),
                attempt_id=attempt.id,
                job_id=job_id,
                step_key=step.key,
                operator_id=who.id,
                decision=decision,
                reason=reason,
                at=now,
            )
            s.add(row)
            s.flush()
            if decision == "approve":
                attempt.status = "approved"
                why = reason or f"attempt {attempt.number} approved by {who.name}"
                self._move_step(s, job, step, "approved", who.id, now, why)
                if all(x.state == "approved" for x in self._step_rows(s, job_id)):
                    self._move_job(s, job, "done", who.id, now, "every step approved")
            else:
                attempt.status = "rejected"
                self._move_step(s, job, step, "pending", who.id, now, reason)
            return rows.decision(row)

    def reopen_step(self, job_id: str, step_key: str, operator_id: str, reason: str) -> Step:
        """Send an ``approved`` step back to ``pending`` (operators only, with a reason that
        becomes feedback for its next attempt), so that a later approval replaces its output.
        Legal only while every later step is ``pending``: reopen from the last step back. A
        ``done`` job goes back to ``in_progress``. The approved attempt stays ``approved``, as it
        was: :meth:`outputs_as_of` still answers with it for the times it stood. A later step
        held by an expired claim is released first (its attempt ``abandoned``)."""
        with self._session("reopen a step") as s:
            job = self._lock(s, job_id)
            rule = "only operators reopen steps"
            who = self._operator(s, operator_id, f"reopen step {step_key} of job {job_id}", rule)
            steps = self._step_rows(s, job_id)
            step = next((x for x in steps if x.key == step_key), None)
            if step is None:
                raise NotFound(f"job {job_id} has no step {step_key}")
            if job.state not in ("in_progress", "done"):
                raise IllegalTransition(
                    f"job {job_id} is {job.state}: cannot reopen step {step_key}"
                )
            if step.state != "approved":
                raise IllegalTransition(
                    f"step {step_key} of job {job_id} is {step.state}, not approved: cannot reopen"
                )
            if any(x.state == "claimed" for x in steps[step.position + 1 :]):
                self._release_expired(s, job, self._now())  # a claim whose holder may have died
            for later in steps[step.position + 1 :]:
                if later.state != "pending":
                    raise IllegalTransition(
                        f"step {step_key} of job {job_id} cannot be reopened: the later step "
                        f"{later.key} is {later.state}, not pending"
                    )
            if not reason.strip():
                raise IllegalTransition(f"reopening step {step_key} of job {job_id} needs a reason")
            now = self._now()
            self._move_step(s, job, step, "pending", who.id, now, reason)
            if job.state == "done":
                self._move_job(s, job, "in_progress", who.id, now, f"step {step_key} reopened")
            return rows.step(step)

    def cancel_job(self, job_id: str, actor: str, reason: str) -> Job:
        """Cancel an ``open`` or ``in_progress`` job (operators only, with a reason). A live
        claim is released, its attempt marked ``failed`` and its step put back to ``pending``."""
        with self._session("cancel a job") as s:
            job = self._lock(s, job_id)
            who = self._operator(s, actor, f"cancel job {job_id}", "only operators cancel jobs")
            if job.state not in LIVE_JOB_STATES:
                raise IllegalTransition(f"job {job_id} is {job.state}: cannot cancel")
            if not reason.strip():
                raise IllegalTransition(f"cancelling job {job_id} needs a reason")
            now = self._now()
            live = select(WfClaim).where(WfClaim.job_id == job_id, WfClaim.status == "live")
            for claim in s.scalars(live).all():
                claim.status, claim.released_at = "released", now
                attempt = s.scalars(select(WfAttempt).where(WfAttempt.id == claim.attempt_id)).one()
                attempt.status, attempt.finished_at = "failed", now
                attempt.note = f"job cancelled: {reason}"
                step = self._step_row(s, job_id, claim.step_key)
                self._move_step(s, job, step, "pending", who.id, now, f"job cancelled: {reason}")
            self._move_job(s, job, "cancelled", who.id, now, reason)
            return rows.job(job)
