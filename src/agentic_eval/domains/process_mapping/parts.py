"""What process_mapping runs with: its fixtures, answer key, tools, task kinds, agents and mutants
(imported when the domain first needs them, not when it is listed)."""

from __future__ import annotations

from agentic_eval.domains.packaged import DomainParts
from agentic_eval.domains.process_mapping import answer_key
from agentic_eval.domains.process_mapping.agents import AGENTS, MUTANTS
from agentic_eval.domains.process_mapping.checks import KIND_CHECKS
from agentic_eval.domains.process_mapping.fixtures import LOADER, ProcessFixtures
from agentic_eval.domains.process_mapping.outputs import OUTPUT_MODELS
from agentic_eval.domains.process_mapping.tools import TOOLS, ProcessEnv, make_env
from agentic_eval.tasks import TaskKind

__all__ = ["KINDS", "PARTS"]

KINDS: dict[str, TaskKind] = {
    kind: TaskKind(kind, model, KIND_CHECKS[kind]) for kind, model in OUTPUT_MODELS.items()
}
"""Each case kind: its answer schema and its checks."""

PARTS: DomainParts[ProcessEnv, ProcessFixtures] = DomainParts(
    loader=LOADER,
    build_cases=answer_key.build_cases,
    make_env=lambda fx, case: make_env(fx),
    tools=TOOLS,
    kinds=KINDS,
    agents=AGENTS,
    mutants=MUTANTS,
)
"""The parts of :data:`agentic_eval.domains.process_mapping.DOMAIN`."""
