"""One corpus case as a scenario: the step as its first attempt saw it, and what the human said.

An ``approved`` case replays the first attempt's inputs and retrievals with no feedback, and is
judged. A ``rejected`` case seeds that first attempt and its rejection before the agent's turn,
so the agent works with the reason as its feedback, as the job's second attempt did; it is run,
never judged (it has no right answer to check).
"""

from __future__ import annotations

import dataclasses

from agentic_eval.corpus.jobs import case_name, scenario_from_job
from agentic_eval.workflow.errors import NotFound, WorkflowError
from agentic_eval.workflow.records import Decision
from agentic_eval.workflow.scenarios import AgentScenario
from agentic_eval.workflow.service import Workflow


def find_decision(wf: Workflow, job_id: str, decision_id: str) -> Decision:
    """A decision on the job, by id.

    Raises:
        NotFound: The job has no such decision.
    """
    for decision in wf.decisions(job_id):
        if decision.id == decision_id:
            return decision
    raise NotFound(f"job {job_id} has no decision {decision_id}")


def case_scenario(wf: Workflow, job_id: str, step_key: str, decision_id: str) -> AgentScenario:
    """The scenario replaying one corpus case, judged against the first decision
    ``decision_id`` on the step.

    Raises:
        WorkflowError: Unknown job, step or decision, a decision on another step, or a rejected
            attempt whose output its step's model no longer accepts.
        UnknownScenario: The job's template is not a workflow this installation defines.
    """
    scenario = scenario_from_job(wf, job_id, step_key)
    decision = find_decision(wf, job_id, decision_id)
    if decision.step_key != step_key:
        raise WorkflowError(
            f"decision {decision_id} is on step {decision.step_key}, not {step_key}"
        )
    assert scenario.name == case_name(job_id, step_key)
    if decision.decision == "approve":
        return scenario
    rejected = wf.attempt(decision.attempt_id)
    if rejected.output is None:  # pragma: no cover - only a submitted attempt is decided
        raise WorkflowError(f"the attempt decision {decision_id} rejected has no output")
    try:
        return dataclasses.replace(scenario, rejections=((rejected.output, decision.reason),))
    except ValueError as exc:  # the step's output model changed since
        raise WorkflowError(f"job {job_id}, step {step_key}: {exc}") from None
