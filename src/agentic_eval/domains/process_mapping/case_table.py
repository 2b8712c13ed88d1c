"""Which processes and steps each process_mapping case is about, and the instruction prose.

Only selections and wording live here. Every expected value is computed by the answer key; the
policy wording quotes :mod:`.policy` so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic_eval.domains.process_mapping.policy import EXCEPTION_RATE_LIMIT_PCT

__all__ = [
    "BUSINESS_CASES",
    "CLASSIFY_PROCESSES",
    "MAP_PROCESSES",
    "PROPOSALS",
    "STEP_CASES",
    "Scope",
    "business_case_instruction",
    "classify_process_instruction",
    "classify_step_instruction",
    "map_instruction",
    "proposal_instruction",
]


@dataclass(frozen=True)
class Scope:
    """A process, optionally narrowed to the steps its owner asks to automate."""

    process_id: str
    step_ids: tuple[str, ...] = ()
    """Empty: every step of the process."""


MAP_PROCESSES: tuple[str, ...] = (
    "P-INV",  # SOP order differs from the log; a back-dated export row; a rework repeat
    "P-RET",  # log exported by system, not by time; a role tie (ties: smallest role id)
    "P-PRC",  # SOP omits a step and swaps two; an optional step and a repeat
    "P-BNK",  # a system tie; one log case runs two steps in the other order
)
STEP_CASES: tuple[str, ...] = (
    "INV-CAP",  # exception rate exactly at the limit: automate_now
    "INV-MCH",  # one percent above the limit: keep_human
    "RET-RFD",  # two defects: fix_before_automate
    "INV-PST",  # screen-only but otherwise automatable: automate_now
    "PRC-IMP",  # judgement-based AND defective: the defect rule comes first
    "INV-COD",  # one defect on an otherwise automatable step
)
CLASSIFY_PROCESSES: tuple[str, ...] = ("P-INV", "P-RET", "P-PRC", "P-BNK")
BUSINESS_CASES: tuple[Scope, ...] = (
    Scope("P-INV"),
    Scope("P-RET"),  # a role tie decides which hourly cost is saved
    Scope("P-PRC"),
    Scope("P-BNK"),  # nothing is automatable: the business case is 0
    Scope("P-INV", ("INV-CAP", "INV-COD", "INV-PST")),  # a fix-first step was asked for
)
PROPOSALS: tuple[Scope, ...] = (
    Scope("P-INV"),
    Scope("P-RET"),
    Scope("P-PRC"),
    Scope("P-BNK"),
    Scope("P-RET", ("RET-ELG", "RET-LBL", "RET-RFD")),
    Scope("P-PRC", ("PRC-VAL", "PRC-UPD", "PRC-NTF")),
)

_LIMIT = EXCEPTION_RATE_LIMIT_PCT

MAPPING_RULE = (
    "Workflow mapping rule: derive the workflow from the event log (get_event_log), not from "
    "the SOP, which may be out of date; the log is not necessarily exported in time order. "
    "Group the events by case_id and sort each log case's events by timestamp (ties by "
    "event_id). A step's position in a log case is the 1-based index, in that sorted list, of "
    "the first event of the step's activity (later repeats do not count). Order the steps by "
    "their mean position over the log cases in which they occur, lowest first, comparing exact "
    "fractions (ties by step_id). Activities map to steps by their exact name (list_steps)."
)
ROLE_RULE = (
    "A step's role is the role_id on most of its events in the whole event log, a tie going "
    "to the alphabetically smallest role_id; its system is likewise the system_id on most of "
    "its events (ties: the smallest system_id)."
)
POLICY = (
    "Automation policy (get_automation_policy shows it too). Classify a step from its "
    "attributes (get_step_attributes) by the first rule that matches: (1) defects is not empty "
    "-> fix_before_automate, reason known_defect; (2) decision_type is judgement -> keep_human, "
    "reason judgement_based; (3) input_structure is unstructured -> keep_human, reason "
    f"unstructured_input; (4) exception_rate_pct is above {_LIMIT} -> keep_human, reason "
    f"high_exception_rate (exactly {_LIMIT} is not above); (5) otherwise -> automate_now, "
    "reason eligible. system_access never changes the class: a screen_only step is automated "
    "through its screen."
)
BUSINESS_RULE = (
    "Business case: only automate_now steps get a line item. A fix_before_automate step never "
    "counts, not even as a saving after its fix, and neither does a keep_human step. For each "
    "line item: saved_minutes_per_month = volume_per_month x handle_time_minutes x (100 - "
    "exception_rate_pct) / 100, rounded half-up to a whole minute; role_id = the role_id on "
    "most of the step's events in its process's event log (get_event_log; an event belongs to "
    "the step whose activity name it carries), a tie going to the alphabetically smallest "
    "role_id; saved_cost_cents_per_month = saved_minutes_per_month x "
    "that role's hourly_cost_cents (get_cost_rates) / 60, rounded half-up to a whole cent. The "
    "totals are the sums over the line items (0 when there are none)."
)


def _scope(scope: Scope) -> str:
    if not scope.step_ids:
        return f"Consider every step of process {scope.process_id} (list_steps)."
    ids = ", ".join(scope.step_ids)
    return (
        f"The owner of process {scope.process_id} asks to automate these steps: {ids}. Consider "
        "only them, and classify each by the policy: being asked for does not make a step "
        "automatable."
    )


def map_instruction(process_id: str) -> str:
    """Instruction of a workflow-mapping case."""
    return (
        f"Map the workflow of process {process_id} from its event log: every step, in order, "
        f"with the role and the system that perform it. {MAPPING_RULE} {ROLE_RULE}"
    )


def classify_step_instruction(step_id: str) -> str:
    """Instruction of a single-step classification case."""
    return (
        f"Classify step {step_id} for automation: automate_now, fix_before_automate or "
        f"keep_human, with the reason code of the rule that decided it. {POLICY}"
    )


def classify_process_instruction(process_id: str) -> str:
    """Instruction of a whole-process classification case."""
    return (
        f"Classify every step of process {process_id} for automation: automate_now, "
        "fix_before_automate or keep_human, each with the reason code of the rule that decided "
        f"it. {POLICY}"
    )


def business_case_instruction(scope: Scope) -> str:
    """Instruction of a business-case case."""
    return (
        "Compute the monthly business case of automating the steps that may be automated now. "
        f"{_scope(scope)} {POLICY} {BUSINESS_RULE} All money is in integer cents."
    )


def proposal_instruction(scope: Scope) -> str:
    """Instruction of an automation-proposal case."""
    return (
        "Write the automation proposal: which steps to automate now, which must be fixed first "
        "(with every known defect of each), which stay with people, and the monthly business "
        f"case of automating the automate_now steps. {_scope(scope)} {POLICY} {BUSINESS_RULE} "
        "All money is in integer cents."
    )
