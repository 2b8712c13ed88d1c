"""run_scenario: one agent attempt at one workflow step, inside a real job, judged by checks.

It seeds a real job through the workflow services (real template keys, real transitions, the
upstream steps claimed, finished and approved, earlier attempts rejected with their reasons),
claims the step for the agent, runs the agent with the stubbed tools as the same task
specification a domain case becomes, finishes the attempt through the service, and applies the
scenario's checks. It never raises for agent failures: a bad run is an outcome.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agentic_eval.backends.base import ModelBackend, sample_transcript_ref
from agentic_eval.backends.spec import BackendKind
from agentic_eval.checks.base import Check
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.results import Outcome
from agentic_eval.core.settings import MAX_REJECTIONS as MAX_REJECTIONS
from agentic_eval.evaluation.gate import build_scorecard
from agentic_eval.evaluation.persist import sample_row
from agentic_eval.evaluation.runner import CaseRun, produced_by, run_case
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.compare import scorecard_sha256
from agentic_eval.workflow.operators import Operator, OperatorDecision, Recorded, Review
from agentic_eval.workflow.records import Retrieval, User
from agentic_eval.workflow.scenarios import AgentScenario
from agentic_eval.workflow.service import Workflow
from agentic_eval.workflow.steps import KeptRetrievals, WorkflowDefinition, step_task

OPERATOR = "eval-operator"
"""The operator user who seeds scenario jobs and approves or rejects their steps."""
SEEDER = "eval-seeder"
"""The worker user whose attempts stand for the seeded upstream steps and earlier rejections."""


@dataclass(frozen=True)
class StepRun:
    """One attempt at one step: where it lives in the workflow, and how it was judged."""

    job_id: str
    step_key: str
    claim_id: str
    attempt_id: str
    attempt_number: int
    """The workflow's number of the attempt at the step (seeded attempts count too)."""
    feedback: tuple[str, ...]
    """The operator feedback this attempt was given (shown in its prompt)."""
    case: CaseRun

    @property
    def outcome(self) -> Outcome:
        """passed, check_failed, error or transient."""
        return self.case.result.outcome

    @property
    def epoch(self) -> int:
        """The sample's epoch (the N of a batch)."""
        return self.case.result.sample

    @property
    def attempt(self) -> int:
        """The sample's attempt: the agent's rejection round at the step, from 1 (its first
        attempt in the sample; earlier rejections the scenario seeds do not count)."""
        return self.case.attempt


def _store_sample(
    wf: Workflow,
    suite: str,
    case: CaseRun,
    backend: ModelBackend,
    settings: RunSettings,
    mode: BackendKind | None,
    attempt_id: str,
    external_fixtures: str | None = None,
) -> None:
    """Keep the attempt as an eval run of one sample (its transcript in the row unless a file
    holds it), pointing at the workflow attempt it judged."""
    info = backend.info()
    store = wf.store
    run_id = store.start_run(
        suite,
        produced_by(backend, settings.approval_mode),
        mode or ("scripted" if info.backend == "scripted" else "live"),
        case.started_at,
        settings={
            "model": settings.model,
            **settings.parameters().model_dump(mode="json"),
            "workflow_attempt": attempt_id,
        },
        planned_samples=1,
    )
    r = case.result
    ref = sample_transcript_ref(backend, suite, r.case_id, r.sample, case.attempt)
    store.add_samples(run_id, [sample_row(case, ref)])
    card = build_scorecard(
        suite,
        produced_by(backend, settings.approval_mode),
        [r],
        max_failure_rate=settings.max_failure_rate,
        max_transient=settings.max_transient,
        external_fixtures=external_fixtures,
    )  # a run of one sample: its count and its gate at the scenario's own failure rate
    store.finish_run(
        run_id, card, case.finished_at, case.reproduced, "finished", scorecard_sha256(card)
    )


def _capturing(make_env: Callable[[], Any], envs: list[object]) -> Callable[[], Any]:
    """``make_env`` that also keeps each environment it makes (to read its retrievals)."""

    def make() -> Any:
        env = make_env()
        envs.append(env)
        return env

    return make


def retrievals_of(env: object) -> list[Retrieval | tuple[str, str]]:
    """What an attempt's environment says its tools retrieved: its ``retrievals()`` when it
    has one (the lead-intelligence tools' ``LeadEnv``), else none; each a
    :class:`~agentic_eval.workflow.records.Retrieval` or a (source, text) pair."""
    method = cast(Callable[[], Iterable[object]] | None, getattr(env, "retrievals", None))
    if not callable(method):
        return []
    kept: list[Retrieval | tuple[str, str]] = []
    for item in method():
        if isinstance(item, Retrieval):
            kept.append(item)
        else:
            source, text = cast(tuple[object, object], item)
            kept.append((str(source), str(text)))
    return kept


def agent_user(wf: Workflow, backend: ModelBackend) -> User:
    """The workflow user an agent's claims are made by."""
    return wf.ensure_user(f"agent:{backend.info().agent}", role="agent")


def seed_job(wf: Workflow, scenario: AgentScenario) -> str:
    """:func:`seed` from synchronous code (not inside a running event loop).

    Returns:
        The job id.
    """
    return run_sync(seed(wf, scenario))


def seeding_operator(scenario: AgentScenario) -> Operator:
    """The eval's operator of a scenario's job: it approves each seeded upstream output, then
    rejects each seeded earlier attempt with its reason (decisions recorded in the scenario)."""
    upstream = [OperatorDecision.approve() for _ in scenario.workflow.upstream(scenario.template)]
    earlier = [OperatorDecision.reject(reason) for _, reason in scenario.rejections]
    return Recorded(OPERATOR, [*upstream, *earlier])


async def seed(wf: Workflow, scenario: AgentScenario, operator: Operator | None = None) -> str:
    """Create the scenario's job and bring it, through the services, to where the agent starts:
    each upstream step claimed, finished with its seeded output and decided, then each earlier
    attempt of the step; ``operator`` decides them (default :func:`seeding_operator`).

    Returns:
        The job id.
    """
    flow = scenario.workflow
    decider = operator or seeding_operator(scenario)
    me = wf.ensure_user(decider.name, role="operator")
    seeder = wf.ensure_user(SEEDER, role="worker")
    wf.ensure_template(flow.key, flow.step_keys(), title=flow.title)
    job = wf.create_job(
        flow.key,
        created_by=me.id,
        requirements=scenario.requirements,
        inputs=scenario.inputs,
        title=f"scenario {scenario.name}",
        origin="scenario",  # its seeded decisions are the eval's, never a human's
    )
    seeded = [
        (key, scenario.upstream[key], "seeded upstream") for key in flow.upstream(scenario.template)
    ]
    seeded += [
        (scenario.template, output, "seeded earlier attempt") for output, _ in scenario.rejections
    ]
    for key, output, note in seeded:
        claim = wf.claim_step(job.id, key, seeder.id)
        attempt = wf.finish_attempt(claim.id, output, note=note)
        review = Review(
            job=job, step_key=key, attempt_number=attempt.number, output=attempt.output,
            outcome=Outcome(kind="passed"), checks=(), feedback=tuple(attempt.feedback),
        )  # fmt: skip
        decision = await decider(review)
        wf.decide(attempt.id, me.id, decision.decision, decision.reason)
    return job.id


async def attempt_step(
    wf: Workflow,
    job_id: str,
    step_key: str,
    *,
    workflow: WorkflowDefinition,
    backend: ModelBackend,
    settings: RunSettings,
    case_id: str,
    extra_checks: Sequence[Check] = (),
    sample: int = 0,
    attempt: int = 1,
    external_fixtures: str | None = None,
    mode: BackendKind | None = None,
    on_sample: Callable[[CaseRun], None] | None = None,
    served: KeptRetrievals | None = None,
) -> StepRun:
    """Claim ``step_key`` of a job for the agent, run it, and finish the attempt.

    The sample is keyed (``case_id``, epoch ``sample``, ``attempt``): ``attempt`` is the
    agent's rejection round at the step (1: its first attempt), never packed into the epoch.

    The agent sees the job's requirements and inputs, the upstream outputs approved as of its
    claim, and every earlier rejection reason. An output that validated is submitted for an
    operator's decision (whatever the checks said: the operator decides, the eval judges); an
    attempt with no valid output fails and the step goes back to pending. The attempt is also
    kept as an eval run of one sample (``mode``: replay, scripted or live; default: scripted
    for a scripted backend, else live). ``served``: a replay of a real job, whose first
    attempt's retrievals the tools serve instead of the sources.
    """
    claim = wf.claim_step(job_id, step_key, agent_user(wf, backend).id)
    job = wf.job(job_id)
    step_attempt = next(a for a in wf.attempts(job_id, step_key) if a.id == claim.attempt_id)
    spec = step_task(
        workflow,
        step_key,
        case_id=case_id,
        requirements=job.requirements,
        inputs=job.inputs,
        upstream=wf.outputs_as_of(job_id, claim.claimed_at),
        feedback=step_attempt.feedback,
        extra_checks=extra_checks,
        limits=settings.limits,
        sample=sample,
        external_fixtures=external_fixtures,
        served=served,
    )
    if attempt != 1:
        spec = dataclasses.replace(spec, attempt=attempt)
    envs: list[object] = []
    spec = dataclasses.replace(spec, make_env=_capturing(spec.make_env, envs))
    try:
        case = await run_case(spec, backend, settings)
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:  # stopped: interrupted, not failed
        wf.interrupt(f"{type(exc).__name__} during the attempt", [claim.id])
        wf.finish_attempt(claim.id, None, note=f"interrupted: {type(exc).__name__}")  # no-op if so
        raise
    except BaseException as exc:  # refused: the claim must not stay live
        wf.finish_attempt(claim.id, None, note=f"interrupted: {type(exc).__name__}")
        raise
    outcome = case.result.outcome
    transcript = case.transcript
    output = transcript.output if transcript is not None else None
    note = outcome.kind + (f": {outcome.reason}" if outcome.reason else "")
    wf.finish_attempt(  # first: a store failure below leaves no claim
        claim.id, output, note=note, retrievals=retrievals_of(envs[-1] if envs else None)
    )
    if on_sample is not None:  # a sample of a batch run: the batch's sinks keep it
        on_sample(case)
    else:
        _store_sample(
            wf, spec.suite, case, backend, settings, mode, step_attempt.id, external_fixtures
        )
    return StepRun(
        job_id=job_id,
        step_key=step_key,
        claim_id=claim.id,
        attempt_id=step_attempt.id,
        attempt_number=step_attempt.number,
        feedback=tuple(step_attempt.feedback),
        case=case,
    )


async def run_scenario(
    wf: Workflow,
    scenario: AgentScenario,
    backend: ModelBackend,
    settings: RunSettings,
    *,
    sample: int = 0,
    mode: BackendKind | None = None,
    on_sample: Callable[[CaseRun], None] | None = None,
) -> StepRun:
    """Seed the scenario's job, run the agent's attempt at its step, and judge it.

    ``on_sample`` takes the judged sample instead of the one-sample eval run each attempt is
    otherwise kept as (a batch writes every epoch into its own run). Never raises for agent,
    provider or suite-code failures: each is an outcome.
    """
    job_id = await seed(wf, scenario)
    return await attempt_step(
        wf,
        job_id,
        scenario.template,
        workflow=scenario.workflow,
        backend=backend,
        settings=settings,
        case_id=scenario.name,
        extra_checks=scenario.checks,
        sample=sample,
        external_fixtures=scenario.external_fixtures,
        mode=mode,
        on_sample=on_sample,
        served=scenario.served,
    )


async def reject_and_retry(
    wf: Workflow,
    previous: StepRun,
    reason: str,
    *,
    workflow: WorkflowDefinition,
    backend: ModelBackend,
    settings: RunSettings,
    case_id: str,
    extra_checks: Sequence[Check] = (),
    external_fixtures: str | None = None,
    mode: BackendKind | None = None,
    served: KeptRetrievals | None = None,
) -> StepRun:
    """The operator rejects ``previous`` with ``reason``; the agent tries again with it as
    feedback: the same epoch, the next attempt (so a recording keeps every round, and several
    epochs of the scenario never meet its rounds)."""
    operator = wf.ensure_user(OPERATOR, role="operator")
    wf.decide(previous.attempt_id, operator.id, "reject", reason)
    return await attempt_step(
        wf,
        previous.job_id,
        previous.step_key,
        workflow=workflow,
        backend=backend,
        settings=settings,
        case_id=case_id,
        extra_checks=extra_checks,
        sample=previous.epoch,
        attempt=previous.attempt + 1,
        external_fixtures=external_fixtures,
        mode=mode,
        served=served,
    )
