"""The samples of a workflow plan: each epoch of a scenario, or of a corpus case, in a freshly
seeded job, run through the workflow services; the judged sample goes to the batch's sinks (not
to a one-sample run of its own)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from agentic_eval.backends.base import ModelBackend
from agentic_eval.batch.plan import RunPlan, SampleKey
from agentic_eval.evaluation.persist import CorpusStamp
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.store.db import Store

if TYPE_CHECKING:  # the workflow runtime is imported when a workflow plan runs, not before
    from agentic_eval.workflow.scenarios import AgentScenario
    from agentic_eval.workflow.service import Workflow


class CorpusCaseGone(Exception):
    """A corpus plan's case can no longer be rebuilt from the store (one line)."""


def corpus_stamps(plan: RunPlan) -> Mapping[str, CorpusStamp]:
    """What each case of a corpus plan's samples is stamped with (empty for other plans)."""
    return {c: CorpusStamp(e.job_id, e.verdict) for c, e in plan.entries().items()}


def plan_scenarios(
    store: Store, plan: RunPlan, keys: Sequence[SampleKey]
) -> dict[str, AgentScenario]:
    """The scenario of each case among ``keys``: the plan's scenario, or each corpus case
    rebuilt from its job as the first attempt saw it.

    Raises:
        CorpusCaseGone: A corpus case whose job, step or decision cannot be read any more, or
            whose template this installation no longer defines.
    """
    from agentic_eval.workflow.scenarios import UnknownScenario, get_scenario

    if plan.kind == "scenario":
        assert plan.scenario is not None
        return {plan.scenario: get_scenario(plan.scenario)}
    from agentic_eval.corpus import case_scenario
    from agentic_eval.workflow.errors import WorkflowError
    from agentic_eval.workflow.service import Workflow

    wf = Workflow(store)
    entries = plan.entries()
    found: dict[str, AgentScenario] = {}
    for case in dict.fromkeys(k.case for k in keys):
        e = entries[case]
        try:
            found[case] = case_scenario(wf, e.job_id, e.step, e.decision_id)
        except (WorkflowError, UnknownScenario) as exc:
            raise CorpusCaseGone(f"corpus case {case}: {exc}") from None
    return found


async def workflow_samples(
    store: Store,
    run_id: str,
    plan: RunPlan,
    keys: list[SampleKey],
    backend: ModelBackend,
    persist: Callable[[CaseRun], None],
    should_stop: Callable[[], bool] | None,
) -> None:
    """Each key's epoch of its scenario in a freshly seeded job, or (a workflow plan) each job
    driven through the whole workflow, ``plan.concurrency`` at once.

    Raises:
        CorpusCaseGone: As :func:`plan_scenarios`.
    """
    from agentic_eval.evaluation.scenario import run_scenario
    from agentic_eval.workflow.service import Workflow

    wf = Workflow(store)
    settings = plan.settings()
    semaphore = asyncio.Semaphore(plan.concurrency)
    drive: Callable[[SampleKey], Awaitable[None]]
    if plan.drive is not None:
        drive = _job_driver(wf, run_id, plan, backend, persist)
    else:
        scenarios = plan_scenarios(store, plan, keys)

        async def scenario_sample(key: SampleKey) -> None:
            await run_scenario(
                wf, scenarios[key.case], backend, settings, sample=key.epoch,
                mode=plan.backend.kind, on_sample=persist,
            )  # fmt: skip

        drive = scenario_sample

    async def one(key: SampleKey) -> None:
        async with semaphore:
            if should_stop is not None and should_stop():
                return
            await drive(key)

    async with asyncio.TaskGroup() as group:
        for key in keys:
            group.create_task(one(key))


def _job_driver(
    wf: Workflow,
    run_id: str,
    plan: RunPlan,
    backend: ModelBackend,
    persist: Callable[[CaseRun], None],
) -> Callable[[SampleKey], Awaitable[None]]:
    """What drives one job of a workflow plan: a job from its fixture, the policy operator
    deciding every step; the job is the sample."""
    from agentic_eval.evaluation.driving import drive_job, job_title
    from agentic_eval.workflow.operators import CheckPolicy
    from agentic_eval.workflow.scenarios import get_job_fixture

    assert plan.drive is not None
    d = plan.drive
    fixture, operator, settings = (
        get_job_fixture(d.fixture),
        CheckPolicy(d.operator),
        plan.settings(),
    )

    async def drive(key: SampleKey) -> None:
        driven = await drive_job(
            wf, fixture, backend, settings, operator, epoch=key.epoch,
            title=job_title(run_id, key.epoch, d.fixture), max_attempts=d.max_attempts,
            mode=plan.backend.kind,
        )  # fmt: skip
        persist(driven.sample)

    return drive
