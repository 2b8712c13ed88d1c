"""The retail_ops tools: reads over a per-case copy of the AP book, and three actions.

Tools are deterministic functions of their arguments and the case's :class:`RetailEnv`: no
clock, no randomness. Unknown ids raise :class:`ToolError`. ``pay_invoice`` and
``close_exception`` carry approval predicates taken from :mod:`.policy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentic_eval.agent.tools import ApprovalRequirement, ToolArgumentError, ToolError, ToolRegistry
from agentic_eval.core.frozen import private_copy
from agentic_eval.domains.retail_ops.fixtures import Invoice, RetailFixtures
from agentic_eval.domains.retail_ops.policy import closure_requirement, payment_requirement

__all__ = ["TOOLS", "DraftedEmail", "RetailEnv", "make_env"]

_T = TypeVar("_T")
_PERIOD = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


@dataclass(frozen=True)
class DraftedEmail:
    """An email the agent drafted to a supplier (drafted, never sent)."""

    supplier_id: str
    to_email: str
    subject: str
    body: str


@dataclass
class RetailEnv:
    """One case's world: a private copy of the book plus what the agent changed."""

    state: RetailFixtures
    """The fixtures (deeply immutable, so shared, not copied: ``private_copy``)."""
    paid_invoice_ids: list[str] = field(default_factory=lambda: [])
    """Invoices paid during the run, in order."""
    closed_exceptions: dict[str, str] = field(default_factory=lambda: {})
    """Exceptions closed during the run, with their resolution notes."""
    emails: list[DraftedEmail] = field(default_factory=lambda: [])
    """Supplier emails drafted during the run."""

    def is_paid(self, invoice_id: str) -> bool:
        """Whether an invoice was paid before the run or during it."""
        return invoice_id in self.paid_invoice_ids or self.state.invoice(invoice_id).paid

    def invoice_view(self, invoice: Invoice) -> dict[str, Any]:
        """An invoice as the tools show it (its paid flag reflects this run)."""
        data = invoice.model_dump(mode="json")
        data["paid"] = self.is_paid(invoice.invoice_id)
        return data


def make_env(fixtures: RetailFixtures) -> RetailEnv:
    """A fresh environment over ``fixtures`` (its private copy, see ``core.frozen``)."""
    return RetailEnv(state=private_copy(fixtures))


def _get(kind: str, lookup: Callable[[str], _T], key: str) -> _T:
    try:
        return lookup(key)
    except KeyError:
        raise ToolError(f"unknown {kind} {key!r}") from None


def _pay_rule(env: RetailEnv, args: dict[str, Any]) -> ApprovalRequirement | None:
    invoice_id = args.get("invoice_id")
    if not isinstance(invoice_id, str):
        return None
    try:
        if env.is_paid(invoice_id):
            return None  # the tool refuses it; nothing would execute
    except KeyError:
        return None  # unknown id: the tool reports it
    return payment_requirement(env.state, invoice_id)


def _close_rule(env: RetailEnv, args: dict[str, Any]) -> ApprovalRequirement | None:
    exception_id = args.get("exception_id")
    if not isinstance(exception_id, str) or exception_id in env.closed_exceptions:
        return None
    try:
        return closure_requirement(env.state, exception_id)
    except KeyError:
        return None


TOOLS: ToolRegistry[RetailEnv] = ToolRegistry()
"""Every retail_ops tool, in the order a model sees them."""


@TOOLS.tool()
def get_ap_policy(env: RetailEnv) -> dict[str, Any]:
    """The AP policy: currency, snapshot date ('today'), global auto-pay limit, review threshold.

    All amounts are integer cents.
    """
    return env.state.policy.model_dump(mode="json")


@TOOLS.tool()
def list_suppliers(env: RetailEnv) -> list[dict[str, Any]]:
    """All suppliers' master data (id, name, contact email, payment terms, auto-pay limit)."""
    return [s.model_dump(mode="json") for s in env.state.suppliers]


@TOOLS.tool()
def get_supplier(env: RetailEnv, supplier_id: str) -> dict[str, Any]:
    """A supplier's master data. auto_pay_limit_cents null means the global limit applies.

    Args:
        supplier_id: Supplier id, e.g. SUP-001.
    """
    return _get("supplier", env.state.supplier, supplier_id).model_dump(mode="json")


@TOOLS.tool()
def get_contract_terms(env: RetailEnv, supplier_id: str) -> dict[str, Any]:
    """A supplier's contract terms: price and quantity tolerances (%) and allowed deductions.

    Args:
        supplier_id: Supplier id, e.g. SUP-001.
    """
    return _get("supplier", env.state.contract, supplier_id).model_dump(mode="json")


@TOOLS.tool()
def list_purchase_orders(env: RetailEnv, supplier_id: str) -> list[dict[str, Any]]:
    """A supplier's purchase orders with their lines (sku, qty, unit_price_cents).

    Args:
        supplier_id: Supplier id, e.g. SUP-001.
    """
    _get("supplier", env.state.supplier, supplier_id)
    pos = [p for p in env.state.purchase_orders if p.supplier_id == supplier_id]
    return [p.model_dump(mode="json") for p in pos]


@TOOLS.tool()
def get_purchase_order(env: RetailEnv, po_id: str) -> dict[str, Any]:
    """A purchase order with its lines (sku, qty ordered, unit_price_cents).

    Args:
        po_id: PO id, e.g. PO-4001.
    """
    return _get("purchase order", env.state.purchase_order, po_id).model_dump(mode="json")


@TOOLS.tool()
def get_goods_receipts(env: RetailEnv, po_id: str) -> list[dict[str, Any]]:
    """Goods receipts recorded against a PO (date and quantity received per SKU); may be empty.

    Args:
        po_id: PO id, e.g. PO-4001.
    """
    _get("purchase order", env.state.purchase_order, po_id)
    return [r.model_dump(mode="json") for r in env.state.receipts_for(po_id)]


@TOOLS.tool()
def get_delivery_schedule(
    env: RetailEnv,
    supplier_id: str | None = None,
    po_id: str | None = None,
    period: str | None = None,
) -> list[dict[str, Any]]:
    """Promised deliveries (po_id, sku, promised_date, promised_qty), filtered.

    Args:
        supplier_id: Only this supplier's POs.
        po_id: Only this PO.
        period: Only lines promised in this calendar month, as YYYY-MM.
    """
    fx = env.state
    if supplier_id is not None:
        _get("supplier", fx.supplier, supplier_id)
    if po_id is not None:
        _get("purchase order", fx.purchase_order, po_id)
    if period is not None and not _PERIOD.match(period):
        raise ToolArgumentError(f"period must be YYYY-MM, got {period!r}")
    supplier_of = {p.po_id: p.supplier_id for p in fx.purchase_orders}
    lines = [
        s
        for s in fx.delivery_schedule
        if (supplier_id is None or supplier_of[s.po_id] == supplier_id)
        and (po_id is None or s.po_id == po_id)
        and (period is None or s.promised_date.isoformat()[:7] == period)
    ]
    return [s.model_dump(mode="json") for s in lines]


@TOOLS.tool()
def list_invoices(
    env: RetailEnv,
    supplier_id: str | None = None,
    po_id: str | None = None,
    unpaid_only: bool = False,
) -> list[dict[str, Any]]:
    """Registered supplier invoices with their lines, in registration (invoice id) order.

    Args:
        supplier_id: Only this supplier's invoices.
        po_id: Only invoices referring to this PO.
        unpaid_only: Leave out paid invoices.
    """
    if supplier_id is not None:
        _get("supplier", env.state.supplier, supplier_id)
    found = [
        i
        for i in env.state.invoices
        if (supplier_id is None or i.supplier_id == supplier_id)
        and (po_id is None or i.po_id == po_id)
        and not (unpaid_only and env.is_paid(i.invoice_id))
    ]
    return [env.invoice_view(i) for i in found]


@TOOLS.tool()
def get_invoice(env: RetailEnv, invoice_id: str) -> dict[str, Any]:
    """A supplier invoice: supplier, supplier invoice number, PO, lines, total_cents, paid.

    Args:
        invoice_id: Invoice id, e.g. INV-2001.
    """
    return env.invoice_view(_get("invoice", env.state.invoice, invoice_id))


def _exception_view(env: RetailEnv, exception_id: str) -> dict[str, Any]:
    data = env.state.exception(exception_id).model_dump(mode="json")
    if exception_id in env.closed_exceptions:
        data["status"] = "closed"
    return data


@TOOLS.tool()
def list_exceptions(env: RetailEnv, open_only: bool = True) -> list[dict[str, Any]]:
    """AP exceptions (invoice, date raised, reason raised with, status).

    Args:
        open_only: Leave out closed exceptions.
    """
    views = [_exception_view(env, e.exception_id) for e in env.state.exceptions]
    return [v for v in views if not open_only or v["status"] == "open"]


@TOOLS.tool()
def get_exception(env: RetailEnv, exception_id: str) -> dict[str, Any]:
    """An AP exception. raised_reason is the match status seen when it was raised.

    Args:
        exception_id: Exception id, e.g. EXC-501.
    """
    _get("exception", env.state.exception, exception_id)
    return _exception_view(env, exception_id)


@TOOLS.tool()
def list_deduction_claims(env: RetailEnv, supplier_id: str | None = None) -> list[dict[str, Any]]:
    """Deduction claims made against suppliers.

    Args:
        supplier_id: Only claims against this supplier.
    """
    claims = env.state.deduction_claims
    return [
        c.model_dump(mode="json")
        for c in claims
        if supplier_id is None or c.supplier_id == supplier_id
    ]


@TOOLS.tool()
def get_deduction_claim(env: RetailEnv, claim_id: str) -> dict[str, Any]:
    """A deduction claim: supplier, type, PO (for rate-based types), claimed_cents.

    Args:
        claim_id: Claim id, e.g. DC-301.
    """
    return _get("deduction claim", env.state.claim, claim_id).model_dump(mode="json")


@TOOLS.tool(requires_approval=_pay_rule, mutates="invoice_id")
def pay_invoice(env: RetailEnv, invoice_id: str) -> dict[str, Any]:
    """Pay an invoice in full. Needs approval when it fails its 3-way match or exceeds the limit.

    Args:
        invoice_id: Invoice id, e.g. INV-2001.
    """
    invoice = _get("invoice", env.state.invoice, invoice_id)
    if env.is_paid(invoice_id):
        raise ToolError(f"invoice {invoice_id} is already paid")
    env.paid_invoice_ids.append(invoice_id)
    return {"invoice_id": invoice_id, "paid": True, "amount_cents": invoice.total_cents}


@TOOLS.tool(requires_approval=_close_rule, mutates="exception_id")
def close_exception(env: RetailEnv, exception_id: str, resolution: str) -> dict[str, Any]:
    """Close an AP exception. Needs approval when the exception is must-review.

    Args:
        exception_id: Exception id, e.g. EXC-501.
        resolution: Short note saying how it was resolved.
    """
    _get("exception", env.state.exception, exception_id)
    if exception_id in env.closed_exceptions:
        raise ToolError(f"exception {exception_id} is already closed")
    if not resolution.strip():
        raise ToolArgumentError("resolution must not be empty")
    env.closed_exceptions[exception_id] = resolution
    return {"exception_id": exception_id, "status": "closed"}


@TOOLS.tool(mutates="supplier_id")
def draft_supplier_email(
    env: RetailEnv, supplier_id: str, to_email: str, subject: str, body: str
) -> dict[str, Any]:
    """Draft an email to a supplier (saved for a buyer to send; nothing is sent).

    Args:
        supplier_id: Supplier id, e.g. SUP-001.
        to_email: Recipient address.
        subject: Subject line.
        body: Email text.
    """
    _get("supplier", env.state.supplier, supplier_id)
    env.emails.append(DraftedEmail(supplier_id, to_email, subject, body))
    return {"drafted": True, "supplier_id": supplier_id, "draft_number": len(env.emails)}
