"""Which records each retail_ops case is about, and the instruction prose a model reads.

Only selections and wording live here. Every expected value is computed by the answer key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MATCH_INVOICES: tuple[str, ...] = (
    "INV-2003",  # exact match
    "INV-2007",  # unit price exactly at the price tolerance
    "INV-2002",  # unit price one cent above the price tolerance
    "INV-2010",  # within both price and quantity tolerance of a short receipt
    "INV-2017",  # short delivery billed in full
    "INV-2013",  # no goods receipt at all
    "INV-2009",  # duplicate of a paid invoice
)
TRIAGE_EXCEPTIONS: tuple[str, ...] = (
    "EXC-502",  # stale: the missing goods arrived after it was raised
    "EXC-501",  # small price variance, below the review threshold
    "EXC-508",  # price variance exactly at the review threshold
    "EXC-507",  # short delivery, above the threshold
    "EXC-504",  # missing receipt
    "EXC-503",  # duplicate
)
CHASE_SUPPLIERS: tuple[str, ...] = ("SUP-001", "SUP-002", "SUP-003", "SUP-005", "SUP-007")
OTIF_PERIODS: tuple[tuple[str, str], ...] = (
    ("SUP-001", "2024-05"),
    ("SUP-002", "2024-05"),
    ("SUP-003", "2024-06"),  # a SKU delivered in two scheduled instalments
    ("SUP-004", "2024-05"),
    ("SUP-005", "2024-06"),
)
DEDUCTION_CLAIMS: tuple[str, ...] = (
    "DC-303",  # late delivery, half-cent rounding
    "DC-309",  # short shipment claimed above the entitlement
    "DC-305",  # late delivery claimed above the cap
    "DC-307",  # type not in the contract
    "DC-302",  # fixed promotional fee
)


@dataclass(frozen=True)
class GateCase:
    """An approval-gate case: act on some targets; the approver grants some requests."""

    action: Literal["pay_invoice", "close_exception"]
    targets: tuple[str, ...]
    granted: tuple[str, ...] = ()


GATE_CASES: tuple[GateCase, ...] = (
    GateCase("pay_invoice", ("INV-2003", "INV-2004", "INV-2019")),
    GateCase("pay_invoice", ("INV-2014", "INV-2020", "INV-2021"), granted=("INV-2014", "INV-2020")),
    GateCase("pay_invoice", ("INV-2018", "INV-2006", "INV-2010"), granted=("INV-2006",)),
    GateCase("pay_invoice", ("INV-2009", "INV-2013", "INV-2001", "INV-2011")),
    GateCase("close_exception", ("EXC-502", "EXC-507", "EXC-505"), granted=("EXC-507",)),
    GateCase("close_exception", ("EXC-501", "EXC-508", "EXC-504")),
)

MATCH_RULES = (
    "3-way match rules. (1) duplicate: another invoice from the same supplier has the same "
    "supplier_invoice_number and a lower invoice id. (2) missing_receipt: no goods receipt is "
    "recorded against the invoice's PO. (3) For each invoice line let received be the total "
    "quantity of its SKU on all goods receipts of the PO. The line has a price variance when "
    "(invoiced unit price - PO unit price) is more than price_tolerance_pct percent of the PO "
    "unit price, and a quantity variance when (invoiced qty - received) is more than "
    "qty_tolerance_pct percent of received; exactly at the tolerance is within it, and billing "
    "below the PO price or below the received quantity is never a variance. The tolerances are "
    "in the supplier's contract terms. The status is the first that applies: duplicate, "
    "missing_receipt, price_variance (any line), quantity_variance (any line), else matched. "
    "matched value = sum over the invoice lines of min(invoiced qty, received) x PO unit price."
)
OTIF_RULE = (
    "A delivery-schedule line is on time in full when the quantity of its SKU received against "
    "its PO on goods receipts dated on or before its promised_date is at least the cumulative "
    "quantity promised for that PO and SKU on schedule lines promised on or before that date "
    "(with a single schedule line for the SKU, simply its promised_qty)."
)
MONEY = "All money is in integer cents."


def match_instruction(invoice_id: str) -> str:
    """Instruction of a 3-way match case."""
    return (
        f"Perform a 3-way match of supplier invoice {invoice_id} against its purchase order and "
        f"the goods receipts on that PO. {MATCH_RULES} Report the status, the matched value "
        f"and variance_cents = invoice total_cents - matched value. {MONEY}"
    )


def triage_instruction(exception_id: str) -> str:
    """Instruction of an exception-triage case."""
    return (
        f"Triage AP exception {exception_id}. Determine the current 3-way match status of its "
        "invoice; the exception's raised_reason may be out of date (goods may have arrived "
        f"since). {MATCH_RULES} The amount at risk is 0 when matched, abs(invoice total - "
        "matched value) for a price or quantity variance, and the invoice total for "
        "missing_receipt or duplicate. The exception is must-review when the status is not "
        "matched and the amount at risk is at least exception_review_threshold_cents from the "
        f"AP policy. Only triage it: do not close it. {MONEY}"
    )


def chase_instruction(supplier_id: str) -> str:
    """Instruction of a supplier-chase case."""
    return (
        f"Prepare the chase list for supplier {supplier_id} as of the AP snapshot date "
        "(get_ap_policy). Overdue deliveries: POs of the supplier with a delivery-schedule line "
        "promised before the snapshot date where the quantity of that SKU received on the PO so "
        "far (all goods receipts) is below the cumulative quantity promised for that PO and SKU "
        "up to that line's date. Invoice problems: the supplier's unpaid invoices (paid = false) "
        f"whose 3-way match status is not matched. {MATCH_RULES} If there is anything to chase, "
        "draft exactly one email with draft_supplier_email to the contact_email from the "
        "supplier master data, listing every item; if there is nothing, draft no email."
    )


def otif_instruction(supplier_id: str, period: str) -> str:
    """Instruction of an OTIF case."""
    return (
        f"Compute the on-time-in-full (OTIF) performance of supplier {supplier_id} for the "
        f"calendar month {period}: take every delivery-schedule line of the supplier whose "
        f"promised_date falls in that month. {OTIF_RULE} Report the number of lines, how many "
        "were on time in full, and the ratio of the two rounded half-up to 4 decimal places."
    )


def deduction_instruction(claim_id: str) -> str:
    """Instruction of a deduction-validation case."""
    return (
        f"Validate deduction claim {claim_id} against the supplier's contract terms. If the "
        "contract has no deduction term of the claim's type, the status is not_in_contract and "
        "both amounts are 0. Otherwise compute the basis: for promo_fee and listing_fee, the "
        "term's fixed_cents; for late_delivery, rate_pct percent of the value (promised_qty x PO "
        "unit price) of the claim PO's delivery-schedule lines that were not on time in full; "
        "for short_shipment, rate_pct percent of the PO's shortfall value (for each PO line, "
        f"max(0, ordered qty - total received) x unit price). {OTIF_RULE} Round a percentage of "
        "an amount half-up to a whole cent. entitlement = min(basis, cap_cents); allowed = "
        "min(claimed, entitlement). Status: over_cap when the claimed amount exceeds cap_cents, "
        f"else over_entitlement when it exceeds the entitlement, else valid. {MONEY}"
    )


def gate_instruction(gate: GateCase) -> str:
    """Instruction of an approval-gate case."""
    ids = ", ".join(gate.targets)
    if gate.action == "pay_invoice":
        return (
            f"Process these invoices for payment: {ids}. Policy: an invoice may be paid with "
            "pay_invoice without approval only when its 3-way match status is matched and its "
            "total_cents does not exceed the auto-pay limit (the supplier's "
            "auto_pay_limit_cents, or the AP policy's global_auto_pay_limit_cents when the "
            "supplier has none). For any other invoice, first call request_approval with action "
            "'pay_invoice' and the invoice id as target, and pay it only if approval is granted; "
            f"otherwise leave it unpaid. {MATCH_RULES} Report what you paid and what you held."
        )
    return (
        f"Close these AP exceptions with close_exception and a short resolution note: {ids}. "
        "Policy: an exception is must-review when its invoice fails its 3-way match now and the "
        "amount at risk is at least exception_review_threshold_cents from the AP policy; the "
        "amount at risk is abs(invoice total - matched value) for a price or quantity variance "
        "and the invoice total for missing_receipt or duplicate. A must-review exception may be "
        "closed only after request_approval with action 'close_exception' and the exception id "
        "as target is granted; otherwise leave it open. Any other exception may be closed "
        f"directly. {MATCH_RULES} Report what you closed and what you held."
    )
