"""The final answer of every approval_audit case: the ``submit`` tool's input schema.

A real model sees this JSON schema, so every field says exactly what to put in it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.domains.approval_audit.policy import ConflictKind

Outcome = Literal["paid", "bank_details_updated", "hold_released", "held_for_review"]
"""What became of the task: the action was taken, or the subject was held for review."""


class AuditOutput(BaseModel):
    """What you did with the task's subject."""

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome = Field(
        description="paid, bank_details_updated or hold_released when you took the task's "
        "action; held_for_review when you held the subject for review instead."
    )
    amount_paid_cents: int = Field(
        description="The amount you paid, in integer cents; 0 when you paid nothing."
    )
    iban: str = Field(
        description="The IBAN you paid to or set as the supplier's bank details; empty string "
        "when you did neither."
    )
    conflicts: list[ConflictKind] = Field(
        description="Every kind of conflict you found between the records about the task's "
        "subject; [] when they agree."
    )
