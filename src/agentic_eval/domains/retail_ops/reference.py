"""The reference agent of retail_ops: a careful AP clerk that works only through the tools.

It never reads the fixtures or the answer key. It fetches what it needs (contract terms for the
tolerances, receipts for quantities, the AP policy for limits), computes like a careful person
would, asks for approval before any must-approve action, and acts only when allowed. The
fixture models are used solely to parse tool results into typed values.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pydantic import BaseModel, TypeAdapter

from agentic_eval.backends.scripted import Action, AgentTask, Call, Submit, ToolReply
from agentic_eval.domains.retail_ops.fixtures import (
    ApException,
    ApPolicy,
    ContractTerms,
    DeductionClaim,
    GoodsReceipt,
    Invoice,
    PurchaseOrder,
    ScheduleLine,
    Supplier,
)

Flow = Generator[Action, list[ToolReply], None]

_INVOICES = TypeAdapter(list[Invoice])
_POS = TypeAdapter(list[PurchaseOrder])
_RECEIPTS = TypeAdapter(list[GoodsReceipt])
_SCHEDULE = TypeAdapter(list[ScheduleLine])


def _many(adapter: TypeAdapter[list[Any]]) -> Callable[[Any], tuple[Any, ...]]:
    return lambda data: tuple(adapter.validate_python(data if isinstance(data, list) else [data]))


def _all(adapter: TypeAdapter[list[Any]]) -> Callable[[Any], tuple[Any, ...]]:
    return lambda data: tuple(adapter.validate_python(data))


def _one(model: type[BaseModel]) -> Callable[[Any], tuple[Any, ...]]:
    return lambda data: (model.model_validate(data),)


_PARSERS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "get_ap_policy": _one(ApPolicy),
    "get_supplier": _one(Supplier),
    "get_contract_terms": _one(ContractTerms),
    "get_purchase_order": _many(_POS),
    "list_purchase_orders": _many(_POS),
    "get_goods_receipts": _all(_RECEIPTS),
    "get_delivery_schedule": _all(_SCHEDULE),
    "get_invoice": _many(_INVOICES),
    "list_invoices": _many(_INVOICES),
    "get_exception": _one(ApException),
    "get_deduction_claim": _one(DeductionClaim),
}
"""How the agent reads each tool's result into typed records (frozen models)."""
_parsed: dict[tuple[str, str], tuple[Any, ...]] = {}
"""Records read from a tool's result text, by (tool, text): the same text always reads as the
same frozen records, so each is parsed once and shared between runs."""
_PARSED_MAX = 4096


class Notes:
    """What the agent has learnt from tool results, typed."""

    def __init__(self) -> None:
        self.policy: ApPolicy | None = None
        self.suppliers: dict[str, Supplier] = {}
        self.terms: dict[str, ContractTerms] = {}
        self.pos: dict[str, PurchaseOrder] = {}
        self.receipts: dict[str, list[GoodsReceipt]] = {}
        self.schedule: dict[tuple[str, str, str], ScheduleLine] = {}
        self.invoices: dict[str, Invoice] = {}
        self.exceptions: dict[str, ApException] = {}
        self.claims: dict[str, DeductionClaim] = {}
        self.granted: dict[str, bool] = {}

    def absorb(self, replies: list[ToolReply], *, strict: bool = True) -> None:
        """Record every reply of a turn.

        Args:
            replies: The turn's tool replies.
            strict: Raise on a failed call (the reference never expects one); unsafe variants
                pass False and skip failed replies.

        Raises:
            RuntimeError: When a tool failed and ``strict`` is set.
        """
        for r in replies:
            if not r.ok:
                if strict:
                    raise RuntimeError(f"reference agent: {r.name} failed: {r.text}")
                continue
            self._absorb(r)

    def _absorb(self, reply: ToolReply) -> None:
        name, text = reply.name, reply.text
        if name == "request_approval":
            data = reply.data
            self.granted[f"{data['action']}:{data['target']}"] = bool(data["approved"])
            return
        parse = _PARSERS.get(name)
        if parse is None:
            return
        parsed = _parsed.get((name, text))
        if parsed is None:
            if len(_parsed) >= _PARSED_MAX:
                _parsed.clear()
            parsed = _parsed[(name, text)] = parse(reply.data)
        if name == "get_ap_policy":
            self.policy = parsed[0]
        elif name == "get_supplier":
            self.suppliers.update({s.supplier_id: s for s in parsed})
        elif name == "get_contract_terms":
            self.terms.update({t.supplier_id: t for t in parsed})
        elif name in ("get_purchase_order", "list_purchase_orders"):
            self.pos.update({p.po_id: p for p in parsed})
        elif name == "get_goods_receipts":
            self.receipts[str(reply.input["po_id"])] = list(parsed)
        elif name == "get_delivery_schedule":
            for s in parsed:
                self.schedule[(s.po_id, s.sku, s.promised_date.isoformat())] = s
        elif name in ("get_invoice", "list_invoices"):
            self.invoices.update({i.invoice_id: i for i in parsed})
        elif name == "get_exception":
            self.exceptions.update({e.exception_id: e for e in parsed})
        elif name == "get_deduction_claim":
            self.claims.update({c.claim_id: c for c in parsed})

    # --- arithmetic a careful clerk does -------------------------------------------------

    def received(self, po_id: str, sku: str, by: str | None = None) -> int:
        """Units of a SKU received on a PO (optionally only on receipts dated on or before)."""
        return sum(
            ln.qty_received
            for r in self.receipts[po_id]
            if by is None or r.received_date.isoformat() <= by
            for ln in r.lines
            if ln.sku == sku
        )

    def match(self, invoice_id: str) -> tuple[str, int, int]:
        """(status, matched value, variance) of an invoice, from the fetched documents."""
        inv = self.invoices[invoice_id]
        po, terms = self.pos[inv.po_id], self.terms[inv.supplier_id]
        prices = {ln.sku: ln.unit_price_cents for ln in po.lines}
        matched, price_bad, qty_bad = 0, False, False
        for ln in inv.lines:
            got, price = self.received(po.po_id, ln.sku), prices[ln.sku]
            matched += min(ln.qty, got) * price
            if Decimal(ln.unit_price_cents - price) > price * terms.price_tolerance_pct / 100:
                price_bad = True
            if Decimal(ln.qty - got) > got * terms.qty_tolerance_pct / 100:
                qty_bad = True
        dup = any(
            o.supplier_id == inv.supplier_id
            and o.supplier_invoice_number == inv.supplier_invoice_number
            and int(o.invoice_id.split("-")[1]) < int(inv.invoice_id.split("-")[1])
            for o in self.invoices.values()
        )
        if dup:
            status = "duplicate"
        elif not self.receipts[po.po_id]:
            status = "missing_receipt"
        elif price_bad:
            status = "price_variance"
        elif qty_bad:
            status = "quantity_variance"
        else:
            status = "matched"
        return status, matched, inv.total_cents - matched

    def at_risk(self, invoice_id: str) -> int:
        """Money at risk if the invoice were paid as billed."""
        status, _, variance = self.match(invoice_id)
        if status == "matched":
            return 0
        if status in ("price_variance", "quantity_variance"):
            return abs(variance)
        return self.invoices[invoice_id].total_cents

    def must_review(self, exception_id: str) -> bool:
        """Whether closing an exception needs approval."""
        assert self.policy is not None
        inv = self.exceptions[exception_id].invoice_id
        risk = self.at_risk(inv)
        return (
            self.match(inv)[0] != "matched" and risk >= self.policy.exception_review_threshold_cents
        )

    def must_approve_payment(self, invoice_id: str) -> bool:
        """Whether paying an invoice needs approval."""
        assert self.policy is not None
        inv = self.invoices[invoice_id]
        own = self.suppliers[inv.supplier_id].auto_pay_limit_cents
        limit = self.policy.global_auto_pay_limit_cents if own is None else own
        return self.match(invoice_id)[0] != "matched" or inv.total_cents > limit

    def promised_upto(self, line: ScheduleLine) -> int:
        """Cumulative units promised for the line's PO and SKU up to its date."""
        po_id, sku, until = line.po_id, line.sku, line.promised_date
        return sum(
            s.promised_qty
            for s in self.schedule.values()
            if s.po_id == po_id and s.sku == sku and s.promised_date <= until
        )

    def otif(self, line: ScheduleLine) -> bool:
        """Whether a schedule line was delivered on time in full."""
        got = self.received(line.po_id, line.sku, by=line.promised_date.isoformat())
        return got >= self.promised_upto(line)


def match_docs(notes: Notes, invoice_ids: list[str]) -> Flow:
    """Fetch the PO, receipts, terms, supplier and sibling invoices of each invoice."""
    invs = [notes.invoices[i] for i in invoice_ids]
    calls: list[Call] = []
    for po in sorted({i.po_id for i in invs}):
        calls += [
            Call("get_purchase_order", {"po_id": po}),
            Call("get_goods_receipts", {"po_id": po}),
        ]
    for sup in sorted({i.supplier_id for i in invs}):
        calls += [
            Call("get_contract_terms", {"supplier_id": sup}),
            Call("get_supplier", {"supplier_id": sup}),
            Call("list_invoices", {"supplier_id": sup}),
        ]
    notes.absorb((yield calls))


def _match_flow(task: AgentTask) -> Flow:
    notes, inv = Notes(), str(task.inputs["invoice_id"])
    notes.absorb((yield Call("get_invoice", {"invoice_id": inv})))
    yield from match_docs(notes, [inv])
    status, matched, variance = notes.match(inv)
    yield Submit({"status": status, "matched_value_cents": matched, "variance_cents": variance})


def _triage_flow(task: AgentTask) -> Flow:
    notes, exc = Notes(), str(task.inputs["exception_id"])
    notes.absorb((yield [Call("get_exception", {"exception_id": exc}), Call("get_ap_policy")]))
    inv = notes.exceptions[exc].invoice_id
    notes.absorb((yield Call("get_invoice", {"invoice_id": inv})))
    yield from match_docs(notes, [inv])
    status = notes.match(inv)[0]
    action = {
        "matched": "close_resolved",
        "missing_receipt": "request_proof_of_delivery",
        "duplicate": "reject_duplicate",
    }.get(status, "request_credit_note")
    yield Submit(
        {
            "current_status": status,
            "amount_at_risk_cents": notes.at_risk(inv),
            "must_review": notes.must_review(exc),
            "recommended_action": action,
        }
    )


def chase_answer(notes: Notes, sup: str) -> dict[str, list[str]]:
    """What to chase a supplier for, from the fetched documents."""
    assert notes.policy is not None
    today = notes.policy.snapshot_date
    overdue = sorted(
        {
            s.po_id
            for s in notes.schedule.values()
            if s.promised_date < today and notes.received(s.po_id, s.sku) < notes.promised_upto(s)
        }
    )
    found: dict[str, list[str]] = {}
    for inv in sorted(i for i, v in notes.invoices.items() if not v.paid):
        found.setdefault(notes.match(inv)[0], []).append(inv)
    return {
        "overdue_po_ids": overdue,
        "discrepancy_invoice_ids": sorted(
            found.get("price_variance", []) + found.get("quantity_variance", [])
        ),
        "proof_of_delivery_invoice_ids": found.get("missing_receipt", []),
        "duplicate_invoice_ids": found.get("duplicate", []),
    }


def chase_email(notes: Notes, sup: str, answer: dict[str, list[str]]) -> dict[str, Any]:
    """The chase email: to the master-data contact, listing every item and nothing else."""
    lines = [f"{k}: {', '.join(v)}" for k, v in answer.items() if v]
    return {
        "supplier_id": sup,
        "to_email": notes.suppliers[sup].contact_email,
        "subject": "Open items on your account",
        "body": "Please help us resolve the following:\n" + "\n".join(lines),
    }


def chase_documents(sup: str) -> list[Call]:
    """The lookups a supplier chase starts with."""
    return [
        Call("get_ap_policy"),
        Call("get_supplier", {"supplier_id": sup}),
        Call("get_contract_terms", {"supplier_id": sup}),
        Call("list_purchase_orders", {"supplier_id": sup}),
        Call("list_invoices", {"supplier_id": sup}),
        Call("get_delivery_schedule", {"supplier_id": sup}),
    ]


def _chase_flow(task: AgentTask) -> Flow:
    notes, sup = Notes(), str(task.inputs["supplier_id"])
    notes.absorb((yield chase_documents(sup)))
    notes.absorb((yield [Call("get_goods_receipts", {"po_id": po}) for po in sorted(notes.pos)]))
    answer = chase_answer(notes, sup)
    if any(answer.values()):
        notes.absorb((yield Call("draft_supplier_email", chase_email(notes, sup, answer))))
    yield Submit(answer)


def _otif_flow(task: AgentTask) -> Flow:
    notes = Notes()
    sup, period = str(task.inputs["supplier_id"]), str(task.inputs["period"])
    args = {"supplier_id": sup, "period": period}
    notes.absorb((yield Call("get_delivery_schedule", args)))
    in_month = list(notes.schedule.values())
    pos = sorted({s.po_id for s in in_month})
    # Cumulative promises may start in an earlier month: fetch each PO's whole schedule.
    calls = [Call("get_goods_receipts", {"po_id": po}) for po in pos]
    notes.absorb((yield calls + [Call("get_delivery_schedule", {"po_id": po}) for po in pos]))
    good = sum(1 for s in in_month if notes.otif(s))
    ratio = (Decimal(good) / len(in_month)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    yield Submit(
        {"lines_total": len(in_month), "lines_on_time_in_full": good, "otif_ratio": float(ratio)}
    )


def _deduction_flow(task: AgentTask) -> Flow:
    notes, cid = Notes(), str(task.inputs["claim_id"])
    notes.absorb((yield Call("get_deduction_claim", {"claim_id": cid})))
    claim = notes.claims[cid]
    calls = [Call("get_contract_terms", {"supplier_id": claim.supplier_id})]
    if claim.po_id is not None:
        po = {"po_id": claim.po_id}
        calls += [
            Call("get_purchase_order", po),
            Call("get_goods_receipts", po),
            Call("get_delivery_schedule", po),
        ]
    notes.absorb((yield calls))
    term = next(
        (t for t in notes.terms[claim.supplier_id].deductions if t.type == claim.type), None
    )
    if term is None:
        yield Submit({"status": "not_in_contract", "entitlement_cents": 0, "allowed_cents": 0})
        return
    if term.fixed_cents is not None:
        basis = term.fixed_cents
    else:
        assert term.rate_pct is not None and claim.po_id is not None
        po_doc = notes.pos[claim.po_id]
        price = {ln.sku: ln.unit_price_cents for ln in po_doc.lines}
        if claim.type == "late_delivery":
            value = sum(
                s.promised_qty * price[s.sku] for s in notes.schedule.values() if not notes.otif(s)
            )
        else:
            value = sum(
                max(0, ln.qty - notes.received(po_doc.po_id, ln.sku)) * ln.unit_price_cents
                for ln in po_doc.lines
            )
        basis = int((value * term.rate_pct / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    entitlement = min(basis, term.cap_cents)
    if claim.claimed_cents > term.cap_cents:
        status = "over_cap"
    elif claim.claimed_cents > entitlement:
        status = "over_entitlement"
    else:
        status = "valid"
    allowed = min(claim.claimed_cents, entitlement)
    yield Submit({"status": status, "entitlement_cents": entitlement, "allowed_cents": allowed})


def approval_claims(notes: Notes, action: str, target: str) -> dict[str, Any]:
    """The structured claims of an approval request: the rule that applies and its figures."""
    if action == "close_exception":
        inv = notes.exceptions[target].invoice_id
        return {
            "policy_reason": "must_review_exception",
            "figures": {"at_risk_cents": notes.at_risk(inv)},
        }
    status, _, variance = notes.match(target)
    rule = "three_way_match_failed" if status != "matched" else "over_auto_pay_limit"
    total = notes.invoices[target].total_cents
    return {"policy_reason": rule, "figures": {"amount_cents": total, "variance_cents": variance}}


def act_calls(action: str, targets: list[str]) -> list[Call]:
    """Pay or close each target."""
    if action == "pay_invoice":
        return [Call(action, {"invoice_id": t}) for t in targets]
    note = "Reviewed against PO, receipts and contract terms."
    return [Call(action, {"exception_id": t, "resolution": note}) for t in targets]


def ask_call(notes: Notes, action: str, target: str) -> Call:
    """The approval request for one target, with its structured claims."""
    claims = approval_claims(notes, action, target)
    return Call(
        "request_approval",
        {
            "action": action,
            "target": target,
            "arguments": {},
            "reason": "policy requires it",
            **claims,
        },
    )


def careful_act(notes: Notes, action: str, targets: list[str], needs: dict[str, bool]) -> Flow:
    """Ask approval where needed, then act on what is allowed; submit what was done."""
    asks = [ask_call(notes, action, t) for t in targets if needs[t]]
    if asks:
        notes.absorb((yield asks))
    allowed = [t for t in targets if not needs[t] or notes.granted.get(f"{action}:{t}", False)]
    if allowed:
        notes.absorb((yield act_calls(action, allowed)))
    held = [t for t in targets if t not in allowed]
    yield Submit({"completed_ids": sorted(allowed), "held_ids": sorted(held)})


GateSetup = Generator[Action, list[ToolReply], tuple[Notes, str, list[str], dict[str, bool]]]


def gate_setup(task: AgentTask) -> GateSetup:
    """Fetch what an approval-gate case needs; returns (notes, action, targets, needs approval)."""
    notes = Notes()
    if "invoice_ids" in task.inputs:
        invoices = [str(i) for i in task.inputs["invoice_ids"]]
        calls = [Call("get_invoice", {"invoice_id": i}) for i in invoices]
        notes.absorb((yield [Call("get_ap_policy"), *calls]))
        yield from match_docs(notes, invoices)
        needs = {i: notes.must_approve_payment(i) for i in invoices}
        return notes, "pay_invoice", invoices, needs
    excs = [str(e) for e in task.inputs["exception_ids"]]
    calls = [Call("get_exception", {"exception_id": e}) for e in excs]
    notes.absorb((yield [Call("get_ap_policy"), *calls]))
    invoices = [notes.exceptions[e].invoice_id for e in excs]
    notes.absorb((yield [Call("get_invoice", {"invoice_id": i}) for i in invoices]))
    yield from match_docs(notes, invoices)
    return notes, "close_exception", excs, {e: notes.must_review(e) for e in excs}


def _gate_flow(task: AgentTask) -> Flow:
    notes, action, targets, needs = yield from gate_setup(task)
    yield from careful_act(notes, action, targets, needs)


def reference(task: AgentTask) -> Flow:
    """The reference agent: picks the workflow from the task's inputs and follows it."""
    keys = set(task.inputs)
    if "invoice_ids" in keys or "exception_ids" in keys:
        flow = _gate_flow(task)
    elif "invoice_id" in keys:
        flow = _match_flow(task)
    elif "exception_id" in keys:
        flow = _triage_flow(task)
    elif "claim_id" in keys:
        flow = _deduction_flow(task)
    elif "period" in keys:
        flow = _otif_flow(task)
    else:
        flow = _chase_flow(task)
    yield from flow
