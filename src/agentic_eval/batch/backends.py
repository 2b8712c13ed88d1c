"""One way to build any backend from its stored spec: replay, scripted, live, recorded."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentic_eval.backends.base import BackendError, ModelBackend
from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.backends.spec import BackendSpec, live_backend_from_spec
from agentic_eval.domains.base import Domain
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.recordings.record import RecordingBackend
from agentic_eval.recordings.replay import ReplayBackend


def scripted_agents(domain: Domain[Any]) -> dict[str, Any]:
    """A domain's scripted agents and mutants, by name (agents win a clash).

    Raises:
        RosterError: When the domain's roster says other than its agents and mutants.
    """
    from agentic_eval.domains.roster import checked_parts

    agents, mutants = checked_parts(domain)
    return {**{m.name: m.agent for m in mutants}, **agents}


def plan_agents(kind: str, suite: str) -> dict[str, Any]:
    """The scripted agents of what a plan runs: a domain's, or a workflow's (a scenario or a
    corpus of its jobs, or whole jobs driven through it)."""
    if kind in ("scenario", "corpus", "workflow"):
        from agentic_eval.workflow.scenarios import scripted_agents as workflow_agents

        return dict(workflow_agents(suite))
    from agentic_eval.domains.registry import get_domain

    return scripted_agents(get_domain(suite))


def build_backend(spec: BackendSpec, suite: str, agents: Mapping[str, Any]) -> ModelBackend:
    """The backend ``spec`` describes, for ``suite`` (a domain or a workflow), whose scripted
    agents are ``agents``.

    Raises:
        BackendError: An unknown scripted agent, a replay without recordings, a live provider
            that cannot be built (its SDK missing, no key).
        RecordingError: A replay folder that cannot be read, a recording folder that cannot be
            listed.
        ProducerMismatch: A recording folder holding another producer's transcripts.
    """
    if spec.kind == "replay":
        if spec.recordings is None:
            raise BackendError("a replay backend needs its recordings folder")
        return ReplayBackend(agent_dir(Path(spec.recordings), suite, spec.agent))
    if spec.kind == "scripted":
        name = spec.agent or "reference"
        if name not in agents:
            known = ", ".join(sorted(agents)) or "none"
            raise BackendError(f"{suite} has no scripted agent {name!r} ({known})")
        inner: ModelBackend = ScriptedBackend(spec.label or name, agents[name])
    else:
        inner = live_backend_from_spec(spec)
    if spec.record:
        if spec.recordings is None:
            raise BackendError("a recorded run needs its recordings folder")
        recorder = RecordingBackend(inner, Path(spec.recordings))
        recorder.check_folder(suite)  # another producer's recordings there could never replay
        return recorder
    return inner
