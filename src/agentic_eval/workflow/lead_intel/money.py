"""Reading amounts of money and figures out of free text, the same way for every check.

Amounts are recognised with a currency marker before (``£2,400``, ``GBP 14,000``, ``$14k``) or
after (``14,000 pounds``, ``14k GBP``) the number, with optional scale words (``k``, ``m``,
``million``...). A number is read whole (``£2,400,000GBP`` is 2,400,000, never 2,400).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_NUM = r"\d[\d,]*(?:\.\d+)?"
_SCALE_WORDS = r"k|m|bn|thousand|million|billion"
_BEFORE = r"£|GBP|USD|EUR|\$|€"
_AFTER = r"GBP|USD|EUR|pounds?(?:\s+sterling)?|sterling|quid|dollars?|euros?"
_AMOUNT_BEFORE = re.compile(
    rf"(?:{_BEFORE})\s*(?P<num>{_NUM})(?:\s*(?P<scale>{_SCALE_WORDS})(?![a-z]))?", re.IGNORECASE
)
_AMOUNT_AFTER = re.compile(
    rf"(?<![\d,.])(?P<num>{_NUM})(?:\s*(?P<scale>{_SCALE_WORDS})(?![a-z]))?\s*(?:{_AFTER})(?![a-z])",
    re.IGNORECASE,
)
_FIGURE = re.compile(rf"(?<![\d,.])(?P<num>{_NUM})(?:\s*(?P<scale>{_SCALE_WORDS})(?![a-z]))?", re.I)
_SCALE = {
    "": 1,
    "k": 1000,
    "thousand": 1000,
    "m": 1_000_000,
    "million": 1_000_000,
    "bn": 1_000_000_000,
    "billion": 1_000_000_000,
}


def _amount(num: str, scale: str | None) -> Decimal | None:
    try:
        value = Decimal(num.rstrip(",.").replace(",", ""))
    except InvalidOperation:
        return None
    return (value * _SCALE[(scale or "").casefold()]).normalize()


def amounts_in(text: str) -> list[Decimal]:
    """Every amount of money written in ``text``, in order of appearance."""
    found: list[tuple[int, Decimal]] = []
    taken: list[tuple[int, int]] = []
    for m in _AMOUNT_BEFORE.finditer(text):
        amount = _amount(m["num"], m["scale"])
        if amount is not None:
            found.append((m.start(), amount))
            taken.append(m.span())
    for m in _AMOUNT_AFTER.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue  # "£14,000 GBP" is one amount
        amount = _amount(m["num"], m["scale"])
        if amount is not None:
            found.append((m.start(), amount))
    return [amount for _, amount in sorted(found, key=lambda f: f[0])]


def figures_in(text: str) -> list[Decimal]:
    """Every number written in ``text`` (with its scale word applied), money or not."""
    found = [_amount(m["num"], m["scale"]) for m in _FIGURE.finditer(text)]
    return [f for f in found if f is not None]


def pounds(value: float) -> Decimal:
    """A price as an exact decimal (``2400.0`` and ``2400`` are the same price)."""
    return Decimal(repr(value)).normalize()


def fmt(amount: Decimal) -> str:
    """``£14,000``."""
    return f"£{amount.normalize():,f}"
