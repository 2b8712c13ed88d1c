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
from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports
from agentic_eval.domains.packaged import PackagedDomain

if TYPE_CHECKING:
    from agentic_eval.domains.process_mapping.checks import CONTROLS_GATE_NAME, GATE_NAME
    from agentic_eval.domains.process_mapping.fixtures import ProcessFixtures, load_fixtures
    from agentic_eval.domains.process_mapping.parts import KINDS
    from agentic_eval.domains.process_mapping.tools import ProcessEnv

__all__ = [
    "CONTROLS_GATE_NAME",
    "DOMAIN",
    "GATE_NAME",
    "KINDS",
    "ProcessEnv",
    "ProcessFixtures",
    "load_fixtures",
]

# The names besides DOMAIN load on first use (PEP 562): listing the domain imports none of them.
__getattr__ = lazy_exports(
    __name__,
    {
        "CONTROLS_GATE_NAME": ("agentic_eval.domains.process_mapping.checks", "CONTROLS_GATE_NAME"),
        "GATE_NAME": ("agentic_eval.domains.process_mapping.checks", "GATE_NAME"),
        "KINDS": ("agentic_eval.domains.process_mapping.parts", "KINDS"),
        "ProcessEnv": ("agentic_eval.domains.process_mapping.tools", "ProcessEnv"),
        "ProcessFixtures": ("agentic_eval.domains.process_mapping.fixtures", "ProcessFixtures"),
        "load_fixtures": ("agentic_eval.domains.process_mapping.fixtures", "load_fixtures"),
    },
    globals(),
)

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


DOMAIN: PackagedDomain[ProcessEnv, ProcessFixtures] = PackagedDomain(
    name="process_mapping",
    system_prompt=SYSTEM_PROMPT,
    description=(
        "Workflow mapping from event logs, automate-now / fix-first / keep-human, business case"
    ),
    parts="agentic_eval.domains.process_mapping.parts:PARTS",
    roster="agentic_eval.domains.process_mapping.roster:ROSTER",
    fixture_file=Path(__file__).with_name("fixtures.json"),
    case_file=Path(__file__).with_name("cases.json"),
)
"""The domain instance (entry point ``agentic_eval.domains: process_mapping``)."""
