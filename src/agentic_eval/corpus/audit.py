"""``corpus show``: the exact human decision a corpus sample was judged against.

A corpus sample's row names its source job and the first verdict on the step (its stamp); this
reads back the rest from the workflow: the job, the step's first attempt and claim (what the
replay served is as of then), the decision itself, who made it, why and when.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic_eval.corpus.jobs import case_name
from agentic_eval.store.db import Store
from agentic_eval.workflow.errors import NotFound
from agentic_eval.workflow.records import Attempt, Claim, Decision, Job, User
from agentic_eval.workflow.service import Workflow


@dataclass(frozen=True)
class JudgedAgainst:
    """A corpus sample and the decision it was judged against."""

    sample_id: int
    run_id: str
    case_id: str
    epoch: int
    outcome: str
    reason: str
    """The sample's failure reason (empty when it passed)."""
    verdict: str
    """The stamp: ``approved`` (judged) or ``rejected`` (run, not judged)."""
    job: Job
    step_key: str
    first_claim: Claim
    first_attempt: Attempt
    decision: Decision
    """The first decision on the step: the verdict the sample was judged against."""
    operator: User


def judged_against(store: Store, sample_id: int) -> JudgedAgainst:
    """What corpus sample ``sample_id`` was judged against.

    Raises:
        NotFound: No such sample, a sample of no corpus run, or a job, step or decision the
            store no longer holds.
    """
    row = store.sample(sample_id)
    if row is None:
        raise NotFound(f"no sample {sample_id} in the store")
    if row.source_job_id is None or row.case_verdict is None:
        raise NotFound(f"sample {sample_id} is not a corpus sample (its run replayed no job)")
    wf = Workflow(store)
    job = wf.job(row.source_job_id)
    step_key = row.case_id.removeprefix(f"job.{job.id}.")
    if case_name(job.id, step_key) != row.case_id:
        raise NotFound(f"sample {sample_id}'s case {row.case_id} is not a step of job {job.id}")
    decision = next((d for d in wf.decisions(job.id) if d.step_key == step_key), None)
    claim = wf.first_claim(job.id, step_key)
    if decision is None or claim is None:
        raise NotFound(f"job {job.id} has no decision on step {step_key} any more")
    verdict = "approved" if decision.decision == "approve" else "rejected"
    if verdict != row.case_verdict:  # decisions are only ever added: the first one stays
        raise NotFound(
            f"sample {sample_id} is stamped {row.case_verdict}, but the first decision on step "
            f"{step_key} of job {job.id} is {verdict}"
        )
    attempt = wf.attempt(claim.attempt_id)
    return JudgedAgainst(
        sample_id=sample_id,
        run_id=row.run_id,
        case_id=row.case_id,
        epoch=row.sample,
        outcome=row.outcome,
        reason=row.failure_reason,
        verdict=row.case_verdict,
        job=job,
        step_key=step_key,
        first_claim=claim,
        first_attempt=attempt,
        decision=decision,
        operator=wf.user(decision.operator_id),
    )
