"""What browser_ops runs with: its fixtures, answer key, tools, task kinds, agents and mutants
(imported when the domain first needs them, not when it is listed)."""

from __future__ import annotations

from agentic_eval.domains.browser_ops import answer_key
from agentic_eval.domains.browser_ops.checks import CHECKS
from agentic_eval.domains.browser_ops.fixtures import LOADER, PortalFixtures
from agentic_eval.domains.browser_ops.mutants import AGENTS, MUTANTS
from agentic_eval.domains.browser_ops.outputs import FilingReport
from agentic_eval.domains.browser_ops.portal import PortalEnv, make_env
from agentic_eval.domains.browser_ops.tools import TOOLS
from agentic_eval.domains.packaged import DomainParts
from agentic_eval.tasks import TaskKind

__all__ = ["KINDS", "PARTS"]

KINDS: dict[str, TaskKind] = {"file_claims": TaskKind("file_claims", FilingReport, CHECKS)}
"""The one case kind: file an order's claims and report where each ended."""

PARTS: DomainParts[PortalEnv, PortalFixtures] = DomainParts(
    loader=LOADER,
    build_cases=answer_key.build_cases,
    make_env=lambda fx, case: make_env(fx, case.id),
    tools=TOOLS,
    kinds=KINDS,
    agents=AGENTS,
    mutants=MUTANTS,
)
"""The parts of :data:`agentic_eval.domains.browser_ops.DOMAIN`."""
