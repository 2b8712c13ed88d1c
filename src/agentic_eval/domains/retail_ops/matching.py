"""The 3-way match (purchase order / goods receipt / invoice) and the delivery arithmetic under it.

Pure functions of the fixtures, shared by the answer key and the runtime approval policy, so the
two cannot disagree about whether an invoice matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Literal

from agentic_eval.domains.retail_ops.fixtures import Invoice, RetailFixtures, ScheduleLine

MatchStatus = Literal[
    "matched", "price_variance", "quantity_variance", "missing_receipt", "duplicate"
]
"""Result of a 3-way match, in order of precedence (duplicate is checked first)."""


@dataclass(frozen=True)
class MatchResult:
    """The 3-way match of one invoice."""

    invoice_id: str
    status: MatchStatus
    matched_value_cents: int
    """Sum over invoice lines of min(invoiced qty, received qty) x PO unit price."""
    variance_cents: int
    """Invoice total minus ``matched_value_cents``."""
    total_cents: int
    """The invoice total."""


def received_qty(fx: RetailFixtures, po_id: str, sku: str, on_or_before: date | None = None) -> int:
    """Units of ``sku`` received against ``po_id`` (only receipts dated on or before a date)."""
    return sum(
        ln.qty_received
        for r in fx.receipts_for(po_id)
        if on_or_before is None or r.received_date <= on_or_before
        for ln in r.lines
        if ln.sku == sku
    )


def within_price_tolerance(po_price_cents: int, invoiced_price_cents: int, pct: Decimal) -> bool:
    """Whether an invoiced unit price is within ``pct`` percent above the PO price (inclusive).

    Billing below the PO price is never a variance.
    """
    return (invoiced_price_cents - po_price_cents) * 100 <= po_price_cents * pct


def within_qty_tolerance(received: int, invoiced: int, pct: Decimal) -> bool:
    """Whether an invoiced quantity is within ``pct`` percent above the received one (inclusive).

    Billing less than was received is never a variance.
    """
    return (invoiced - received) * 100 <= received * pct


def duplicate_of(fx: RetailFixtures, invoice: Invoice) -> str | None:
    """The earlier-registered invoice this one duplicates, if any.

    An invoice duplicates another of the same supplier with the same supplier invoice number and
    a lower (earlier-registered) invoice id.
    """
    earlier = [
        other.invoice_id
        for other in fx.invoices
        if other.supplier_id == invoice.supplier_id
        and other.supplier_invoice_number == invoice.supplier_invoice_number
        and other.invoice_id < invoice.invoice_id
    ]
    return min(earlier) if earlier else None


def three_way_match(fx: RetailFixtures, invoice_id: str) -> MatchResult:
    """Match an invoice against its PO and the goods receipts on that PO.

    Status, by precedence: ``duplicate`` (see :func:`duplicate_of`); ``missing_receipt`` (no goods
    receipt on the PO); ``price_variance`` (some line's unit price above the PO price by more
    than the contract's ``price_tolerance_pct``); ``quantity_variance`` (some line's quantity
    above the total received for its SKU by more than ``qty_tolerance_pct`` of the received
    quantity); otherwise ``matched``. Values are computed for every status.

    Raises:
        KeyError: When the invoice does not exist.
    """
    inv = fx.invoice(invoice_id)
    po = fx.purchase_order(inv.po_id)
    terms = fx.contract(inv.supplier_id)
    po_price = {ln.sku: ln.unit_price_cents for ln in po.lines}
    price_bad = qty_bad = False
    matched = 0
    for ln in inv.lines:
        got = received_qty(fx, po.po_id, ln.sku)
        matched += min(ln.qty, got) * po_price[ln.sku]
        price_bad |= not within_price_tolerance(
            po_price[ln.sku], ln.unit_price_cents, terms.price_tolerance_pct
        )
        qty_bad |= not within_qty_tolerance(got, ln.qty, terms.qty_tolerance_pct)
    status: MatchStatus
    if duplicate_of(fx, inv) is not None:
        status = "duplicate"
    elif not fx.receipts_for(po.po_id):
        status = "missing_receipt"
    elif price_bad:
        status = "price_variance"
    elif qty_bad:
        status = "quantity_variance"
    else:
        status = "matched"
    return MatchResult(
        invoice_id=inv.invoice_id,
        status=status,
        matched_value_cents=matched,
        variance_cents=inv.total_cents - matched,
        total_cents=inv.total_cents,
    )


def cumulative_promised(fx: RetailFixtures, line: ScheduleLine) -> int:
    """Units of the line's PO and SKU promised on or before the line's promised date."""
    return sum(
        s.promised_qty
        for s in fx.schedule_for(line.po_id)
        if s.sku == line.sku and s.promised_date <= line.promised_date
    )


def on_time_in_full(fx: RetailFixtures, line: ScheduleLine) -> bool:
    """Whether a schedule line was delivered on time and in full.

    True when the units of its SKU received against its PO on receipts dated on or before its
    promised date reach :func:`cumulative_promised` (for a SKU with one schedule line: its
    promised quantity).
    """
    got = received_qty(fx, line.po_id, line.sku, on_or_before=line.promised_date)
    return got >= cumulative_promised(fx, line)


def is_overdue(fx: RetailFixtures, line: ScheduleLine) -> bool:
    """Whether a schedule line is overdue at the snapshot date.

    True when its promised date is before the snapshot date and the units of its SKU received
    so far (any receipt) are below :func:`cumulative_promised`.
    """
    if line.promised_date >= fx.policy.snapshot_date:
        return False
    return received_qty(fx, line.po_id, line.sku) < cumulative_promised(fx, line)
