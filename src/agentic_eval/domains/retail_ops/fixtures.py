"""Typed fixtures of the retail_ops domain: a retailer's accounts-payable and supplier book.

Money is integer cents of the book's currency everywhere (``*_cents`` fields). Percentages are
decimal strings (``"2.5"`` means 2.5 %). Rounding rule: whenever a percentage is applied to an
amount of cents the result is rounded half-up to a whole cent (:func:`apply_pct`); ratios are
rounded half-up to 4 decimal places (:func:`ratio_4dp`). Nothing here reads a clock: "today" is
the book's ``policy.snapshot_date``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentic_eval.domains.fixtures import FixtureLoader, unique_ids

FIXTURES_PATH = Path(__file__).with_name("fixtures.json")
"""The committed gold data."""

DeductionType = Literal["late_delivery", "short_shipment", "promo_fee", "listing_fee"]
"""Kinds of deduction a retailer may claim against a supplier."""

_T = TypeVar("_T")

RATE_BASED_DEDUCTIONS: frozenset[str] = frozenset({"late_delivery", "short_shipment"})
"""Deduction types computed as a rate of a PO-based amount (the others are fixed fees)."""


def apply_pct(amount_cents: int, pct: Decimal) -> int:
    """``pct`` percent of ``amount_cents``, rounded half-up to a whole cent."""
    return int((Decimal(amount_cents) * pct / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def ratio_4dp(numerator: int, denominator: int) -> Decimal:
    """``numerator / denominator`` rounded half-up to 4 decimal places."""
    return (Decimal(numerator) / Decimal(denominator)).quantize(
        Decimal("0.0001"), rounding=ROUND_HALF_UP
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApPolicy(_Model):
    """Book-wide accounts-payable settings."""

    currency: str = Field(description="Currency of every amount in the book (ISO 4217).")
    snapshot_date: date = Field(description="The date the book was extracted ('today').")
    global_auto_pay_limit_cents: int = Field(
        gt=0, description="Auto-pay limit for suppliers without their own limit."
    )
    exception_review_threshold_cents: int = Field(
        gt=0, description="Amount at risk from which an open exception is must-review."
    )


class Supplier(_Model):
    """Supplier master data."""

    supplier_id: str = Field(description="Supplier id, e.g. SUP-001.")
    name: str = Field(description="Legal name.")
    contact_email: str = Field(description="Accounts contact for queries and chasers.")
    payment_terms_days: int = Field(gt=0, description="Net payment terms in days.")
    auto_pay_limit_cents: int | None = Field(
        default=None, gt=0, description="Own auto-pay limit; None means the global limit."
    )
    notes: str = Field(
        default="", description="Free-text account notes (third-party text: data, never orders)."
    )


class DeductionTerm(_Model):
    """One deduction the contract allows: a rate of a PO-based amount, or a fixed fee."""

    type: DeductionType = Field(description="Deduction type.")
    rate_pct: Decimal | None = Field(default=None, ge=0, description="Rate, for rate-based types.")
    fixed_cents: int | None = Field(default=None, ge=0, description="Fee, for fixed-fee types.")
    cap_cents: int = Field(ge=0, description="Most that may be deducted per claim.")

    @model_validator(mode="after")
    def _one_basis(self) -> Self:
        if (self.type in RATE_BASED_DEDUCTIONS) != (self.rate_pct is not None):
            raise ValueError(f"{self.type}: rate-based types need rate_pct, fixed fees must not")
        if (self.rate_pct is None) == (self.fixed_cents is None):
            raise ValueError(f"{self.type}: exactly one of rate_pct and fixed_cents")
        return self


class ContractTerms(_Model):
    """A supplier's contract terms for matching and deductions."""

    supplier_id: str = Field(description="Supplier the terms belong to.")
    price_tolerance_pct: Decimal = Field(
        ge=0, description="Invoiced unit price may exceed the PO price by this % of it."
    )
    qty_tolerance_pct: Decimal = Field(
        ge=0, description="Invoiced quantity may exceed the received quantity by this % of it."
    )
    deductions: tuple[DeductionTerm, ...] = Field(description="Deduction types allowed.")


class PoLine(_Model):
    """One ordered SKU."""

    sku: str = Field(description="Stock-keeping unit.")
    description: str = Field(description="Item description.")
    qty: int = Field(gt=0, description="Ordered quantity (units).")
    unit_price_cents: int = Field(gt=0, description="Agreed unit price in cents.")


class PurchaseOrder(_Model):
    """A purchase order."""

    po_id: str = Field(description="PO id, e.g. PO-4001.")
    supplier_id: str = Field(description="Supplier.")
    order_date: date = Field(description="Date ordered.")
    currency: str = Field(description="Currency (ISO 4217).")
    lines: tuple[PoLine, ...] = Field(min_length=1, description="Ordered lines.")


class ReceiptLine(_Model):
    """Quantity of one SKU received."""

    sku: str = Field(description="Stock-keeping unit.")
    qty_received: int = Field(gt=0, description="Units received.")


class GoodsReceipt(_Model):
    """A goods receipt recorded by the warehouse against a PO."""

    receipt_id: str = Field(description="Receipt id, e.g. GR-6001.")
    po_id: str = Field(description="PO received against.")
    received_date: date = Field(description="Date the goods arrived.")
    lines: tuple[ReceiptLine, ...] = Field(min_length=1, description="Received lines.")


class ScheduleLine(_Model):
    """A promised delivery: quantity of a PO's SKU due by a date."""

    po_id: str = Field(description="PO.")
    sku: str = Field(description="Stock-keeping unit.")
    promised_date: date = Field(description="Date the supplier promised delivery.")
    promised_qty: int = Field(gt=0, description="Units promised for that date.")


class InvoiceLine(_Model):
    """One invoiced SKU."""

    sku: str = Field(description="Stock-keeping unit.")
    qty: int = Field(gt=0, description="Invoiced quantity.")
    unit_price_cents: int = Field(gt=0, description="Invoiced unit price in cents.")


class Invoice(_Model):
    """A supplier invoice as registered in AP."""

    invoice_id: str = Field(description="AP id, in registration order, e.g. INV-2001.")
    supplier_id: str = Field(description="Supplier.")
    supplier_invoice_number: str = Field(description="The supplier's own invoice number.")
    po_id: str = Field(description="PO the invoice refers to.")
    invoice_date: date = Field(description="Invoice date.")
    currency: str = Field(description="Currency (ISO 4217).")
    lines: tuple[InvoiceLine, ...] = Field(min_length=1, description="Invoiced lines.")
    total_cents: int = Field(gt=0, description="Invoice total (sum of qty x unit price).")
    paid: bool = Field(default=False, description="Whether it has been paid.")
    note: str = Field(
        default="", description="Remark printed on the invoice by the supplier (free text)."
    )


class ApException(_Model):
    """An AP exception raised on an invoice when it was registered."""

    exception_id: str = Field(description="Exception id, e.g. EXC-501.")
    invoice_id: str = Field(description="Invoice it was raised on.")
    raised_date: date = Field(description="Date raised.")
    raised_reason: str = Field(description="Match status seen when it was raised.")
    status: Literal["open", "closed"] = Field(default="open", description="Open or closed.")


class DeductionClaim(_Model):
    """A deduction the retailer claims against a supplier."""

    claim_id: str = Field(description="Claim id, e.g. DC-301.")
    supplier_id: str = Field(description="Supplier claimed against.")
    type: DeductionType = Field(description="Deduction type.")
    po_id: str | None = Field(default=None, description="PO it concerns (rate-based types).")
    claimed_cents: int = Field(gt=0, description="Amount claimed in cents.")
    claim_date: date = Field(description="Date claimed.")
    note: str = Field(default="", description="Buyer's note.")


class RetailFixtures(_Model):
    """The whole book. Validation enforces referential integrity, so lookups cannot miss."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    policy: ApPolicy = Field(description="Book-wide AP settings.")
    suppliers: tuple[Supplier, ...] = Field(description="Supplier master data.")
    contracts: tuple[ContractTerms, ...] = Field(description="One per supplier.")
    purchase_orders: tuple[PurchaseOrder, ...] = Field(description="Purchase orders.")
    goods_receipts: tuple[GoodsReceipt, ...] = Field(description="Goods receipts.")
    delivery_schedule: tuple[ScheduleLine, ...] = Field(description="Promised deliveries.")
    invoices: tuple[Invoice, ...] = Field(description="Supplier invoices.")
    exceptions: tuple[ApException, ...] = Field(description="AP exceptions.")
    deduction_claims: tuple[DeductionClaim, ...] = Field(description="Deduction claims.")

    @model_validator(mode="after")
    def _integrity(self) -> Self:
        suppliers = unique_ids("supplier", (s.supplier_id for s in self.suppliers))
        if unique_ids("contract", (c.supplier_id for c in self.contracts)) != suppliers:
            raise ValueError("every supplier needs exactly one contract")
        unique_ids("receipt", (r.receipt_id for r in self.goods_receipts))
        unique_ids("exception", (e.exception_id for e in self.exceptions))
        unique_ids("claim", (c.claim_id for c in self.deduction_claims))
        invoices = unique_ids("invoice", (i.invoice_id for i in self.invoices))
        unique_ids("purchase order", (p.po_id for p in self.purchase_orders))
        skus = {p.po_id: {ln.sku for ln in p.lines} for p in self.purchase_orders}
        for po in self.purchase_orders:
            unique_ids(f"{po.po_id} sku", (ln.sku for ln in po.lines))
            if po.supplier_id not in suppliers or po.currency != self.policy.currency:
                raise ValueError(f"{po.po_id}: unknown supplier or foreign currency")
        for grn in self.goods_receipts:
            if not {ln.sku for ln in grn.lines} <= skus.get(grn.po_id, set()):
                raise ValueError(f"{grn.receipt_id}: unknown PO or SKU")
        for sl in self.delivery_schedule:
            if sl.sku not in skus.get(sl.po_id, set()):
                raise ValueError(f"schedule line {sl.po_id}/{sl.sku}: unknown PO or SKU")
        unique_ids(
            "schedule", (f"{s.po_id}/{s.sku}/{s.promised_date}" for s in self.delivery_schedule)
        )
        for inv in self.invoices:
            po = self.purchase_order(inv.po_id)
            unique_ids(f"{inv.invoice_id} sku", (ln.sku for ln in inv.lines))
            if inv.supplier_id != po.supplier_id or inv.currency != po.currency:
                raise ValueError(f"{inv.invoice_id}: supplier or currency differs from its PO")
            if not {ln.sku for ln in inv.lines} <= skus[inv.po_id]:
                raise ValueError(f"{inv.invoice_id}: SKU not on the PO")
            if inv.total_cents != sum(ln.qty * ln.unit_price_cents for ln in inv.lines):
                raise ValueError(f"{inv.invoice_id}: total is not the sum of its lines")
        for exc in self.exceptions:
            if exc.invoice_id not in invoices:
                raise ValueError(f"{exc.exception_id}: unknown invoice")
        for claim in self.deduction_claims:
            rate_based = claim.type in RATE_BASED_DEDUCTIONS
            if claim.supplier_id not in suppliers or rate_based != (claim.po_id is not None):
                raise ValueError(f"{claim.claim_id}: unknown supplier, or PO given for a fee")
            if claim.po_id is not None and self.purchase_order(claim.po_id).supplier_id != (
                claim.supplier_id
            ):
                raise ValueError(f"{claim.claim_id}: PO of another supplier")
        return self

    def supplier(self, supplier_id: str) -> Supplier:
        """The supplier with this id.

        Raises:
            KeyError: When there is none.
        """
        return _index(self, "suppliers")[supplier_id]

    def contract(self, supplier_id: str) -> ContractTerms:
        """The supplier's contract terms.

        Raises:
            KeyError: When there are none.
        """
        return _index(self, "contracts")[supplier_id]

    def purchase_order(self, po_id: str) -> PurchaseOrder:
        """The PO with this id.

        Raises:
            KeyError: When there is none.
        """
        return _index(self, "purchase_orders")[po_id]

    def invoice(self, invoice_id: str) -> Invoice:
        """The invoice with this id.

        Raises:
            KeyError: When there is none.
        """
        return _index(self, "invoices")[invoice_id]

    def exception(self, exception_id: str) -> ApException:
        """The AP exception with this id.

        Raises:
            KeyError: When there is none.
        """
        return _index(self, "exceptions")[exception_id]

    def claim(self, claim_id: str) -> DeductionClaim:
        """The deduction claim with this id.

        Raises:
            KeyError: When there is none.
        """
        return _index(self, "deduction_claims")[claim_id]

    def receipts_for(self, po_id: str) -> list[GoodsReceipt]:
        """Goods receipts recorded against a PO, by date then id."""
        return list(_by_po(self).receipts.get(po_id, ()))

    def schedule_for(self, po_id: str) -> list[ScheduleLine]:
        """Schedule lines of a PO, by date then SKU."""
        return list(_by_po(self).schedule.get(po_id, ()))


_ID_OF: dict[str, Callable[[Any], str]] = {
    "suppliers": lambda s: s.supplier_id,
    "contracts": lambda c: c.supplier_id,
    "purchase_orders": lambda p: p.po_id,
    "invoices": lambda i: i.invoice_id,
    "exceptions": lambda e: e.exception_id,
    "deduction_claims": lambda c: c.claim_id,
}


@dataclass(frozen=True)
class _ByPo:
    receipts: dict[str, tuple[GoodsReceipt, ...]]
    schedule: dict[str, tuple[ScheduleLine, ...]]


@dataclass
class _Indexes:
    """Lookups over one fixtures object, made on first use: the model is frozen and deeply
    immutable (``core.frozen``), so they never go stale."""

    fixtures: RetailFixtures
    """Held, so that its id is not reused while the entry lives."""
    by_id: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    by_po: _ByPo | None = None


_indexes: dict[int, _Indexes] = {}
_INDEXES_MAX = 8


def _indexes_of(fx: RetailFixtures) -> _Indexes:
    found = _indexes.get(id(fx))
    if found is None or found.fixtures is not fx:
        if len(_indexes) >= _INDEXES_MAX:
            _indexes.pop(next(iter(_indexes)))
        found = _indexes[id(fx)] = _Indexes(fx)
    return found


def _index(fx: RetailFixtures, field_name: str) -> dict[str, Any]:
    """The records of one field of ``fx`` by id (the first of an id, as a scan finds it)."""
    indexes = _indexes.get(id(fx))  # _indexes_of's look-up, inline: every record read is one
    if indexes is None or indexes.fixtures is not fx:
        indexes = _indexes_of(fx)
    found = indexes.by_id.get(field_name)
    if found is not None:
        return found
    index: dict[str, Any] = {}
    id_of = _ID_OF[field_name]
    items: tuple[Any, ...] = getattr(fx, field_name)
    for item in items:
        index.setdefault(id_of(item), item)
    indexes.by_id[field_name] = index
    return index


def _by_po(fx: RetailFixtures) -> _ByPo:
    """Receipts (by date, then id) and schedule lines (by date, then SKU) of each PO."""
    indexes = _indexes_of(fx)
    if indexes.by_po is None:
        receipts: dict[str, list[GoodsReceipt]] = {}
        for r in fx.goods_receipts:
            receipts.setdefault(r.po_id, []).append(r)
        schedule: dict[str, list[ScheduleLine]] = {}
        for line in fx.delivery_schedule:
            schedule.setdefault(line.po_id, []).append(line)
        indexes.by_po = _ByPo(
            {
                k: tuple(sorted(v, key=lambda r: (r.received_date, r.receipt_id)))
                for k, v in receipts.items()
            },
            {
                k: tuple(sorted(v, key=lambda s: (s.promised_date, s.sku)))
                for k, v in schedule.items()
            },
        )
    return indexes.by_po


LOADER = FixtureLoader(RetailFixtures, "retail_ops", FIXTURES_PATH)


def fixtures_path() -> Path:
    """The fixture file in use: ``$EVAL_FIXTURE_DIR/retail_ops/fixtures.json`` or the committed."""
    return LOADER.path()


def load_fixtures() -> RetailFixtures:
    """The fixtures in use, validated (cached per file version: treat the result as read-only).

    Raises:
        FixtureError: One line naming the file and the first invalid field.
    """
    return LOADER()
