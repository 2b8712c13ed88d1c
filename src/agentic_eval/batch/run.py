"""Open a run from its plan, run (some of) its samples, close it: the gate read from the store.

``open_run(store, plan)`` stores the plan on a new ``eval_run`` row. ``run_samples(store,
run_id)`` rebuilds everything from that row alone (the plan, its backend spec, its parameters)
and runs the planned samples the store does not hold yet, each written as it finishes through a
:class:`RunSink`; so a second call, from ``--resume`` or from another process, never runs or
counts a finished sample twice. ``close_run(store, run_id)`` reads the counts back with a query
and applies the gate arithmetic: the verdict never comes from memory, so samples written by
another process count too.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from agentic_eval.backends.base import ModelBackend
from agentic_eval.batch.backends import build_backend, plan_agents
from agentic_eval.batch.plan import RunPlan, SampleKey
from agentic_eval.batch.workflow_samples import CorpusCaseGone, corpus_stamps, workflow_samples
from agentic_eval.core.process import this_process
from agentic_eval.core.scorecard import CaseResult, GateSummary
from agentic_eval.domains.base import Domain
from agentic_eval.domains.registry import get_domain
from agentic_eval.evaluation.confidence import CaseEpochs, PassHatK, upper_bound_gate
from agentic_eval.evaluation.persist import CorpusStamp
from agentic_eval.evaluation.runner import CaseRun, produced_by, run_tasks
from agentic_eval.evaluation.session import (
    SessionResult,
    frozen_heap,
    heartbeat_loop,
    stored_gate,
)
from agentic_eval.evaluation.sinks import RunSink, StoreSink
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalRun
from agentic_eval.tasks.spec import TaskSpec

if TYPE_CHECKING:  # the workflow runtime is imported when a workflow plan is summed up
    from agentic_eval.batch.readback import ShardRows
    from agentic_eval.evaluation.driving import StepTally


class BatchError(Exception):
    """A run that cannot be opened, resumed or closed (one line)."""


@dataclass(frozen=True)
class BatchSummary:
    """A run's verdict as read from the store."""

    run_id: str
    plan: RunPlan
    samples: int
    counts: dict[str, int]
    gate: GateSummary
    epochs: PassHatK
    """Each case's judged, passed and transient samples, counted in the store (pass^k and the
    flaky cases; :func:`stored_results` reads whole results back)."""
    status: str
    missing: int
    """Planned samples with no row (a stopped or unfinished run)."""
    verdicts: dict[str, int] = dataclasses.field(default_factory=lambda: {})
    """A corpus run's stored samples by their case's human verdict (``approved`` ones are
    the judged; ``rejected`` ones ran and are not in ``samples``); empty for other runs."""
    steps: tuple[StepTally, ...] = ()
    """A workflow batch: per step, attempts, approvals and rejections (with their reasons),
    read from the jobs it drove; empty for other runs."""
    session: SessionResult | None = None
    """The finished run (its scorecard rebuilt from the rows), once :func:`close_run` ran."""


def plan_of(run: EvalRun) -> RunPlan:
    """The plan stored on a run row.

    Raises:
        BatchError: The run has no plan (started before plans were stored) or an invalid one.
    """
    if run.plan is None:
        raise BatchError(f"run {run.id} has no stored plan (it was not started by batch)")
    try:
        stored = orjson.dumps(run.plan, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: validated (and refused) below
        stored = None
    last = _last_plan
    if stored is not None and last and last[0] == stored:
        return last[1]  # the same stored plan read again: it validates to the same (frozen) plan
    try:
        plan = RunPlan.model_validate(run.plan)
    except ValueError as exc:
        raise BatchError(f"run {run.id}: its stored plan is invalid: {exc}") from None
    if stored is not None:
        _last_plan[:] = [stored, plan]
    return plan


_last_plan: list[Any] = []
"""The last stored plan read (its JSON, sorted) and the plan it validated to: a run's plan is
read several times as it runs and closes, and validating a plan of many keys takes a while."""


def open_run(store: Store, plan: RunPlan, *, worker: str | None = None) -> str:
    """Store ``plan`` on a new run row; returns the run id (no sample runs yet).

    Raises:
        BackendError: When the plan's backend cannot be built (to name what produces the run).
        UnknownDomainError: When the suite is unknown.
    """
    backend = plan_backend(plan)
    return store.start_run(
        plan.suite,
        produced_by(backend, plan.parameters.approval_mode),
        plan.backend.kind,
        datetime.now(UTC),
        settings={"model": plan.model, **plan.parameters.model_dump(mode="json")},
        backend_spec=plan.backend.model_dump(mode="json"),
        planned_samples=len(plan.keys),
        worker=worker or this_process(),
        plan=plan.model_dump(mode="json"),
    )


def _specs(domain: Domain[Any], plan: RunPlan, keys: list[SampleKey]) -> list[TaskSpec[Any]]:
    cases = {c.id: c for c in domain.load_cases()}
    unknown = sorted({k.case for k in keys if k.case not in cases})
    if unknown:
        raise BatchError(f"{plan.suite} has no case {unknown[0]!r} any more (planned in the run)")
    wanted = {(k.case, k.epoch) for k in keys}
    epochs = max(k.epoch for k in keys) + 1
    chosen = [cases[c] for c in dict.fromkeys(k.case for k in keys)]
    specs = domain.task_specs(chosen, plan.limits(), epochs)
    return [s for s in specs if (s.case.id, s.sample) in wanted]


@dataclass(frozen=True)
class StoredPlan:
    """A run's plan as read from its row, with what running any of its samples needs: a worker
    keeps one per run across that run's tasks (the plan is fixed once the run is opened), so a
    task reads and scans the plan once per run, not once per sample."""

    run_id: str
    plan: RunPlan
    keys: frozenset[SampleKey]
    stamps: Mapping[str, CorpusStamp]


def stored_plan(store: Store, run_id: str) -> StoredPlan:
    """The run's stored plan.

    Raises:
        BatchError: No such run, or no (valid) plan on it.
    """
    run = store.run(run_id)
    if run is None:
        raise BatchError(f"no run {run_id} in the store")
    plan = plan_of(run)
    return StoredPlan(run_id, plan, frozenset(plan.keys), corpus_stamps(plan))


def pending(store: Store, stored: StoredPlan, keys: Iterable[SampleKey] | None) -> list[SampleKey]:
    """The planned samples (or ``keys`` among them), in plan order, that the store does not hold.

    Raises:
        BatchError: A key the run did not plan.
    """
    if keys is None:
        planned, asked = list(stored.plan.keys), None
    else:
        chosen = set(keys)
        check_planned(stored, chosen)
        planned = [k for k in stored.plan.keys if k in chosen] if len(chosen) > 1 else list(chosen)
        asked = [(k.case, k.epoch, k.attempt) for k in planned]
    done = store.stored_keys(stored.run_id, asked)
    return [k for k in planned if (k.case, k.epoch, k.attempt) not in done]


def check_planned(stored: StoredPlan, keys: Iterable[SampleKey]) -> None:
    """Refuse a sample the run did not plan.

    Raises:
        BatchError: Naming the first such sample.
    """
    outside = [k.name() for k in keys if k not in stored.keys]
    if outside:
        raise BatchError(f"run {stored.run_id} did not plan sample {sorted(outside)[0]}")


async def execute_samples(
    store: Store,
    stored: StoredPlan,
    todo: list[SampleKey],
    backend: ModelBackend,
    persist: Callable[[CaseRun], None],
    should_stop: Callable[[], bool] | None = None,
) -> None:
    """Run ``todo`` (planned, not stored) on ``backend``, each finished sample handed to
    ``persist``; the run's heartbeat moves meanwhile.

    Raises:
        BatchError: A case gone from the suite (or a corpus case whose job cannot be rebuilt).
        AuthenticationFailed: At the first refusal of credentials (live).
    """
    plan = stored.plan
    beat = asyncio.create_task(heartbeat_loop(store, stored.run_id))
    try:
        if plan.kind != "suite":
            await workflow_samples(store, stored.run_id, plan, todo, backend, persist, should_stop)
        else:
            specs = _specs(get_domain(plan.suite), plan, todo)
            with frozen_heap():  # as a session does: no full collection rescans the modules
                await run_tasks(
                    specs,
                    backend,
                    plan.settings(),
                    concurrency=plan.concurrency,
                    on_case=persist,
                    should_stop=should_stop,
                )
    except CorpusCaseGone as exc:
        raise BatchError(str(exc)) from None
    finally:
        beat.cancel()


async def run_samples(
    store: Store,
    run_id: str,
    *,
    keys: Iterable[SampleKey] | None = None,
    on_case: Callable[[CaseRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    worker: str | None = None,
    sinks: Iterable[RunSink] = (),
    backend: ModelBackend | None = None,
) -> int:
    """Run the run's planned samples (or ``keys`` among them) that the store does not hold yet,
    rebuilt from the stored plan; returns how many ran. ``backend``: one built from the plan
    already (:func:`plan_backend`), kept open for the caller's next call; otherwise one is
    built and closed here.

    Raises:
        BatchError: No such run, no plan, a key not in the plan, a case gone from the suite (or
            a corpus case whose job cannot be rebuilt).
        AuthenticationFailed: At the first refusal of credentials (live).
    """
    stored = stored_plan(store, run_id)
    todo = pending(store, stored, keys)
    if not todo:
        return 0
    own = backend is None
    if backend is None:
        backend = plan_backend(stored.plan)
    sinks_all: list[RunSink] = [
        StoreSink(store, run_id, backend, stored.plan.suite, worker, stored.stamps),
        *sinks,
    ]
    ran = 0

    def persist(case_run: CaseRun) -> None:
        nonlocal ran
        ran += 1
        for sink in sinks_all:
            sink.sample(case_run)
        if on_case is not None:
            on_case(case_run)

    try:
        await execute_samples(store, stored, todo, backend, persist, should_stop)
    finally:
        for sink in sinks_all:
            sink.flush()
        if own:
            await backend.aclose()
    return ran


def plan_backend(plan: RunPlan) -> ModelBackend:
    """The backend the plan's stored spec describes, built."""
    # only a scripted backend runs the suite's agents: a live one need not import them
    scripted = plan.backend.kind == "scripted"
    agents = plan_agents(plan.kind, plan.suite) if scripted else {}
    return build_backend(plan.backend, plan.suite, agents)


def summary(store: Store, run_id: str) -> BatchSummary:
    """The run's counts and gate, read from its sample rows (a query, never memory)."""
    run = store.run(run_id)
    if run is None:
        raise BatchError(f"no run {run_id} in the store")
    plan = plan_of(run)
    counts = store.gate_counts(run_id)
    samples = sum(counts[k] for k in ("passed", "check_failed", "error", "transient"))
    p = plan.parameters
    gate = stored_gate(store, run_id, p.max_failure_rate, p.max_transient, counts)
    if plan.gate == "upper-bound":
        gate = upper_bound_gate(gate)
    epochs = PassHatK(tuple(CaseEpochs(*row) for row in store.case_counts(run_id)))
    stored = store.stored_keys(run_id)
    missing = sum(1 for k in plan.keys if (k.case, k.epoch, k.attempt) not in stored)
    verdicts = store.verdict_counts(run_id) if plan.kind == "corpus" else {}
    return BatchSummary(
        run_id, plan, samples, counts, gate, epochs, run.status, missing, verdicts=verdicts,
        steps=_step_tallies(store, run_id, plan),
    )  # fmt: skip


def _step_tallies(store: Store, run_id: str, plan: RunPlan) -> tuple[StepTally, ...]:
    """A workflow batch's per-step tallies, from the jobs it drove (none for other plans)."""
    if plan.drive is None:
        return ()
    from agentic_eval.evaluation.driving import step_tallies
    from agentic_eval.workflow.scenarios import get_job_fixture
    from agentic_eval.workflow.service import Workflow

    steps = get_job_fixture(plan.drive.fixture).workflow.step_keys()
    return tuple(step_tallies(Workflow(store), run_id, steps))


def close_run(
    store: Store,
    run_id: str,
    *,
    status: str = "finished",
    sinks: Iterable[RunSink] | None = None,
    read: ShardRows | None = None,
) -> BatchSummary:
    """Finish the run: its scorecard rebuilt from the sample rows, its sinks closed (the plan's
    own unless ``sinks`` is given), its gate read from the store; ``status`` ``interrupted`` when
    it stopped early (``--resume`` finishes it later). ``read``: rows read back already (by
    :func:`~agentic_eval.batch.processes.run_on_processes`)."""
    from agentic_eval.batch.finish import finish_plan

    stopped = status != "finished"
    return _closed(store, finish_plan(store, run_id, sinks, stopped=stopped, read=read))


def _closed(store: Store, session: SessionResult) -> BatchSummary:
    """The summary of a finished run; the row's verdict cache follows the plan's gate."""
    s = summary(store, session.run_id)
    store.recount(session.run_id, s.gate.verdict, s.gate.failure_rate, counts=s.counts)
    return dataclasses.replace(s, status=session.status, session=session)


def stored_results(store: Store, run_id: str) -> Iterable[CaseResult]:
    """Every stored sample's whole result (checks included), read back from its row."""
    from agentic_eval.batch.finish import stored_runs

    return (r.result for r in stored_runs(store, run_id))


async def run_agent_batch(
    store: Store,
    plan: RunPlan,
    *,
    on_case: Callable[[CaseRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    worker: str | None = None,
    processes: int = 1,
) -> BatchSummary:
    """Open a run of ``plan``, run every sample (in ``processes`` child processes when more
    than one), close it; the gate is read from the store."""
    from agentic_eval.batch.finish import run_plan

    run_id = open_run(store, plan, worker=worker)
    session = await run_plan(
        store, run_id, on_case=on_case, should_stop=should_stop, worker=worker,
        processes=processes,
    )  # fmt: skip
    return _closed(store, session)


def plan_specs(plan: RunPlan) -> tuple[list[TaskSpec[Any]], Domain[Any] | None]:
    """One task spec per planned case (epoch 0), and the domain they came from (None for a
    scenario, a corpus or a workflow batch): what a run's fingerprints are taken over (none for
    a corpus, whose cases are rebuilt from the store's jobs, nor for a workflow batch)."""
    if plan.kind in ("corpus", "workflow"):
        return [], None
    if plan.kind == "scenario":
        from agentic_eval.workflow.scenarios import get_scenario
        from agentic_eval.workflow.steps import step_task

        assert plan.scenario is not None
        s = get_scenario(plan.scenario)
        spec = step_task(
            s.workflow,
            s.template,
            case_id=s.name,
            requirements=s.requirements,
            inputs=s.inputs,
            upstream=s.upstream,
            feedback=s.feedback(),
            extra_checks=s.checks,
            limits=plan.limits(),
            external_fixtures=s.external_fixtures,
        )
        return [spec], None
    domain = get_domain(plan.suite)
    firsts = [SampleKey(case=c) for c in dict.fromkeys(k.case for k in plan.keys)]
    return _specs(domain, plan, firsts), domain
