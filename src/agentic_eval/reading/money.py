"""Amounts of money read out of free text, each with its currency, the same way for every check.

An amount is a number (:mod:`numbers`: digits or words, with scale words) with a currency
marker before it (``£2,400``, ``GBP 14,000``, ``$14k``, ``€2,400``) or after it
(``14,000 pounds``, ``14k GBP``, ``two thousand four hundred pounds``). A number with no
currency is not an amount of money, and amounts in different currencies never match: ``$1,200``
is not the ``£1,200`` of a pricing note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from agentic_eval.reading.numbers import Number, canonical, numbers_in

_BEFORE = re.compile(r"(?<![A-Za-z])(?P<cur>US\$|\$|£|€|GBP|USD|EUR)\s*$", re.IGNORECASE)
_AFTER = re.compile(
    r"^\s*(?P<cur>GBP|USD|EUR|pounds?(?:\s+sterling)?|sterling|quid|dollars?|euros?)"
    r"(?![A-Za-z])",
    re.IGNORECASE,
)
_CURRENCY = {
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "sterling": "GBP",
    "quid": "GBP",
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
}
_SYMBOL = {"GBP": "£", "USD": "$", "EUR": "€"}


@dataclass(frozen=True)
class Amount:
    """An amount of money: ISO 4217 currency and exact value, with where it was written."""

    currency: str
    value: Decimal
    start: int = 0
    end: int = 0
    number: Number | None = None
    """The number it was read from (None for an amount made from a typed field)."""

    @property
    def key(self) -> tuple[str, Decimal]:
        """What two amounts must share to be the same amount: currency and value."""
        return self.currency, self.value

    def __str__(self) -> str:
        return fmt(self)


def _currency(marker: str) -> str:
    return _CURRENCY[marker.split()[0].casefold()]


def amounts_in(text: str) -> list[Amount]:
    """Every amount of money written in ``text``, in order of appearance."""
    found: list[Amount] = []
    for n in numbers_in(text):
        if n.percent:
            continue
        before = _BEFORE.search(text, max(0, n.start - 10), n.start)
        after = _AFTER.match(text[n.end :])
        if before is not None:
            found.append(Amount(_currency(before["cur"]), n.value, before.start(), n.end, n))
        elif after is not None:
            found.append(Amount(_currency(after["cur"]), n.value, n.start, n.end + after.end(), n))
    return found


def gbp(value: float) -> Amount:
    """A typed price in pounds as an exact amount (``2400.0`` and ``2400`` are one price)."""
    return Amount("GBP", canonical(Decimal(repr(value))))


def fmt(amount: Amount) -> str:
    """``£14,000``, ``$1,200``, ``€2,400.50``."""
    symbol = _SYMBOL.get(amount.currency)
    whole = amount.value == amount.value.to_integral_value()
    figure = f"{amount.value:,.0f}" if whole else f"{amount.value:,.2f}"
    return f"{symbol}{figure}" if symbol else f"{figure} {amount.currency}"
