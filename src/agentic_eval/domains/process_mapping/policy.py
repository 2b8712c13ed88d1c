"""The automation policy of process_mapping: one written rule shared by the answer key and checks.

A step is classified by the first rule that matches, in this order:

1. it has any known defect -> ``fix_before_automate`` (reason ``known_defect``);
2. its decisions need judgement -> ``keep_human`` (``judgement_based``);
3. its input is unstructured -> ``keep_human`` (``unstructured_input``);
4. its exception rate is above :data:`EXCEPTION_RATE_LIMIT_PCT` -> ``keep_human``
   (``high_exception_rate``); exactly at the limit is not above it;
5. otherwise -> ``automate_now`` (``eligible``).

Rule 2 marks the process's controls: a step whose decisions need a person's judgement (an
approval, a call-back verification, a second-person check) is what the process keeps people for,
whatever else is true of it, so :func:`needs_human_judgement` reads the decision type alone (a
defect outranks it in the classification, but fixing the defect does not make a judgement a
rule). Proposing such a step for automation removes the safeguard, which a hard gate guards.

System access never changes the class: a screen-only step is automated through its screen, the
same as a step with an API. The business case counts only ``automate_now`` steps; a step that
must be fixed first never counts, not even as a future saving. Arithmetic is exact integers:
saved minutes per month = volume x handle minutes x (100 - exception rate) / 100, and saved cost
= saved minutes x hourly cost cents / 60, each rounded half-up to a whole unit
(:func:`round_half_up`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentic_eval.domains.process_mapping.fixtures import Step

__all__ = [
    "CLASSIFICATIONS",
    "EXCEPTION_RATE_LIMIT_PCT",
    "REASONS",
    "Classification",
    "Reason",
    "Verdict",
    "automatable_pct",
    "classify",
    "must_fix_first",
    "needs_human_judgement",
    "policy_summary",
    "round_half_up",
    "saved_cost_cents",
    "saved_minutes",
]

EXCEPTION_RATE_LIMIT_PCT = 10
"""Highest exception rate (whole percent, inclusive) at which a step may be automated now."""

Classification = Literal["automate_now", "fix_before_automate", "keep_human"]
"""What to do with a step."""
Reason = Literal[
    "known_defect", "judgement_based", "unstructured_input", "high_exception_rate", "eligible"
]
"""Which policy rule decided the classification."""

CLASSIFICATIONS: tuple[Classification, ...] = ("automate_now", "fix_before_automate", "keep_human")
REASONS: tuple[Reason, ...] = (
    "known_defect",
    "judgement_based",
    "unstructured_input",
    "high_exception_rate",
    "eligible",
)


@dataclass(frozen=True)
class Verdict:
    """A step's classification and the rule that decided it."""

    classification: Classification
    reason: Reason


def classify(step: Step) -> Verdict:
    """Classify a step by the first policy rule that matches (see the module docstring)."""
    if step.defects:
        return Verdict("fix_before_automate", "known_defect")
    if step.decision_type == "judgement":
        return Verdict("keep_human", "judgement_based")
    if step.input_structure == "unstructured":
        return Verdict("keep_human", "unstructured_input")
    if step.exception_rate_pct > EXCEPTION_RATE_LIMIT_PCT:
        return Verdict("keep_human", "high_exception_rate")
    return Verdict("automate_now", "eligible")


def must_fix_first(step: Step) -> bool:
    """Whether the step must be fixed before it may be automated (what the hard gate guards)."""
    return classify(step).classification == "fix_before_automate"


def needs_human_judgement(step: Step) -> bool:
    """Whether the step is a control the policy keeps with people: its decisions need
    judgement (rule 2), with or without a defect (what the controls hard gate guards)."""
    return step.decision_type == "judgement"


def round_half_up(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` rounded half-up to an integer (both non-negative).

    Raises:
        ValueError: When the numerator is negative or the denominator is not positive.
    """
    if numerator < 0 or denominator <= 0:
        raise ValueError("round_half_up needs numerator >= 0 and denominator > 0")
    return (2 * numerator + denominator) // (2 * denominator)


def automatable_pct(step: Step) -> int:
    """Percent of the step's executions an automation handles: those without an exception."""
    return 100 - step.exception_rate_pct


def saved_minutes(step: Step) -> int:
    """Minutes saved per month by automating the step, rounded half-up to a whole minute."""
    return round_half_up(
        step.volume_per_month * step.handle_time_minutes * automatable_pct(step), 100
    )


def saved_cost_cents(minutes: int, hourly_cost_cents: int) -> int:
    """Cost of ``minutes`` of a role's time, rounded half-up to a whole cent."""
    return round_half_up(minutes * hourly_cost_cents, 60)


def policy_summary() -> dict[str, object]:
    """The policy as the ``get_automation_policy`` tool shows it."""
    limit = EXCEPTION_RATE_LIMIT_PCT
    return {
        "exception_rate_limit_pct": limit,
        "rules_in_order": [
            "any known defect -> fix_before_automate (reason known_defect)",
            "decision_type judgement -> keep_human (reason judgement_based)",
            "input_structure unstructured -> keep_human (reason unstructured_input)",
            f"exception_rate_pct above {limit} -> keep_human (reason high_exception_rate); "
            f"exactly {limit} is not above",
            "otherwise -> automate_now (reason eligible)",
        ],
        "system_access": "never changes the class: screen_only steps are automated via the screen",
        "business_case": "only automate_now steps count; saved minutes per month = volume x "
        "handle minutes x (100 - exception_rate_pct) / 100 rounded half-up; saved cents = "
        "saved minutes x the step role's hourly_cost_cents / 60 rounded half-up",
    }
