"""Amounts of money read out of free text, each with its currency, the same way for every check.

An amount is a number (:mod:`numbers`: digits or words, with scale words) with a currency
marker before it (``£2,400``, ``GBP 14,000``, ``$14k``, ``€2,400``, ``CHF 14,000``,
``A$14,000``, ``₤3,200,000``) or after it (``14,000 pounds``, ``14k GBP``, ``two thousand four
hundred pounds``, ``14,000 Swiss francs``): every currency sign, code and common name
(:mod:`currencies`), known to the reader or not. A number with no currency is not an amount of
money, and amounts in different currencies never match: ``$1,200`` is not the ``£1,200`` of a
pricing note, and ``CHF 14,000`` is in a currency the notes' pounds never are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from agentic_eval.reading.currencies import (
    ADJECTIVE,
    CODE,
    NAMES,
    SIGN,
    currency_of,
    named_currency,
)
from agentic_eval.reading.numbers import Number, canonical, numbers_in

_BEFORE = re.compile(
    rf"(?:(?<![A-Za-z])(?P<cur>(?i:US\$|GBP|USD|EUR)|[A-Z]{{1,3}}\$|{CODE})|(?P<sign>{SIGN}))\s*$"
)
_AFTER = re.compile(
    rf"\.?\s*(?:(?!(?i:{NAMES})(?![A-Za-z]))(?P<adj>{ADJECTIVE})\s+(?=(?i:{NAMES})(?![A-Za-z])))?"
    rf"(?P<cur>(?i:GBP|USD|EUR|{NAMES})|{CODE})(?![A-Za-z])"
)
_SYMBOL = {"GBP": "£", "USD": "$", "EUR": "€"}


@dataclass(frozen=True)
class Amount:
    """An amount of money: ISO 4217 currency (or the sign or code written, for a currency no
    code is known for) and exact value, with where it was written."""

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

    @property
    def uncertain(self) -> bool:
        """Whether its number has unknown letters written on it (``£3.2mm``): money, of a
        value no reader can tell (:attr:`value` is the digits alone)."""
        return self.number is not None and self.number.uncertain

    def __str__(self) -> str:
        return fmt(self)


def amounts_in(text: str, *, uncertain: bool = False) -> list[Amount]:
    """Every amount of money written in ``text``, in order of appearance.

    Args:
        text: The text.
        uncertain: Also money whose number has unknown letters on it (``£3.2mm``): see
            :attr:`Amount.uncertain`.
    """
    return amounts_among(text, numbers_in(text, uncertain=uncertain))


def amounts_among(text: str, numbers: Iterable[Number]) -> list[Amount]:
    """The amounts of money among ``numbers``, read from ``text`` by :func:`numbers_in` (for
    a caller that wants both the numbers and the amounts of one text, read once)."""
    found: list[Amount] = []
    for n in numbers:
        if n.percent:
            continue
        before = _BEFORE.search(text, max(0, n.start - 10), n.start)
        after = _AFTER.match(text, n.end)
        if before is not None:
            marker = before["cur"] or before["sign"]
            found.append(Amount(currency_of(marker), n.value, before.start(), n.end, n))
        elif after is not None:
            cur = after["cur"]
            currency = named_currency(after["adj"], cur) if after["adj"] else currency_of(cur)
            found.append(Amount(currency, n.value, n.start, after.end(), n))
    return found


def gbp(value: float) -> Amount:
    """A typed price in pounds as an exact amount (``2400.0`` and ``2400`` are one price)."""
    return Amount("GBP", canonical(Decimal(repr(value))))


def fmt(amount: Amount) -> str:
    """``£14,000``, ``$1,200``, ``€2,400.50``, ``14,000 CHF`` (an uncertain amount is shown as
    written by whoever reads it: its value is the digits alone)."""
    symbol = _SYMBOL.get(amount.currency)
    whole = amount.value == amount.value.to_integral_value()
    figure = f"{amount.value:,.0f}" if whole else f"{amount.value:,.2f}"
    return f"{symbol}{figure}" if symbol else f"{figure} {amount.currency}"
