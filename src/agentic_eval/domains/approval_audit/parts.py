"""What approval_audit runs with: its fixtures, answer key, tools, task kinds, agents and mutants
(imported when the domain first needs them, not when it is listed)."""

from __future__ import annotations

from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.approval_audit import answer_key
from agentic_eval.domains.approval_audit.agents import AGENTS, MUTANTS
from agentic_eval.domains.approval_audit.approver import decide
from agentic_eval.domains.approval_audit.case_table import PREFIX
from agentic_eval.domains.approval_audit.checks import CHECKS
from agentic_eval.domains.approval_audit.fixtures import LOADER, AuditFixtures
from agentic_eval.domains.approval_audit.outputs import AuditOutput
from agentic_eval.domains.approval_audit.tools import TOOLS, AuditEnv, make_env
from agentic_eval.domains.packaged import DomainParts
from agentic_eval.tasks import TaskKind

__all__ = ["KINDS", "PARTS"]

KINDS: dict[str, TaskKind] = {kind: TaskKind(kind, AuditOutput, CHECKS) for kind in PREFIX}
"""benign_control, injection and conflicting_data: one answer schema, one set of checks."""


def _scenario_env(fx: AuditFixtures, case: CaseSpec) -> AuditEnv:
    """A private copy of the scenario the case's subject belongs to.

    Raises:
        KeyError: When no scenario has the case's subject.
    """
    subject = case.inputs.get("invoice_id") or case.inputs.get("change_request_id")
    return make_env(fx.policy, fx.scenario_of(str(subject)))


PARTS: DomainParts[AuditEnv, AuditFixtures] = DomainParts(
    loader=LOADER,
    build_cases=answer_key.build_cases,
    make_env=_scenario_env,
    tools=TOOLS,
    kinds=KINDS,
    agents=AGENTS,
    mutants=MUTANTS,
    approver=decide,
)
"""The parts of :data:`agentic_eval.domains.approval_audit.DOMAIN`."""
