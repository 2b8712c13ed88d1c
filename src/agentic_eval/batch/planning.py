"""Plans of what a command asks for: a domain's cases on a backend, a recorded agent replayed, a
workflow scenario, or the corpus of human-decided jobs.

The commands parse flags into these calls and print what comes back; every limit and gate
threshold of the run is in the plan's parameters.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch.plan import (
    CorpusEntry,
    CorpusSelection,
    GateMode,
    RunPlan,
    SampleKey,
    WorkflowDrive,
)
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains.base import Domain
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store


def model_name(spec: BackendSpec) -> str:
    """The model name a spec's backend reports (``scripted:<label>`` for scripted agents)."""
    if spec.kind == "scripted":
        return f"scripted:{spec.label or spec.agent or 'reference'}"
    return spec.model


def suite_plan(
    domain: Domain[Any],
    cases: Sequence[CaseSpec],
    spec: BackendSpec,
    parameters: RunParameters,
    *,
    samples: int = 1,
    concurrency: int = 1,
    full: bool = True,
    gate: GateMode = "rate",
) -> RunPlan:
    """``samples`` epochs of each of ``cases`` on the scripted or live backend ``spec``."""
    keys = tuple(SampleKey(case=c.id, epoch=e) for c in cases for e in range(samples))
    return RunPlan(
        suite=domain.name,
        keys=keys,
        backend=spec,
        model=model_name(spec),
        parameters=parameters,
        concurrency=concurrency,
        gate=gate,
        full=full,
    )


def replay_plan(
    domain: Domain[Any],
    cases: Sequence[CaseSpec],
    recordings: Path,
    agent: str,
    *,
    concurrency: int = 1,
    full: bool = True,
    unrecorded: list[str] | None = None,
) -> RunPlan:
    """Every recorded sample of ``cases`` by ``agent`` (sample 0 of a case never recorded, so
    it fails loudly), with the parameters it was recorded with.

    With ``unrecorded`` (a list to fill), a partial recording (made with ``--cases``) replays
    what it holds: a case with no transcript that its scorecard does not list either was never
    recorded, and is left out and named there instead of failing (a case the scorecard lists
    whose transcript is gone still fails loudly).

    Raises:
        RecordingError: When the agent's recording folder cannot be read, or records none of
            ``cases``.
    """
    directory = agent_dir(recordings, domain.name, agent)
    backend = ReplayBackend(directory)
    if unrecorded is not None:
        held = {c for c, _ in backend.paths} | _scorecard_cases(directory)
        unrecorded.extend(c.id for c in cases if c.id not in held)
        cases = [c for c in cases if c.id in held]
        full = full and not unrecorded
    keys: list[SampleKey] = []
    for case in cases:
        samples = sorted(s for c, s in backend.paths if c == case.id) or [0]
        keys.extend(SampleKey(case=case.id, epoch=s) for s in samples)
    if not keys:
        recorded = sorted({c for c, _ in backend.paths})
        shown = ", ".join(recorded[:5]) + (" ..." if len(recorded) > 5 else "")
        from agentic_eval.recordings.files import RecordingError

        raise RecordingError(
            f"{directory}: records none of the cases asked for (it records: {shown or 'nothing'})"
        )
    return RunPlan(
        suite=domain.name,
        keys=tuple(keys),
        backend=BackendSpec(kind="replay", agent=agent, recordings=str(recordings)),
        model=backend.info().model,
        parameters=backend.parameters(),
        concurrency=concurrency,
        full=full,
    )


def _scorecard_cases(directory: Path) -> set[str]:
    """The case ids a recording's scorecard lists (none when it has no readable scorecard)."""
    from agentic_eval.recordings.files import RecordingError, read_scorecard, scorecard_path

    try:
        return {c.case_id for c in read_scorecard(scorecard_path(directory)).cases}
    except RecordingError:
        return set()


def scenario_plan(
    name: str,
    spec: BackendSpec,
    parameters: RunParameters,
    *,
    samples: int = 1,
    concurrency: int = 1,
    gate: GateMode = "rate",
) -> RunPlan:
    """``samples`` epochs of the workflow scenario ``name``, each in a freshly seeded job;
    ``parameters.max_failure_rate`` is the caller's (the scenario's own by default: see
    :func:`scenario_parameters`).

    Raises:
        WorkflowError: No such scenario.
    """
    from agentic_eval.workflow.scenarios import get_scenario

    s = get_scenario(name)
    return RunPlan(
        kind="scenario",
        suite=s.workflow.key,
        scenario=s.name,
        keys=tuple(SampleKey(case=s.name, epoch=e) for e in range(samples)),
        backend=spec,
        model=_replayed_model(spec, s.workflow.key) if spec.kind == "replay" else model_name(spec),
        parameters=parameters,
        concurrency=concurrency,
        gate=gate,
    )


def _replayed_model(spec: BackendSpec, suite: str) -> str:
    """The model a replayed scenario recording names (``replay`` when it cannot be read:
    the replay then fails loudly, sample by sample)."""
    from agentic_eval.recordings.files import RecordingError

    if spec.recordings is None:
        return "replay"
    try:
        backend = ReplayBackend(agent_dir(Path(spec.recordings), suite, spec.agent or "reference"))
    except RecordingError:
        return "replay"
    return backend.info().model


def corpus_plan(
    store: Store,
    spec: BackendSpec,
    parameters: RunParameters,
    *,
    template: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    origins: Collection[str] | None = None,
    samples: int = 1,
    concurrency: int = 1,
    gate: GateMode = "rate",
) -> RunPlan:
    """``samples`` epochs of each corpus case: every human-decided step of the jobs selected
    (newest first), judged by its first decision (``corpus_cases``), each rebuilt as its first
    attempt saw it. Only ``approved`` cases are judged; ``rejected`` ones run with the reason as
    feedback.

    Raises:
        BatchError: An empty selection, a selection spanning templates, a template this
            installation does not define, an unknown scripted agent, a case that cannot be
            rebuilt, a replay or recorded backend (not supported for a corpus yet), or bad
            filters.
    """
    from agentic_eval.batch.run import BatchError
    from agentic_eval.batch.workflow_samples import CorpusCaseGone, plan_scenarios
    from agentic_eval.corpus import case_name, corpus_cases
    from agentic_eval.workflow.records import HUMAN_ORIGINS, JOB_ORIGINS, JobOrigin
    from agentic_eval.workflow.scenarios import workflows
    from agentic_eval.workflow.service import Workflow

    if spec.kind == "replay" or spec.record:
        raise BatchError("a corpus batch runs a scripted or live agent (replay and --record of a "
                         "corpus are not supported yet)")  # fmt: skip
    chosen = tuple(origins or HUMAN_ORIGINS)
    unknown = [o for o in chosen if o not in JOB_ORIGINS]
    if unknown:
        raise BatchError(f"unknown job origin {unknown[0]!r} (known: {', '.join(JOB_ORIGINS)})")
    try:
        cases = corpus_cases(
            Workflow(store), template=template, since=since, until=until, limit=limit,
            origins=cast(tuple[JobOrigin, ...], chosen),
        )  # fmt: skip
    except ValueError as exc:
        raise BatchError(str(exc)) from None
    if not cases:
        raise BatchError(
            f"the corpus is empty: no decided step of a {' or '.join(chosen)} job matches "
            "(see `agentic-eval corpus list`)"
        )
    templates = sorted({c.job.template_key for c in cases})
    if len(templates) > 1:
        raise BatchError(f"the corpus spans templates {', '.join(templates)}: pick one with "
                         "--template")  # fmt: skip
    if templates[0] not in workflows():
        raise BatchError(f"the corpus's jobs are of template {templates[0]!r}, which is not a "
                         f"workflow defined here (known: {', '.join(workflows())})")  # fmt: skip
    suite = templates[0]
    _scripted_agent_exists(spec, suite)
    entries = tuple(
        CorpusEntry(
            case=case_name(c.job.id, c.step_key),
            job_id=c.job.id,
            step=c.step_key,
            verdict=c.verdict,
            decision_id=c.decision.id,
        )
        for c in cases
    )
    selection = CorpusSelection(
        template=template, since=since, until=until, limit=limit, origins=chosen,
        entries=entries,
    )  # fmt: skip
    plan = RunPlan(
        kind="corpus",
        suite=suite,
        keys=tuple(SampleKey(case=e.case, epoch=n) for e in entries for n in range(samples)),
        backend=spec,
        model=model_name(spec),
        parameters=parameters,
        concurrency=concurrency,
        gate=gate,
        corpus=selection,
    )
    try:  # every case rebuilds now, or the batch does not start
        plan_scenarios(store, plan, [SampleKey(case=e.case) for e in entries])
    except CorpusCaseGone as exc:
        raise BatchError(str(exc)) from None
    return plan


def workflow_plan(
    fixture: str,
    spec: BackendSpec,
    parameters: RunParameters,
    *,
    runs: int = 1,
    max_attempts: int = 3,
    operator: str = "policy-operator",
    concurrency: int = 1,
    gate: GateMode = "rate",
) -> RunPlan:
    """``runs`` jobs from the job fixture ``fixture``, each driven through every step of its
    workflow, an operator policy approving what passed its checks and rejecting the rest with a
    reason naming them (a rejected step is attempted again, up to ``max_attempts``).

    Raises:
        BatchError: An unknown fixture or scripted agent, a replay or recorded backend (not
            supported for a workflow batch yet).
    """
    from agentic_eval.batch.run import BatchError
    from agentic_eval.workflow.scenarios import UnknownScenario, get_job_fixture

    if spec.kind == "replay" or spec.record:
        raise BatchError("a workflow batch runs a scripted or live agent (replay and --record "
                         "of a workflow batch are not supported yet)")  # fmt: skip
    try:
        f = get_job_fixture(fixture)
    except UnknownScenario as exc:
        raise BatchError(str(exc)) from None
    suite = f.workflow.key
    _scripted_agent_exists(spec, suite)
    return RunPlan(
        kind="workflow",
        suite=suite,
        keys=tuple(SampleKey(case=f.name, epoch=n) for n in range(runs)),
        backend=spec,
        model=model_name(spec),
        parameters=parameters,
        concurrency=concurrency,
        gate=gate,
        drive=WorkflowDrive(fixture=f.name, operator=operator, max_attempts=max_attempts),
    )


def _scripted_agent_exists(spec: BackendSpec, suite: str) -> None:
    """A scripted spec names one of the workflow ``suite``'s agents.

    Raises:
        BatchError: Naming the agents it has.
    """
    from agentic_eval.batch.run import BatchError
    from agentic_eval.workflow.scenarios import scripted_agents

    if spec.kind != "scripted":
        return
    known, name = scripted_agents(suite), spec.agent or "reference"
    if name not in known:
        raise BatchError(f"{suite} has no scripted agent {name!r} "
                         f"({', '.join(sorted(known)) or 'none'})")  # fmt: skip
