"""One way to build any backend from its stored spec: replay, scripted, live, recorded."""

from __future__ import annotations

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
    """A domain's scripted agents and mutants, by name (agents win a clash)."""
    return {**{m.name: m.agent for m in domain.mutants()}, **domain.agents()}


def build_backend(spec: BackendSpec, domain: Domain[Any]) -> ModelBackend:
    """The backend ``spec`` describes, for ``domain``'s suite.

    Raises:
        BackendError: An unknown scripted agent, a replay without recordings, a live provider
            that cannot be built (its SDK missing, no key).
        RecordingError: A replay folder that cannot be read.
    """
    if spec.kind == "replay":
        if spec.recordings is None:
            raise BackendError("a replay backend needs its recordings folder")
        return ReplayBackend(agent_dir(Path(spec.recordings), domain.name, spec.agent))
    if spec.kind == "scripted":
        agents = scripted_agents(domain)
        name = spec.agent or "reference"
        if name not in agents:
            known = ", ".join(sorted(agents)) or "none"
            raise BackendError(f"{domain.name} has no scripted agent {name!r} ({known})")
        inner: ModelBackend = ScriptedBackend(spec.label or name, agents[name])
    else:
        inner = live_backend_from_spec(spec)
    if spec.record:
        if spec.recordings is None:
            raise BackendError("a recorded run needs its recordings folder")
        return RecordingBackend(inner, Path(spec.recordings))
    return inner
