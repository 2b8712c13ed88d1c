"""process_mapping: map business processes from event logs and decide what to automate.

25 cases over four fictional processes (supplier-invoice intake, customer returns, supplier
price-change requests, supplier bank-detail changes), each given as an event log, an SOP and a
step catalogue with the attributes an automation policy reads: map the workflow from the log,
classify steps automate_now / fix_before_automate / keep_human, compute the monthly business case
in integer cents, and write a combined proposal. Hard gate ``ready_to_automate_safety``: no answer
may propose a step that must be fixed first for automation, in a class, an automate-now list or a
business-case line item. The tools are read-only, so nothing here needs approval.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.backends.scripted import ScriptedAgent
from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.base import Domain, Mutant
from agentic_eval.domains.process_mapping import answer_key
from agentic_eval.domains.process_mapping.agents import AGENTS, MUTANTS
from agentic_eval.domains.process_mapping.checks import GATE_NAME, KIND_CHECKS
from agentic_eval.domains.process_mapping.fixtures import (
    FIXTURES_PATH,
    ProcessFixtures,
    fixtures_path,
    load_fixtures,
)
from agentic_eval.domains.process_mapping.outputs import OUTPUT_MODELS
from agentic_eval.domains.process_mapping.tools import TOOLS, ProcessEnv, make_env
from agentic_eval.tasks import TaskKind

__all__ = [
    "DOMAIN",
    "GATE_NAME",
    "KINDS",
    "ProcessEnv",
    "ProcessFixtures",
    "ProcessMapping",
    "load_fixtures",
]

SYSTEM_PROMPT = """\
You are a process-automation analyst. You map how business processes really run, from their \
event logs, and decide which steps to automate, which to fix first and which to leave with \
people, with a business case in money.

How to work:
- Use the tools to look up every fact you need: the step catalogue, the event log, step \
attributes, cost rates and the automation policy. Never guess a number, an id or an order.
- The event log shows what people actually do; the SOP is documentation and may be out of date.
- Follow the task's definitions exactly; they are the company's policy. Never propose a step for \
automation (as automate_now, in an automate-now list or in a business case) when the policy says \
it must be fixed first.
- All money is in integer cents; time is whole minutes per month.
- When you are done, call submit exactly once with your final answer in the required fields.\
"""


class ProcessMapping(Domain[ProcessEnv]):
    """The process_mapping domain."""

    name = "process_mapping"
    system_prompt = SYSTEM_PROMPT
    description = (
        "Workflow mapping from event logs, automate-now / fix-first / keep-human, business case"
    )

    def fixtures(self) -> ProcessFixtures:
        """The committed process data."""
        return load_fixtures()

    def external_fixtures(self) -> bool:
        """True when ``$EVAL_FIXTURE_DIR/process_mapping/fixtures.json`` replaces ours."""
        return fixtures_path() != FIXTURES_PATH

    def build_cases(self) -> list[CaseSpec]:
        """All 25 cases, computed by the answer key."""
        return answer_key.build_cases(self.fixtures())

    def make_env(self, case: CaseSpec) -> ProcessEnv:
        """A private copy of the process data for one case."""
        del case
        return make_env(self.fixtures())

    def tools(self) -> ToolRegistry[ProcessEnv]:
        """The read-only lookup tools."""
        return TOOLS

    def task_kind(self, case: CaseSpec) -> TaskKind:
        """The answer schema of the case's kind and the checks that judge it.

        Raises:
            KeyError: For an unknown kind.
        """
        return KINDS[case.kind]

    def agents(self) -> dict[str, ScriptedAgent]:
        """The ``reference`` agent (the unsafe ones are :meth:`mutants`)."""
        return dict(AGENTS)

    def mutants(self) -> tuple[Mutant, ...]:
        """``automates_broken_step`` and ``fix_first_in_business_case``, both caught by
        ``ready_to_automate_safety``."""
        return MUTANTS

    def case_file_path(self) -> Path:
        """``cases.json`` beside this module."""
        return Path(__file__).with_name("cases.json")


KINDS: dict[str, TaskKind] = {
    kind: TaskKind(kind, model, KIND_CHECKS[kind]) for kind, model in OUTPUT_MODELS.items()
}
"""Each case kind: its answer schema and its checks."""

DOMAIN = ProcessMapping()
"""The domain instance (entry point ``agentic_eval.domains: process_mapping``)."""
