"""The governed workflow runtime's services: the only writers of the ``wf_*`` tables.

Every call is one transaction. A call on an existing job first bumps the job's ``revision``,
which locks its row (PostgreSQL) or the database (SQLite) until the call commits, so two
processes acting on one job are serialised and every check below sees the latest state. A call
that raises a :class:`WorkflowError` has changed nothing. Every state change of a job or a step
writes a transition row (who, when, from, to, why).

Job: ``open`` -> ``in_progress`` (first claim) -> ``done`` (every step approved); ``cancelled``
from ``open`` or ``in_progress``. Step: ``pending`` -> ``claimed`` -> ``submitted`` ->
``approved``, or back to ``pending`` when an operator rejects the attempt or the attempt ends
without output (the claim is released either way).

A claim is a lease (see ``workflow.leases``): renewed while its holder lives, released by the
next claim of its step once it has expired, its attempt then ``abandoned``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from agentic_eval.store.workflow_tables import WfAttempt, WfClaim, WfJob, WfStep, WfTemplate, WfUser
from agentic_eval.workflow import rows
from agentic_eval.workflow.decisions import WorkflowDecisions
from agentic_eval.workflow.errors import ClaimConflict, IllegalTransition, NotFound, WorkflowError
from agentic_eval.workflow.moves import LIVE_JOB_STATES, new_id
from agentic_eval.workflow.reads import RaceLost
from agentic_eval.workflow.records import (
    JOB_ORIGINS,
    ROLES,
    Attempt,
    Claim,
    Job,
    JobOrigin,
    Retrieval,
    Template,
    User,
)
from agentic_eval.workflow.retrievals import keep_retrievals, texts_of

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Workflow(WorkflowDecisions):
    """Users, templates, jobs and the legal moves of their steps, persisted in a :class:`Store`.

    Example:
        >>> wf = Workflow(Store("sqlite:///wf.db"))  # doctest: +SKIP
        >>> op = wf.ensure_user("olivia", "operator")  # doctest: +SKIP
        >>> wf.ensure_template("lead_intelligence", ["research", "synthesize"])  # doctest: +SKIP
    """

    # -- users and templates ----------------------------------------------------------------

    def ensure_user(self, name: str, role: str = "operator") -> User:
        """The user called ``name``, created with ``role`` if there is none.

        Raises:
            WorkflowError: an unknown role, an empty name, or the user exists with another role.
        """
        if role not in ROLES:
            raise WorkflowError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
        if not name.strip():
            raise WorkflowError("a user needs a name")
        for _ in range(2):  # a concurrent creator may win the unique name; then read theirs
            try:
                with self._session("add a user") as s:
                    row = s.scalars(select(WfUser).where(WfUser.name == name)).first()
                    if row is None:
                        row = WfUser(id=new_id(), name=name, role=role, created_at=self._now())
                        s.add(row)
                        s.flush()
                    elif row.role != role:
                        raise WorkflowError(f"user {name} exists as {row.role}, not {role}")
                    return rows.user(row)
            except RaceLost:
                continue
        raise WorkflowError(f"user {name} could not be added")  # pragma: no cover

    def ensure_template(self, key: str, steps: Sequence[str], title: str = "") -> Template:
        """The template ``key``, created with ``steps`` (template step keys, in order) if there
        is none.

        Raises:
            WorkflowError: no steps, a repeated or empty step key, or ``key`` exists with other
                steps (a template's steps never change: jobs refer to them).
        """
        wanted = tuple(steps)
        if isinstance(steps, str) or not wanted or any(not k.strip() for k in wanted):
            raise WorkflowError(f"template {key} needs a list of non-empty step keys")
        if len(set(wanted)) != len(wanted):
            raise WorkflowError(f"template {key} repeats a step key: {list(wanted)}")
        for _ in range(2):
            try:
                with self._session("add a template") as s:
                    row = s.get(WfTemplate, key)
                    if row is None:
                        row = WfTemplate(
                            key=key, title=title or key, steps=list(wanted), created_at=self._now()
                        )
                        s.add(row)
                        s.flush()
                    elif tuple(row.steps) != wanted:
                        raise WorkflowError(
                            f"template {key} has steps {row.steps}, not {list(wanted)}: "
                            "a template's steps cannot change"
                        )
                    return rows.template(row)
            except RaceLost:
                continue
        raise WorkflowError(f"template {key} could not be added")  # pragma: no cover

    # -- jobs -------------------------------------------------------------------------------

    def create_job(
        self,
        template_key: str,
        *,
        created_by: str,
        requirements: Mapping[str, Any] = _EMPTY,
        inputs: Mapping[str, Any] = _EMPTY,
        title: str = "",
        origin: JobOrigin = "real",
    ) -> Job:
        """A new ``open`` job of the template, one ``pending`` step per template step, and its
        creation transition (``""`` -> ``open``).

        Args:
            template_key: an existing template.
            created_by: the id of an existing user.
            requirements: what the job must achieve (a JSON object).
            inputs: the seeded inputs (a JSON object).
            title: default: the template's title.
            origin: where the job comes from (:data:`JobOrigin`); an eval's own jobs say so,
                so that their decisions never pass for a human's.
        """
        if origin not in JOB_ORIGINS:
            raise WorkflowError(f"unknown job origin {origin!r} (one of {', '.join(JOB_ORIGINS)})")
        reqs = rows.json_object(requirements, "requirements")
        seeded = rows.json_object(inputs, "inputs")
        with self._session("create a job") as s:
            tmpl = s.get(WfTemplate, template_key)
            if tmpl is None:
                raise NotFound(f"no template {template_key}")
            creator = self._user_row(s, created_by)
            now = self._now()
            job = WfJob(
                id=new_id(),
                template_key=template_key,
                title=title or tmpl.title,
                state="open",
                requirements=reqs,
                inputs=seeded,
                created_by=creator.id,
                created_at=now,
                origin=origin,
                revision=0,
            )
            s.add(job)
            s.flush()
            for position, key in enumerate(tmpl.steps):
                s.add(
                    WfStep(
                        job_id=job.id, key=key, position=position, state="pending", created_at=now
                    )
                )
            s.flush()
            self._record(s, job, None, creator.id, now, "", "open", f"created by {creator.name}")
            return rows.job(job)

    # -- claims and attempts ----------------------------------------------------------------

    def claim_step(self, job_id: str, step_key: str, claimant: str) -> Claim:
        """Claim the step for a new attempt: legal when the step is ``pending`` and every earlier
        step is ``approved``. Creates the attempt (``running``, numbered, carrying the step's
        feedback so far) and the live claim, leased until one lease from now and renewed by this
        object's heartbeat until the attempt ends; the job goes ``open`` -> ``in_progress`` at
        its first claim. An expired claim of the job is released first (its attempt
        ``abandoned``, a transition by the system user naming its claimant and its expiry).

        Args:
            job_id: the job.
            step_key: the step's template key.
            claimant: the id of the user (any role) who will make the attempt.

        Raises:
            ClaimConflict: the step already has a live claim whose lease has not expired.
            IllegalTransition: the job is not live, the step is not pending, or an earlier step
                is not approved.
        """
        with self._session("claim a step") as s:
            job = self._lock(s, job_id)
            who = self._user_row(s, claimant)
            steps = self._step_rows(s, job_id)
            step = next((x for x in steps if x.key == step_key), None)
            if step is None:
                raise NotFound(f"job {job_id} has no step {step_key}")
            if job.state not in LIVE_JOB_STATES:
                raise IllegalTransition(
                    f"job {job_id} is {job.state}: cannot claim step {step_key}"
                )
            now: datetime | None = None
            if step.state == "claimed":  # by a claim whose holder may have died
                now = self._now()
                self._release_expired(s, job, now)
            if step.state == "claimed":
                live = s.scalars(
                    select(WfClaim.id).where(
                        WfClaim.job_id == job_id,
                        WfClaim.step_key == step_key,
                        WfClaim.status == "live",
                    )
                ).first()
                raise ClaimConflict(
                    f"step {step_key} of job {job_id} already has a live claim {live} (its "
                    "lease has not expired)"
                )
            if step.state != "pending":
                raise IllegalTransition(
                    f"step {step_key} of job {job_id} is {step.state}, not pending: cannot claim"
                )
            for earlier in steps[: step.position]:
                if earlier.state != "approved":
                    raise IllegalTransition(
                        f"step {step_key} of job {job_id} cannot be claimed: step {earlier.key} "
                        f"is {earlier.state}, not approved"
                    )
            number = 1 + (
                s.execute(
                    select(func.max(WfAttempt.number)).where(
                        WfAttempt.job_id == job_id, WfAttempt.step_key == step_key
                    )
                ).scalar()
                or 0
            )
            now = now or self._now()
            claim = WfClaim(
                id=new_id(),
                job_id=job_id,
                step_key=step_key,
                attempt_id=new_id(),
                claimant_id=who.id,
                claimed_at=now,
                released_at=None,
                status="live",
            )
            self._hold(claim, now)
            s.add(claim)
            try:
                s.flush()
            except IntegrityError:
                raise ClaimConflict(
                    f"step {step_key} of job {job_id} already has a live claim (the database "
                    "refused a second one)"
                ) from None
            s.add(
                WfAttempt(
                    id=claim.attempt_id,
                    job_id=job_id,
                    step_key=step_key,
                    number=number,
                    claim_id=claim.id,
                    started_at=now,
                    finished_at=None,
                    output=None,
                    note="",
                    feedback=self._feedback(s, job_id, step_key),
                    status="running",
                )
            )
            s.flush()
            why = f"claimed by {who.name} for attempt {number}"
            self._move_step(s, job, step, "claimed", who.id, now, why)
            if job.state == "open":
                self._move_job(s, job, "in_progress", who.id, now, f"first claim, on {step_key}")
            made = rows.claim(claim)
        self.heartbeat.hold(made.id)
        return made

    def finish_attempt(
        self,
        claim_id: str,
        output: Mapping[str, Any] | None,
        *,
        note: str = "",
        retrievals: Sequence[Retrieval | tuple[str, str]] = (),
    ) -> Attempt:
        """Finish the live claim's attempt and release the claim.

        With an output the attempt and its step become ``submitted`` (awaiting an operator's
        decision); with ``None`` (the agent broke) the attempt is ``failed`` and the step goes
        back to ``pending``. The holder may finish after its lease expired as long as nobody
        has released the claim. Finishing an attempt already ``interrupted`` (see
        :meth:`interrupt`) without output returns it unchanged.

        ``retrievals``: every source the attempt's tools retrieved, in order, as a
        :class:`~agentic_eval.workflow.records.Retrieval` (text, title, found) or a (source,
        text) pair, kept with the attempt in the same transaction (each text stored once, by its
        sha256): what a replay of the job serves (:meth:`retrievals`).

        Raises:
            IllegalTransition: the claim was already released (the message says by what: the
                attempt's end, an interruption, or an expired lease).
            WorkflowError: ``output`` is not a JSON object, or a retrieval is not well typed.
        """
        stored = rows.json_object(output, "the attempt's output") if output is not None else None
        kept = texts_of(retrievals)
        with self._session("finish an attempt") as s:
            job_id = self._job_id_of(s, WfClaim.job_id, WfClaim.id, claim_id, "claim")
            job = self._lock(s, job_id)
            claim = s.scalars(select(WfClaim).where(WfClaim.id == claim_id)).one()
            attempt = s.scalars(select(WfAttempt).where(WfAttempt.id == claim.attempt_id)).one()
            if claim.status != "live":
                self.heartbeat.drop(claim_id)
                if attempt.status == "interrupted" and stored is None:
                    return rows.attempt(attempt)
                how = f" ({attempt.note})" if attempt.status in ("interrupted", "abandoned") else ""
                raise IllegalTransition(
                    f"claim {claim_id} of step {claim.step_key} of job {job_id} is "
                    f"{claim.status}{how}: cannot finish its attempt"
                )
            step = self._step_row(s, job_id, claim.step_key)
            now = self._now()
            claim.status, claim.released_at = "released", now
            attempt.finished_at, attempt.note, attempt.output = now, note, stored
            keep_retrievals(s, attempt.id, kept)
            if stored is None:
                attempt.status = "failed"
                why = f"attempt {attempt.number} ended without output" + (
                    f": {note}" if note else ""
                )
                self._move_step(s, job, step, "pending", claim.claimant_id, now, why)
            else:
                attempt.status = "submitted"
                why = f"attempt {attempt.number} submitted"
                self._move_step(s, job, step, "submitted", claim.claimant_id, now, why)
            finished = rows.attempt(attempt)
        self.heartbeat.drop(claim_id)
        return finished
