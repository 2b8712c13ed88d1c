"""Plans of what a command asks for: a domain's cases on a backend, or a recorded agent replayed.

The commands parse flags into these calls and print what comes back; every limit and gate
threshold of the run is in the plan's parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch.plan import GateMode, RunPlan, SampleKey
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains.base import Domain
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.recordings.replay import ReplayBackend


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
) -> RunPlan:
    """Every recorded sample of ``cases`` by ``agent`` (sample 0 of a case never recorded, so
    it fails loudly), with the parameters it was recorded with.

    Raises:
        RecordingError: When the agent's recording folder cannot be read.
    """
    backend = ReplayBackend(agent_dir(recordings, domain.name, agent))
    keys: list[SampleKey] = []
    for case in cases:
        samples = sorted(s for c, s in backend.paths if c == case.id) or [0]
        keys.extend(SampleKey(case=case.id, epoch=s) for s in samples)
    return RunPlan(
        suite=domain.name,
        keys=tuple(keys),
        backend=BackendSpec(kind="replay", agent=agent, recordings=str(recordings)),
        model=backend.info().model,
        parameters=backend.parameters(),
        concurrency=concurrency,
        full=full,
    )


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
