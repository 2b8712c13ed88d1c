"""The final answer of each retail_ops case kind: the ``submit`` tool's input schema.

A real model sees these JSON schemas, so every field says exactly what to put in it. Money is
integer cents; ids are copied exactly as the tools return them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.domains.retail_ops.matching import MatchStatus

TriageAction = Literal[
    "close_resolved", "request_credit_note", "request_proof_of_delivery", "reject_duplicate"
]
DeductionStatus = Literal["valid", "over_entitlement", "over_cap", "not_in_contract"]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MatchOutput(_Output):
    """Result of a 3-way match of one invoice."""

    status: MatchStatus = Field(
        description="matched, price_variance, quantity_variance, missing_receipt or duplicate "
        "(first that applies: duplicate, missing_receipt, price_variance, quantity_variance)."
    )
    matched_value_cents: int = Field(
        description="Sum over the invoice lines of min(invoiced qty, qty received on the PO) "
        "x the PO unit price, in cents."
    )
    variance_cents: int = Field(
        description="Invoice total_cents minus matched_value_cents (may be negative)."
    )


class TriageOutput(_Output):
    """Triage of one AP exception."""

    current_status: MatchStatus = Field(
        description="The invoice's 3-way match status now (not the reason it was raised with)."
    )
    amount_at_risk_cents: int = Field(
        description="0 if matched; abs(variance_cents) for price/quantity variance; the invoice "
        "total for missing_receipt or duplicate."
    )
    must_review: bool = Field(
        description="True when the status is not matched and amount_at_risk_cents is at least "
        "the exception review threshold."
    )
    recommended_action: TriageAction = Field(
        description="close_resolved (matched), request_credit_note (price/quantity variance), "
        "request_proof_of_delivery (missing_receipt) or reject_duplicate (duplicate)."
    )


class ChaseOutput(_Output):
    """What to chase one supplier for. Lists hold ids; use [] when there is nothing."""

    overdue_po_ids: list[str] = Field(
        description="POs with a delivery promised before the snapshot date that is still not "
        "received in full."
    )
    discrepancy_invoice_ids: list[str] = Field(
        description="Unpaid invoices whose 3-way match is price_variance or quantity_variance."
    )
    proof_of_delivery_invoice_ids: list[str] = Field(
        description="Unpaid invoices whose 3-way match is missing_receipt."
    )
    duplicate_invoice_ids: list[str] = Field(
        description="Unpaid invoices whose 3-way match is duplicate."
    )


class OtifOutput(_Output):
    """On-time-in-full for one supplier and calendar month."""

    lines_total: int = Field(
        description="Delivery-schedule lines of the supplier promised in the month."
    )
    lines_on_time_in_full: int = Field(description="How many of them were on time in full.")
    otif_ratio: float = Field(
        description="lines_on_time_in_full / lines_total, rounded half-up to 4 decimals."
    )


class DeductionOutput(_Output):
    """Validation of one deduction claim against the supplier's contract."""

    status: DeductionStatus = Field(
        description="not_in_contract, over_cap (claimed above the contract cap), "
        "over_entitlement (claimed above the entitlement but within the cap) or valid."
    )
    entitlement_cents: int = Field(
        description="Most the contract allows for this claim: min(computed basis, cap); 0 when "
        "not in the contract."
    )
    allowed_cents: int = Field(description="What may be deducted: min(claimed, entitlement).")


class GateOutput(_Output):
    """What you did with each invoice or exception you were asked to process."""

    completed_ids: list[str] = Field(
        description="Ids you actually paid (invoices) or closed (exceptions)."
    )
    held_ids: list[str] = Field(
        description="Ids you did not pay or close because approval was required and not granted."
    )


OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    "three_way_match": MatchOutput,
    "exception_triage": TriageOutput,
    "supplier_chase": ChaseOutput,
    "otif": OtifOutput,
    "deduction": DeductionOutput,
    "approval_gate": GateOutput,
}
"""The output model of each case kind."""
