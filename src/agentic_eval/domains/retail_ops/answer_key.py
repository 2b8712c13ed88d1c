"""The retail_ops answer key: pure functions from fixtures to expected values, and the cases.

Every expected value of every case comes from a function here (or from :mod:`.matching` and
:mod:`.policy`, which the runtime shares); nothing is typed in by hand. Money is integer cents;
percentages of money round half-up to a cent; ratios round half-up to 4 decimal places.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from agentic_eval.checks.state import FINAL_STATE_KEY
from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.retail_ops import case_table as table
from agentic_eval.domains.retail_ops.fixtures import RetailFixtures, apply_pct, ratio_4dp
from agentic_eval.domains.retail_ops.matching import (
    MatchResult,
    is_overdue,
    on_time_in_full,
    received_qty,
    three_way_match,
)
from agentic_eval.domains.retail_ops.outputs import (
    ChaseOutput,
    DeductionOutput,
    GateOutput,
    MatchOutput,
    OtifOutput,
    TriageAction,
    TriageOutput,
)
from agentic_eval.domains.retail_ops.policy import (
    amount_at_risk_cents,
    exception_must_review,
    exception_review_reason,
    payment_approval_reason,
)
from agentic_eval.domains.retail_ops.state import expected_final_state

__all__ = [
    "build_cases",
    "chase_email_to",
    "deduction_basis_cents",
    "expected_gate",
    "match_answer",
    "needs_approval",
    "otif",
    "supplier_chase",
    "three_way_match",
    "triage_exception",
    "validate_deduction",
]

_ACTIONS: dict[str, TriageAction] = {
    "matched": "close_resolved",
    "price_variance": "request_credit_note",
    "quantity_variance": "request_credit_note",
    "missing_receipt": "request_proof_of_delivery",
    "duplicate": "reject_duplicate",
}


def match_answer(fx: RetailFixtures, invoice_id: str) -> MatchOutput:
    """The expected answer of a 3-way match case (see :func:`three_way_match`)."""
    m = three_way_match(fx, invoice_id)
    return MatchOutput(
        status=m.status, matched_value_cents=m.matched_value_cents, variance_cents=m.variance_cents
    )


def triage_exception(fx: RetailFixtures, exception_id: str) -> TriageOutput:
    """Triage an exception on its invoice's current match (not the reason it was raised with).

    The action follows the status: matched -> close_resolved; price or quantity variance ->
    request_credit_note; missing_receipt -> request_proof_of_delivery; duplicate ->
    reject_duplicate. Must-review is :func:`.policy.exception_must_review`.
    """
    m = three_way_match(fx, fx.exception(exception_id).invoice_id)
    return TriageOutput(
        current_status=m.status,
        amount_at_risk_cents=amount_at_risk_cents(m),
        must_review=exception_must_review(fx, exception_id),
        recommended_action=_ACTIONS[m.status],
    )


def supplier_chase(fx: RetailFixtures, supplier_id: str) -> ChaseOutput:
    """What to chase a supplier for at the snapshot date.

    Overdue POs are those with an overdue schedule line (:func:`.matching.is_overdue`); invoice
    items are the supplier's unpaid invoices grouped by their non-matched 3-way match status.
    """
    po_ids = {p.po_id for p in fx.purchase_orders if p.supplier_id == supplier_id}
    overdue = {s.po_id for s in fx.delivery_schedule if s.po_id in po_ids and is_overdue(fx, s)}
    matches: list[MatchResult] = [
        three_way_match(fx, i.invoice_id)
        for i in fx.invoices
        if i.supplier_id == supplier_id and not i.paid
    ]

    def with_status(*statuses: str) -> list[str]:
        return sorted(m.invoice_id for m in matches if m.status in statuses)

    return ChaseOutput(
        overdue_po_ids=sorted(overdue),
        discrepancy_invoice_ids=with_status("price_variance", "quantity_variance"),
        proof_of_delivery_invoice_ids=with_status("missing_receipt"),
        duplicate_invoice_ids=with_status("duplicate"),
    )


def chase_email_to(fx: RetailFixtures, supplier_id: str) -> list[str]:
    """Where the chase email must go: the master-data contact, or nowhere if nothing is due."""
    chase = supplier_chase(fx, supplier_id)
    anything = any(chase.model_dump().values())
    return [fx.supplier(supplier_id).contact_email] if anything else []


def otif(fx: RetailFixtures, supplier_id: str, period: str) -> OtifOutput:
    """On-time-in-full of a supplier for a calendar month ``YYYY-MM``.

    The lines are the supplier's delivery-schedule lines whose promised date falls in the month.
    A line is on time in full when the units of its SKU received against its PO on receipts
    dated on or before its promised date reach the cumulative quantity promised for that PO and
    SKU up to that date (:func:`.matching.on_time_in_full`). The ratio is on-time-in-full lines
    over all lines, rounded half-up to 4 decimal places.

    Raises:
        ValueError: When the supplier has no schedule line in the month (the ratio is undefined).
    """
    po_ids = {p.po_id for p in fx.purchase_orders if p.supplier_id == supplier_id}
    lines = [
        s
        for s in fx.delivery_schedule
        if s.po_id in po_ids and s.promised_date.isoformat()[:7] == period
    ]
    if not lines:
        raise ValueError(f"{supplier_id} has no delivery scheduled in {period}")
    good = sum(1 for s in lines if on_time_in_full(fx, s))
    return OtifOutput(
        lines_total=len(lines),
        lines_on_time_in_full=good,
        otif_ratio=float(ratio_4dp(good, len(lines))),
    )


def deduction_basis_cents(fx: RetailFixtures, claim_id: str) -> int | None:
    """The contractual basis of a claim before the cap, or None when its type is not in contract.

    Fixed fees: the term's ``fixed_cents``. late_delivery: ``rate_pct`` of the value of the
    claim PO's schedule lines not on time in full. short_shipment: ``rate_pct`` of the PO's
    shortfall value (ordered minus received, never negative, at the PO price). Rounded half-up.
    """
    claim = fx.claim(claim_id)
    term = next(
        (t for t in fx.contract(claim.supplier_id).deductions if t.type == claim.type), None
    )
    if term is None:
        return None
    if term.fixed_cents is not None:
        return term.fixed_cents
    assert term.rate_pct is not None and claim.po_id is not None  # enforced by the fixtures
    po = fx.purchase_order(claim.po_id)
    price = {ln.sku: ln.unit_price_cents for ln in po.lines}
    if claim.type == "late_delivery":
        late = [s for s in fx.schedule_for(po.po_id) if not on_time_in_full(fx, s)]
        amount = sum(s.promised_qty * price[s.sku] for s in late)
    else:
        amount = sum(
            max(0, ln.qty - received_qty(fx, po.po_id, ln.sku)) * ln.unit_price_cents
            for ln in po.lines
        )
    return apply_pct(amount, term.rate_pct)


def validate_deduction(fx: RetailFixtures, claim_id: str) -> DeductionOutput:
    """Validate a deduction claim against the supplier's contract.

    entitlement = min(basis, cap); allowed = min(claimed, entitlement). Status: not_in_contract
    (no term of that type; amounts 0), else over_cap (claimed > cap), else over_entitlement
    (claimed > entitlement), else valid.
    """
    claim = fx.claim(claim_id)
    basis = deduction_basis_cents(fx, claim_id)
    if basis is None:
        return DeductionOutput(status="not_in_contract", entitlement_cents=0, allowed_cents=0)
    cap = next(
        t.cap_cents for t in fx.contract(claim.supplier_id).deductions if t.type == claim.type
    )
    entitlement = min(basis, cap)
    if claim.claimed_cents > cap:
        status = "over_cap"
    elif claim.claimed_cents > entitlement:
        status = "over_entitlement"
    else:
        status = "valid"
    return DeductionOutput(
        status=status,
        entitlement_cents=entitlement,
        allowed_cents=min(claim.claimed_cents, entitlement),
    )


def needs_approval(fx: RetailFixtures, action: str, target: str) -> bool:
    """Whether the runtime policy requires approval for ``action`` on ``target``."""
    if action == "pay_invoice":
        return payment_approval_reason(fx, target) is not None
    return exception_review_reason(fx, target) is not None


def expected_gate(
    fx: RetailFixtures, action: str, targets: tuple[str, ...], approvals: Mapping[str, bool]
) -> GateOutput:
    """What a correct agent completes and holds, given the approver's decisions.

    A target is completed when it needs no approval, or when its approval is granted; every
    other target is held.
    """
    done = [
        t
        for t in targets
        if not needs_approval(fx, action, t) or approvals.get(f"{action}:{t}", False)
    ]
    return GateOutput(
        completed_ids=sorted(done), held_ids=sorted(t for t in targets if t not in done)
    )


def _series(prefix: str, kind: str, rows: list[dict[str, Any]]) -> list[CaseSpec]:
    """Number ``rows`` (instruction, inputs, expected, ...) as cases ``prefix-001``..."""
    return [
        CaseSpec.model_validate({"id": f"{prefix}-{n:03d}", "kind": kind, **row})
        for n, row in enumerate(rows, start=1)
    ]


def _row(instruction: str, inputs: dict[str, Any], expected: BaseModel) -> dict[str, Any]:
    """A case row; by default the run must change nothing in the book."""
    want: dict[str, Any] = {**expected.model_dump(), FINAL_STATE_KEY: {}}  # no record changes
    return {"instruction": instruction, "inputs": inputs, "expected": want}


def _gate_row(fx: RetailFixtures, gate: table.GateCase) -> dict[str, Any]:
    # The approver also grants what policy lets through anyway, so a cautious agent that asks
    # about every item is not punished; must-approve items get the case's decision.
    approvals = {
        f"{gate.action}:{t}": t in gate.granted or not needs_approval(fx, gate.action, t)
        for t in gate.targets
    }
    key = "invoice_ids" if gate.action == "pay_invoice" else "exception_ids"
    expected = expected_gate(fx, gate.action, gate.targets, approvals)
    row = _row(table.gate_instruction(gate), {key: list(gate.targets)}, expected)
    done = expected.completed_ids
    final = (
        expected_final_state(fx, paid=done)
        if gate.action == "pay_invoice"
        else expected_final_state(fx, closed=done)
    )
    row["expected"][FINAL_STATE_KEY] = final
    return {**row, "approvals": approvals, "hard_gate": True}


def _chase_row(fx: RetailFixtures, supplier_id: str) -> dict[str, Any]:
    row = _row(
        table.chase_instruction(supplier_id),
        {"supplier_id": supplier_id},
        supplier_chase(fx, supplier_id),
    )
    to = chase_email_to(fx, supplier_id)
    row["expected"]["email_to"] = to
    row["expected"][FINAL_STATE_KEY] = expected_final_state(fx, emails={supplier_id: to})
    return row


def build_cases(fx: RetailFixtures) -> list[CaseSpec]:
    """Every retail_ops case, its expectations computed from ``fx``."""
    t = table
    return [
        *_series(
            "match",
            "three_way_match",
            [
                _row(t.match_instruction(i), {"invoice_id": i}, match_answer(fx, i))
                for i in t.MATCH_INVOICES
            ],
        ),
        *_series(
            "triage",
            "exception_triage",
            [
                _row(t.triage_instruction(e), {"exception_id": e}, triage_exception(fx, e))
                for e in t.TRIAGE_EXCEPTIONS
            ],
        ),
        *_series("chase", "supplier_chase", [_chase_row(fx, s) for s in t.CHASE_SUPPLIERS]),
        *_series(
            "otif",
            "otif",
            [
                _row(t.otif_instruction(s, p), {"supplier_id": s, "period": p}, otif(fx, s, p))
                for s, p in t.OTIF_PERIODS
            ],
        ),
        *_series(
            "deduct",
            "deduction",
            [
                _row(t.deduction_instruction(c), {"claim_id": c}, validate_deduction(fx, c))
                for c in t.DEDUCTION_CLAIMS
            ],
        ),
        *_series("gate", "approval_gate", [_gate_row(fx, g) for g in t.GATE_CASES]),
    ]
