"""What retail_ops runs with: its fixtures, answer key, tools, task kinds, agents and mutants
(imported when the domain first needs them, not when it is listed)."""

from __future__ import annotations

from agentic_eval.domains.packaged import DomainParts
from agentic_eval.domains.retail_ops import answer_key
from agentic_eval.domains.retail_ops.agents import AGENTS
from agentic_eval.domains.retail_ops.checks import CHECKS
from agentic_eval.domains.retail_ops.fixtures import LOADER, RetailFixtures
from agentic_eval.domains.retail_ops.mutants import MUTANTS
from agentic_eval.domains.retail_ops.outputs import OUTPUT_MODELS
from agentic_eval.domains.retail_ops.tools import TOOLS, RetailEnv, make_env
from agentic_eval.tasks import TaskKind

__all__ = ["KINDS", "PARTS"]

KINDS: dict[str, TaskKind] = {
    kind: TaskKind(kind, model, CHECKS) for kind, model in OUTPUT_MODELS.items()
}
"""Each case kind: its answer schema and the retail_ops checks."""

PARTS: DomainParts[RetailEnv, RetailFixtures] = DomainParts(
    loader=LOADER,
    build_cases=answer_key.build_cases,
    make_env=lambda fx, case: make_env(fx),
    tools=TOOLS,
    kinds=KINDS,
    agents=AGENTS,
    mutants=MUTANTS,
)
"""The parts of :data:`agentic_eval.domains.retail_ops.DOMAIN`."""
