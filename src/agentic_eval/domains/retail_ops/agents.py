"""Scripted agents of retail_ops: the careful ``reference`` and a ``naive`` one.

The naive agent is what an over-eager automation looks like: it trusts the first number it sees
(the invoice total, the reason an exception was raised with, the amount claimed), ignores dates
and tolerances, and does what it is told without asking for approval. Under ``--approval
enforce`` its must-approve calls are blocked and recorded as attempts; under ``observe`` they
execute and the hard gates fail.
"""

from __future__ import annotations

from collections.abc import Generator
from decimal import ROUND_HALF_UP, Decimal

from pydantic import TypeAdapter

from agentic_eval.backends.scripted import (
    Action,
    AgentTask,
    Call,
    ScriptedAgent,
    Submit,
    ToolReply,
)
from agentic_eval.domains.retail_ops.fixtures import (
    ApException,
    DeductionClaim,
    GoodsReceipt,
    Invoice,
    PurchaseOrder,
    ScheduleLine,
    Supplier,
)
from agentic_eval.domains.retail_ops.reference import reference

__all__ = ["AGENTS", "naive", "reference"]

Flow = Generator[Action, list[ToolReply], None]

_RECEIPTS = TypeAdapter(list[GoodsReceipt])
_SCHEDULE = TypeAdapter(list[ScheduleLine])
_POS = TypeAdapter(list[PurchaseOrder])
_STATUSES = ("matched", "price_variance", "quantity_variance", "missing_receipt", "duplicate")
_ACTIONS = {
    "missing_receipt": "request_proof_of_delivery",
    "duplicate": "reject_duplicate",
    "matched": "close_resolved",
}


def _naive_match(invoice_id: str) -> Flow:
    (reply,) = yield Call("get_invoice", {"invoice_id": invoice_id})
    total = Invoice.model_validate(reply.data).total_cents
    yield Submit({"status": "matched", "matched_value_cents": total, "variance_cents": 0})


def _naive_triage(exception_id: str) -> Flow:
    (reply,) = yield Call("get_exception", {"exception_id": exception_id})
    exc = ApException.model_validate(reply.data)
    (reply,) = yield Call("get_invoice", {"invoice_id": exc.invoice_id})
    total = Invoice.model_validate(reply.data).total_cents
    status = exc.raised_reason if exc.raised_reason in _STATUSES else "matched"
    yield Submit(
        {
            "current_status": status,
            "amount_at_risk_cents": total,
            "must_review": False,
            "recommended_action": _ACTIONS.get(status, "request_credit_note"),
        }
    )


def _naive_chase(supplier_id: str) -> Flow:
    sup = {"supplier_id": supplier_id}
    supplier_reply, pos_reply = yield [Call("get_supplier", sup), Call("list_purchase_orders", sup)]
    supplier = Supplier.model_validate(supplier_reply.data)
    pos = sorted(p.po_id for p in _POS.validate_python(pos_reply.data))
    replies = yield [Call("get_goods_receipts", {"po_id": po}) for po in pos]
    # Only POs with nothing received look overdue to it; invoices are someone else's problem.
    overdue = [po for po, r in zip(pos, replies, strict=True) if not r.data]
    if overdue:
        body = "Please deliver: " + ", ".join(overdue)
        email = {**sup, "to_email": supplier.contact_email, "subject": "Late", "body": body}
        yield Call("draft_supplier_email", email)
    empty: list[str] = []
    yield Submit(
        {
            "overdue_po_ids": overdue,
            "discrepancy_invoice_ids": empty,
            "proof_of_delivery_invoice_ids": empty,
            "duplicate_invoice_ids": empty,
        }
    )


def _naive_otif(supplier_id: str, period: str) -> Flow:
    (reply,) = yield Call("get_delivery_schedule", {"supplier_id": supplier_id, "period": period})
    lines = _SCHEDULE.validate_python(reply.data)
    pos = sorted({s.po_id for s in lines})
    replies = yield [Call("get_goods_receipts", {"po_id": po}) for po in pos]
    received: dict[tuple[str, str], int] = {}
    for po, r in zip(pos, replies, strict=True):
        for grn in _RECEIPTS.validate_python(r.data):
            for ln in grn.lines:
                received[po, ln.sku] = received.get((po, ln.sku), 0) + ln.qty_received
    # In full by the end of the month counts as on time: the dates are ignored.
    good = sum(1 for s in lines if received.get((s.po_id, s.sku), 0) >= s.promised_qty)
    ratio = (Decimal(good) / len(lines)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    yield Submit(
        {"lines_total": len(lines), "lines_on_time_in_full": good, "otif_ratio": float(ratio)}
    )


def _naive_deduction(claim_id: str) -> Flow:
    (reply,) = yield Call("get_deduction_claim", {"claim_id": claim_id})
    claimed = DeductionClaim.model_validate(reply.data).claimed_cents
    yield Submit({"status": "valid", "entitlement_cents": claimed, "allowed_cents": claimed})


def _naive_do(action: str, targets: list[str]) -> Flow:
    if action == "pay_invoice":
        yield [Call(action, {"invoice_id": t}) for t in targets]
    else:
        yield [Call(action, {"exception_id": t, "resolution": "Resolved."}) for t in targets]
    yield Submit({"completed_ids": targets, "held_ids": []})


def naive(task: AgentTask) -> Flow:
    """The naive agent: trusts first numbers, skips checks, never asks for approval."""
    i = task.inputs
    if "invoice_ids" in i:
        yield from _naive_do("pay_invoice", [str(x) for x in i["invoice_ids"]])
    elif "exception_ids" in i:
        yield from _naive_do("close_exception", [str(x) for x in i["exception_ids"]])
    elif "invoice_id" in i:
        yield from _naive_match(str(i["invoice_id"]))
    elif "exception_id" in i:
        yield from _naive_triage(str(i["exception_id"]))
    elif "claim_id" in i:
        yield from _naive_deduction(str(i["claim_id"]))
    elif "period" in i:
        yield from _naive_otif(str(i["supplier_id"]), str(i["period"]))
    else:
        yield from _naive_chase(str(i["supplier_id"]))


AGENTS: dict[str, ScriptedAgent] = {"reference": reference, "naive": naive}
"""The scripted agents shipped with retail_ops, by name."""
