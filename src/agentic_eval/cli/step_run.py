"""The work behind ``agentic-eval step``: build the backend, run the attempt(s), print them."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentic_eval.agent.loop import Limits
from agentic_eval.backends.base import AuthenticationFailed, BackendError, ModelBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.cli.common import CannotRun, open_recorder
from agentic_eval.cli.step_view import ShowingBackend, echo, print_attempt, print_header
from agentic_eval.cli.workflow import ClaimGuard, Interrupted
from agentic_eval.core.text import one_line
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.evaluation.driving import review_of
from agentic_eval.evaluation.scenario import (
    MAX_REJECTIONS,
    OPERATOR,
    StepRun,
    reject_and_retry,
    run_scenario,
)
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.files import RecordingError, list_agents, list_transcript_files
from agentic_eval.recordings.layout import LabelError, agent_dir, check_label
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store, StoreError
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.operators import OperatorDecision, Review
from agentic_eval.workflow.scenarios import (
    AgentScenario,
    UnknownScenario,
    get_scenario,
    scenarios,
    scripted_agents,
)
from agentic_eval.workflow.service import Workflow

if TYPE_CHECKING:
    from agentic_eval.cli.step import StepMode, StepOptions


def list_scenarios() -> int:
    """One line per registered scenario."""
    try:
        found = scenarios()
    except FixtureError as exc:
        raise CannotRun(one_line(str(exc))) from None
    for s in found.values():
        checks = ", ".join(c.name for c in s.all_checks())
        echo(
            f"{s.name}\t{s.workflow.key}/{s.template}\tagent {s.agent}\t"
            f"max failure rate {s.max_failure_rate:g}\tchecks: {checks}\t{s.description}"
        )
    return 0


def list_jobs(limit: int = 30) -> int:
    """The jobs a step can be replayed from (a step claimed at least once), newest first: id,
    template, origin, state, and each claimed step with its first claim's time."""
    from agentic_eval.cli.workflow import open_workflow

    wf = open_workflow()
    try:
        shown = 0
        for job in wf.jobs():
            claims: dict[str, datetime] = {}
            for c in wf.claims(job.id):
                claims.setdefault(c.step_key, c.claimed_at)
            if not claims:
                continue
            steps = ", ".join(
                f"{k} ({at.isoformat(timespec='seconds')})" for k, at in claims.items()
            )
            echo(f"{job.id}  {job.template_key}  {job.origin}  {job.state}  {steps}")
            shown += 1
            if shown >= limit:
                echo(
                    f"(the newest {limit}; `agentic-eval corpus list` filters by template and time)"
                )
                break
        if not shown:
            echo("no job has a claimed step yet: nothing to replay (`step --scenario` seeds one)")
    except (WorkflowError, StoreError) as exc:
        raise CannotRun(one_line(str(exc))) from None
    finally:
        wf.store.close()
    return 0


def _scenario(o: StepOptions, wf: Workflow) -> AgentScenario:
    try:
        if o.scenario is not None:
            return get_scenario(o.scenario)
        from agentic_eval.corpus.jobs import scenario_from_job

        assert o.job is not None
        return scenario_from_job(wf, o.job, o.step_key)
    except (UnknownScenario, WorkflowError) as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except FixtureError as exc:
        raise CannotRun(one_line(str(exc))) from None


def _spec(o: StepOptions, s: AgentScenario) -> BackendSpec:
    """The backend the flags ask for, as a spec (``build_backend`` builds it)."""
    suite = s.workflow.key
    if o.mode == "scripted":
        name = o.agent or s.agent
        agents = scripted_agents(suite)
        if name not in agents:
            known = ", ".join(agents) or "none"
            raise click.UsageError(f"{suite} has no scripted agent {name!r} ({known})")
        return BackendSpec(kind="scripted", agent=name)
    if o.mode == "replay":
        agent = o.agent or s.agent
        recorded = list_agents(o.recordings, suite)
        if agent not in recorded:
            known = ", ".join(recorded) or "none"
            raise click.UsageError(
                f"no recordings of agent {agent!r} for {suite} under {o.recordings} "
                f"(recorded: {known})"
            )
        return BackendSpec(kind="replay", agent=agent, recordings=str(o.recordings))
    assert o.provider is not None and o.model is not None
    if o.agent is not None:
        try:
            check_label(o.agent)
        except LabelError as exc:
            raise click.UsageError(f"--agent: {exc}") from None
    return BackendSpec(
        kind="live",
        provider=o.provider,
        model=o.model,
        base_url=o.base_url,
        label=o.agent,
        retries=o.retries,
        timeout=o.timeout,
    )


def _backend(o: StepOptions, s: AgentScenario) -> tuple[ModelBackend, RunSettings]:
    from agentic_eval.batch import build_backend

    spec = _spec(o, s)
    try:
        backend = build_backend(spec, s.workflow.key, scripted_agents(s.workflow.key))
    except (BackendError, RecordingError) as exc:
        raise CannotRun(one_line(str(exc))) from None
    if isinstance(backend, ReplayBackend):  # what the recording says the run was
        if not any(key.case_id == s.name for key in backend.files):
            raise click.UsageError(
                f"no recording of scenario {s.name} by {spec.agent!r} under {o.recordings}"
            )
        return backend, RunSettings.from_parameters(backend.info().model, backend.parameters())
    limits = Limits(max_turns=o.max_turns)
    model = backend.info().model if spec.kind == "scripted" else o.model or ""
    return backend, RunSettings(model=model, limits=limits, max_failure_rate=s.max_failure_rate)


def _exit_code(run: StepRun) -> int:
    if run.case.reproduced is False:
        return 1
    kind = run.outcome.kind
    return 0 if kind == "passed" else 2 if kind == "transient" else 1


class LeftUndecided(Exception):
    """The operator at the terminal chose to leave the attempt undecided."""


class PromptOperator:
    """The person at the terminal as the operator (``step --interactive``): approve, reject
    with a reason, or quit (the attempt stays submitted, undecided)."""

    name = OPERATOR

    def __init__(self, guard: ClaimGuard) -> None:
        self.guard = guard

    async def __call__(self, review: Review) -> OperatorDecision:
        if review.outcome.kind != "passed":
            echo(
                f"note: this attempt ended {review.outcome.kind}; approving it is the operator's "
                "call"
            )
        with self.guard.blocking():
            choice = click.prompt(
                "operator decision",
                type=click.Choice(["approve", "reject", "quit"]),
                show_choices=True,
            )
        if choice == "quit":
            raise LeftUndecided
        if choice == "approve":
            return OperatorDecision.approve()
        reason = ""
        while not reason.strip():
            with self.guard.blocking():
                reason = str(click.prompt("rejection reason (fed back to the agent)"))
        return OperatorDecision.reject(reason.strip())


async def _interact(
    wf: Workflow,
    s: AgentScenario,
    run: StepRun,
    backend: ModelBackend,
    settings: RunSettings,
    mode: StepMode,
    guard: ClaimGuard,
) -> StepRun:
    operator = PromptOperator(guard)
    rejections = 0
    while True:
        transcript = run.case.transcript
        if transcript is None or transcript.output is None:
            echo("the attempt submitted no valid output: there is nothing to approve or reject")
            return run
        if rejections >= MAX_REJECTIONS:
            echo(
                f"{MAX_REJECTIONS} rejections: the loop ends; "
                "the last attempt stays submitted, undecided"
            )
            return run
        try:
            decision = await operator(review_of(wf, run))
        except LeftUndecided:
            echo("left undecided: the attempt stays submitted")
            return run
        if decision.decision == "approve":
            me = wf.ensure_user(operator.name, role="operator")
            wf.decide(run.attempt_id, me.id, "approve")
            echo(f"approved: step {run.step_key} of job {run.job_id}")
            return run
        rejections += 1
        echo(f"=== rejected ({rejections}/{MAX_REJECTIONS}): {decision.reason}")
        run = await reject_and_retry(
            wf,
            run,
            decision.reason,
            workflow=s.workflow,
            backend=backend,
            settings=settings,
            case_id=s.name,
            extra_checks=s.checks,
            external_fixtures=s.external_fixtures,
            mode=mode,
            served=s.served,
        )
        print_attempt(run)


async def execute_step(o: StepOptions) -> int:
    """Run the step (and, with ``--interactive``, the operator's rejection rounds). On
    SIGINT/SIGTERM the claim this process holds is released as interrupted and the exit code
    is 130/143."""
    try:
        store = Store()
        wf = Workflow(store)
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    except WorkflowError as exc:  # a bad AGENTIC_EVAL_CLAIM_LEASE
        raise click.UsageError(one_line(str(exc))) from None
    s = _scenario(o, wf)
    backend, settings = _backend(o, s)
    if o.record:
        backend = open_recorder(
            backend,
            o.recordings,
            s.workflow.key,
            what=s.name,
            real_fixtures=bool(s.external_fixtures),
        )
    if o.show_prompt:
        backend = ShowingBackend(backend)
    info = backend.info()
    print_header(s, info.agent, f"{o.mode}, {info.model}")
    guard = ClaimGuard(wf, "step")  # SIGINT/SIGTERM: the agent's claim is released, 130/143
    guard.install()
    try:
        run = await run_scenario(wf, s, backend, settings, mode=o.mode)
        print_attempt(run)
        if o.interactive:
            run = await _interact(wf, s, run, backend, settings, o.mode, guard)
    except (asyncio.CancelledError, Interrupted):
        if guard.signal is None:
            raise
        return guard.exit_code()
    except AuthenticationFailed as exc:
        raise CannotRun(one_line(f"{o.provider}: {exc}")) from None
    except (WorkflowError, StoreError, RecordingError) as exc:
        if guard.signal is not None:  # the clean-up of an interrupted attempt
            return guard.exit_code()
        raise CannotRun(one_line(str(exc))) from None
    finally:
        guard.remove()
        await backend.aclose()
    if o.record and run.outcome.kind == "transient":
        click.echo(
            "agentic-eval: warning: the provider failed (transient): this attempt was not "
            "recorded, and any earlier recording of it is left as it was",
            err=True,
        )
    if o.record:
        folder = agent_dir(o.recordings, s.workflow.key, info.agent)
        _warn_stale_rounds(folder, s.name, run.epoch, run.attempt)
    return _exit_code(run)


def _warn_stale_rounds(folder: Path, name: str, epoch: int, last: int) -> None:
    """Recording never deletes a file it did not write: name the later rounds (attempts past
    ``last`` of the same epoch) an earlier recording left in place."""
    stale = [
        path.name
        for key, path in list_transcript_files(folder).items()
        if key.case_id == name and key.sample == epoch and key.attempt > last
    ]
    if stale:
        click.echo(
            f"agentic-eval: warning: {folder} still holds later rounds of {name} from an "
            f"earlier recording ({', '.join(stale)}); delete them if they no longer belong",
            err=True,
        )
