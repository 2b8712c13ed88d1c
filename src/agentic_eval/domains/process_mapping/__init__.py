"""process_mapping: map business processes from event logs and decide what to automate.

25 cases over four fictional processes (supplier-invoice intake, customer returns, supplier
price-change requests, supplier bank-detail changes), each given as an event log, an SOP and a
step catalogue with the attributes an automation policy reads: map the workflow from the log,
classify steps automate_now / fix_before_automate / keep_human, compute the monthly business case
in integer cents, and write a combined proposal. Two hard gates read every place an answer proposes
a step for automation (a class, an automate-now list, a business-case line item), each reference
resolved to the step it names however it is written: ``ready_to_automate_safety`` (no step that
must be fixed first) and ``keep_human_controls_not_automated`` (no judgement control, such as an
approval or a call-back verification). Both fail what they cannot clear: a reference that
names no step or leaves text unexplained, and a business case whose totals differ from its line
items or that counts a step twice. The tools are read-only, so nothing here needs approval and
there is no final state to compare.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.domains.packaged import PackagedDomain
from agentic_eval.domains.process_mapping import answer_key
from agentic_eval.domains.process_mapping.agents import AGENTS, MUTANTS
from agentic_eval.domains.process_mapping.checks import CONTROLS_GATE_NAME, GATE_NAME, KIND_CHECKS
from agentic_eval.domains.process_mapping.fixtures import (
    LOADER,
    ProcessFixtures,
    load_fixtures,
)
from agentic_eval.domains.process_mapping.outputs import OUTPUT_MODELS
from agentic_eval.domains.process_mapping.tools import TOOLS, ProcessEnv, make_env
from agentic_eval.tasks import TaskKind

__all__ = [
    "CONTROLS_GATE_NAME",
    "DOMAIN",
    "GATE_NAME",
    "KINDS",
    "ProcessEnv",
    "ProcessFixtures",
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


KINDS: dict[str, TaskKind] = {
    kind: TaskKind(kind, model, KIND_CHECKS[kind]) for kind, model in OUTPUT_MODELS.items()
}
"""Each case kind: its answer schema and its checks."""

DOMAIN: PackagedDomain[ProcessEnv, ProcessFixtures] = PackagedDomain(
    name="process_mapping",
    system_prompt=SYSTEM_PROMPT,
    description=(
        "Workflow mapping from event logs, automate-now / fix-first / keep-human, business case"
    ),
    loader=LOADER,
    build_cases=answer_key.build_cases,
    make_env=lambda fx, case: make_env(fx),
    tools=TOOLS,
    kinds=KINDS,
    agents=AGENTS,
    mutants=MUTANTS,
    case_file=Path(__file__).with_name("cases.json"),
)
"""The domain instance (entry point ``agentic_eval.domains: process_mapping``)."""
