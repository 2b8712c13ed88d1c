"""scenario_from_job: what a real job's step saw at its first attempt, as a scenario.

It is selected by time, not by the job's current state (which may have drifted since): the
requirements and inputs of the job, the upstream outputs that had been approved when the step
was first claimed, and what the first attempt's tools retrieved, served instead of what the
sources say today (a source that attempt never retrieved ends the sample as ``error`` naming it:
the fixtures are not versioned). Its checks are the universal checks of the step's template
(``CHECKS_BY_TEMPLATE``); there is no feedback, because the first attempt had none.
"""

from __future__ import annotations

from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.scenarios import AgentScenario, UnknownScenario, workflows
from agentic_eval.workflow.service import Workflow
from agentic_eval.workflow.steps import KeptRetrievals


def case_name(job_id: str, step_key: str) -> str:
    """The name of the scenario replaying a job's step (a corpus sample's case):
    ``job.<job id>.<step>``."""
    return f"job.{job_id}.{step_key}"


def scenario_from_job(wf: Workflow, job_id: str, step_key: str | None = None) -> AgentScenario:
    """A scenario replaying ``step_key`` of job ``job_id`` as its first attempt saw it.

    Args:
        wf: The workflow service over the store that holds the job.
        job_id: The real job.
        step_key: The step (default: the first step that was ever claimed and is not approved,
            else the last step claimed).

    Raises:
        WorkflowError: Unknown job or step, or a step nobody has claimed yet.
        UnknownScenario: The job's template is not a workflow this installation defines.
    """
    job = wf.job(job_id)
    flow = workflows().get(job.template_key)
    if flow is None:
        raise UnknownScenario(f"job {job_id} uses template {job.template_key!r}, not defined here")
    if step_key is None:
        claimed = [s for s in wf.steps(job_id) if wf.first_claim(job_id, s.key) is not None]
        if not claimed:
            raise WorkflowError(f"job {job_id}: no step has been claimed yet (pass the step)")
        open_ = [s for s in claimed if s.state != "approved"]
        step_key = (open_ or claimed)[-1 if not open_ else 0].key
    try:
        flow.step(step_key)
    except KeyError as exc:
        raise WorkflowError(str(exc.args[0])) from None
    first = wf.first_claim(job_id, step_key)
    if first is None:
        raise WorkflowError(f"job {job_id}: step {step_key} has never been claimed")
    upstream = wf.outputs_as_of(job_id, first.claimed_at)
    seen_by = (
        f"job {job_id}'s first attempt at {step_key} "
        f"(claimed {first.claimed_at.isoformat(timespec='seconds')})"
    )
    served = KeptRetrievals(tuple(wf.retrievals(first.attempt_id)), seen_by)
    return AgentScenario(
        name=case_name(job_id, step_key),
        workflow=flow,
        template=step_key,
        description=f"job {job_id} ({job.title or job.template_key}), step {step_key} as first "
        f"claimed at {first.claimed_at.isoformat()}",
        requirements=job.requirements,
        inputs=job.inputs,
        upstream={k: upstream[k] for k in flow.upstream(step_key) if k in upstream},
        external_fixtures=flow.fixtures_mark(),
        served=served,
    )
