"""Driving whole jobs through the workflow with an operator deciding (the seed's ``wf_batch``).

:func:`decide_with` shows an :class:`~agentic_eval.workflow.operators.Operator` a submitted
attempt and applies its decision through the workflow service, attributed to the operator's
user. :func:`drive_job` creates a job from a fixture and runs every step of the workflow in
order: the agent attempts it (through :func:`~agentic_eval.evaluation.scenario.attempt_step`,
so each attempt is claimed, finished, kept with its retrievals and judged like any other), the
operator approves or rejects it, and a rejected step is attempted again with the reason as
feedback, up to ``max_attempts``; a step that runs out of attempts cancels the job. The job is
one sample of the batch: ``passed`` when every step was approved, otherwise the outcome of the
step that stopped it, with a check per step saying how it went.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agentic_eval.backends.base import ModelBackend
from agentic_eval.backends.spec import BackendKind
from agentic_eval.core.messages import trusted
from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.core.scorecard import CaseResult
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.scenario import StepRun, attempt_step
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.workflow.operators import Operator, OperatorDecision, Review
from agentic_eval.workflow.scenarios import JobFixture
from agentic_eval.workflow.service import Workflow

DEFAULT_MAX_ATTEMPTS = 3
"""Attempts at one step before the job is given up (``step --interactive`` allows as many)."""


def review_of(wf: Workflow, run: StepRun) -> Review:
    """What an operator is shown of the attempt ``run`` made."""
    transcript = run.case.transcript
    return Review(
        job=wf.job(run.job_id),
        step_key=run.step_key,
        attempt_number=run.attempt_number,
        output=transcript.output if transcript is not None else None,
        outcome=run.outcome,
        checks=run.case.result.checks,
        feedback=run.feedback,
    )


async def decide_with(
    wf: Workflow, operator: Operator, operator_id: str, run: StepRun
) -> OperatorDecision:
    """Show ``operator`` the attempt, and apply its decision as user ``operator_id``.

    Raises:
        WorkflowError: The attempt submitted nothing to decide on, the user is not an
            operator, or the decision is not legal now.
    """
    decision = await operator(review_of(wf, run))
    wf.decide(run.attempt_id, operator_id, decision.decision, decision.reason)
    return decision


@dataclass(frozen=True)
class DrivenJob:
    """One job driven through the workflow: its sample, and each step's attempts."""

    job_id: str
    sample: CaseRun
    attempts: dict[str, tuple[StepRun, ...]]


async def drive_job(
    wf: Workflow,
    fixture: JobFixture,
    backend: ModelBackend,
    settings: RunSettings,
    operator: Operator,
    *,
    epoch: int = 0,
    title: str = "",
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    mode: BackendKind | None = None,
) -> DrivenJob:
    """Create a ``workflow-batch`` job from ``fixture`` and drive every step to a decision.

    Each attempt is kept as a one-sample eval run of its own (its transcript in the store), and
    its sample key is (``<fixture>.<step>``, ``epoch``, the attempt). Never raises for agent,
    provider or suite-code failures: each is an outcome of the job.

    Raises:
        ValueError: ``max_attempts`` below 1.
        WorkflowError: The operator's user cannot decide (it must be an ``operator``).
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
    flow = fixture.workflow
    me = wf.ensure_user(operator.name, role="operator")
    wf.ensure_template(flow.key, flow.step_keys(), title=flow.title)
    job = wf.create_job(
        flow.key, created_by=me.id, requirements=fixture.requirements, inputs=fixture.inputs,
        title=title or f"workflow batch {fixture.name} #{epoch}", origin="workflow-batch",
    )  # fmt: skip
    started_at, started = datetime.now(UTC), time.perf_counter()
    attempts: dict[str, tuple[StepRun, ...]] = {}
    checks: list[CheckResult] = []
    stop: Outcome | None = None
    for step in flow.step_keys():
        runs: list[StepRun] = []
        decision: OperatorDecision | None = None
        while len(runs) < max_attempts and (decision is None or decision.decision == "reject"):
            run = await attempt_step(
                wf, job.id, step, workflow=flow, backend=backend, settings=settings,
                case_id=f"{fixture.name}.{step}", sample=epoch, attempt=len(runs) + 1, mode=mode,
            )  # fmt: skip
            runs.append(run)
            transcript = run.case.transcript
            if transcript is None or transcript.output is None:  # nothing was submitted
                decision = None
                if run.outcome.kind == "transient":
                    break  # the provider's weather: not the agent's attempt to count
                continue
            decision = await decide_with(wf, operator, me.id, run)
        attempts[step] = tuple(runs)
        approved = decision is not None and decision.decision == "approve"
        checks.append(_step_check(step, runs, approved, decision))
        if not approved:
            stop = _stopped(step, runs, decision)
            wf.cancel_job(job.id, me.id, stop.reason)
            break
    sample = _job_sample(fixture.name, epoch, checks, attempts, stop, started_at, started)
    return DrivenJob(job.id, sample, attempts)


def _step_check(
    step: str, runs: Sequence[StepRun], approved: bool, decision: OperatorDecision | None
) -> CheckResult:
    """How one step went, as a check of the job: approved (on which attempt), or not."""
    n = len(runs)
    if approved:
        return CheckResult(name=f"step {step}", passed=True, message=f"approved on attempt {n}")
    why = decision.reason if decision is not None else runs[-1].outcome.reason
    return CheckResult(
        name=f"step {step}", passed=False, message=f"not approved after {n} attempt(s): {why}"
    )


def _stopped(step: str, runs: Sequence[StepRun], decision: OperatorDecision | None) -> Outcome:
    """The job's outcome when ``step`` was never approved: its last attempt's error or transient
    when it broke, else check_failed with the operator's last reason."""
    last = runs[-1].outcome
    if decision is None and last.kind in ("error", "transient"):
        return Outcome(kind=last.kind, reason=f"step {step}: {last.reason}", where=f"step {step}")
    why = decision.reason if decision is not None else last.reason
    reason = f"step {step} not approved after {len(runs)} attempt(s): {why}"
    return Outcome(kind="check_failed", reason=reason, where=f"step {step}")


def _job_sample(
    fixture: str,
    epoch: int,
    checks: list[CheckResult],
    attempts: dict[str, tuple[StepRun, ...]],
    stop: Outcome | None,
    started_at: datetime,
    started: float,
) -> CaseRun:
    """The job as one sample of the batch."""
    runs = [r.case for step_runs in attempts.values() for r in step_runs]
    result = trusted(
        CaseResult,
        {
            "case_id": fixture,
            "sample": epoch,
            "outcome": stop or Outcome(kind="passed"),
            "checks": tuple(checks),
            "hard_gate_failed": False,
            "unapproved_attempts": sum(r.result.unapproved_attempts for r in runs),
            "unapproved_executions": sum(r.result.unapproved_executions for r in runs),
            "turns": sum(r.result.turns for r in runs),
            "tool_calls": sum(r.result.tool_calls for r in runs),
            "case_verdict": None,
        },
    )
    return CaseRun(
        transcript=None,
        result=result,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        duration_ms=(time.perf_counter() - started) * 1000,
        input_tokens=sum(r.input_tokens for r in runs),
        output_tokens=sum(r.output_tokens for r in runs),
        reproduced=None,
    )


def job_title(run_id: str, epoch: int, fixture: str) -> str:
    """The title of a workflow batch's job: how the batch finds its jobs again."""
    return f"workflow batch {run_id} #{epoch} ({fixture})"


@dataclass
class StepTally:
    """How one step went across a workflow batch's jobs."""

    step: str
    attempts: int = 0
    approvals: int = 0
    rejections: int = 0
    reasons: Counter[str] = field(default_factory=lambda: Counter[str]())
    """Each rejection reason, and how many times it was given."""
    broke: int = 0
    """Attempts that submitted nothing (no output to decide on)."""


def step_tallies(wf: Workflow, run_id: str, steps: Sequence[str]) -> list[StepTally]:
    """Per step of the workflow, in order: attempts, approvals, rejections (with their reasons)
    and attempts that broke, over the jobs workflow batch ``run_id`` drove, read from the
    workflow's own records (whichever process drove them)."""
    tallies = {step: StepTally(step) for step in steps}
    prefix = job_title(run_id, 0, "").split(" #", 1)[0] + " #"
    for job in wf.jobs(origins=("workflow-batch",)):
        if not job.title.startswith(prefix):
            continue
        for attempt in wf.attempts(job.id):
            t = tallies.setdefault(attempt.step_key, StepTally(attempt.step_key))
            t.attempts += 1
            t.broke += attempt.status == "failed"
        for decision in wf.decisions(job.id):
            t = tallies.setdefault(decision.step_key, StepTally(decision.step_key))
            if decision.decision == "approve":
                t.approvals += 1
            else:
                t.rejections += 1
                t.reasons[decision.reason] += 1
    return list(tallies.values())
