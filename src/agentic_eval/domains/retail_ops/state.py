"""The final state of a retail_ops case as records: what the run paid, closed and drafted.

One set of record builders serves both sides of the ``final_state_matches`` gate: the gate's
view of an environment (:func:`final_state`) and the answer key's expectation
(:func:`expected_final_state`), so the two can only differ in what happened.

Records (nothing else a tool can change):
- ``invoice INV-2001``: ``paid`` and ``amount_paid`` (money: minor units and currency);
- ``exception EXC-501``: ``status`` ``closed``;
- ``supplier email SUP-003``: ``drafts`` (how many) and ``to_email`` (the addresses, sorted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agentic_eval.checks.state import StateRecords
from agentic_eval.core.identifiers import canonical_id, money
from agentic_eval.domains.retail_ops.fixtures import RetailFixtures
from agentic_eval.domains.retail_ops.tools import RetailEnv

__all__ = ["expected_final_state", "final_state"]


def _paid(fx: RetailFixtures, invoice_id: str) -> tuple[str, dict[str, object]]:
    invoice = fx.invoice(invoice_id)
    amount = money(invoice.total_cents, invoice.currency)
    return f"invoice {canonical_id(invoice_id)}", {"paid": True, "amount_paid": amount}


def _closed(exception_id: str) -> tuple[str, dict[str, object]]:
    return f"exception {canonical_id(exception_id)}", {"status": "closed"}


def _emails(to: Mapping[str, list[str]]) -> StateRecords:
    return {
        f"supplier email {canonical_id(s)}": {
            "drafts": len(addresses),
            "to_email": sorted(a.strip().lower() for a in addresses),
        }
        for s, addresses in to.items()
        if addresses
    }


def _records(
    fx: RetailFixtures, paid: Iterable[str], closed: Iterable[str], emails: Mapping[str, list[str]]
) -> StateRecords:
    records: StateRecords = dict(_paid(fx, i) for i in paid)
    records.update(_closed(x) for x in closed)
    records.update(_emails(emails))
    return records


def final_state(env: RetailEnv) -> StateRecords:
    """What the run changed in the book, as records."""
    emails: dict[str, list[str]] = {}
    for e in env.emails:
        emails.setdefault(e.supplier_id, []).append(e.to_email)
    return _records(env.state, env.paid_invoice_ids, env.closed_exceptions, emails)


def expected_final_state(
    fx: RetailFixtures,
    *,
    paid: Iterable[str] = (),
    closed: Iterable[str] = (),
    emails: Mapping[str, list[str]] | None = None,
) -> StateRecords:
    """The records a correct run leaves: the invoices it pays in full, the exceptions it
    closes, one draft to each supplier address to chase."""
    return _records(fx, paid, closed, emails or {})
