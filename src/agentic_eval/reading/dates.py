"""Dates read as dates: ``2002-04-12``, ``12 April 2002``, ``April 12, 2002``, ``12/04/2002``
(day first, as UK filings write it), ``April 2002`` and, where asked, a bare year.

Two dates are compared by their fields, never by their digits: ``2002-04-12`` and
``12 April 2002`` are the same day, and the ``04`` of an ISO date is a month, not a figure.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {
    name: n
    for n, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_PATTERNS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"(?<![\d-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d-])"), ("y", "m", "d")),
    (
        re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.I),
        ("d", "M", "y"),
    ),
    (re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b", re.I), ("M", "d", "y")),
    (re.compile(r"(?<![\d/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?![\d/.])"), ("d", "m", "y")),
    (re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b", re.I), ("M", "y")),
)
_YEAR = re.compile(r"(?<![\d,.£$€])\b(1[89]\d\d|2[01]\d\d)\b(?![\d,]|\.\d)")


@dataclass(frozen=True)
class DateText:
    """A date written in a text: its fields (month and day None when not given) and span."""

    year: int
    month: int | None
    day: int | None
    start: int
    end: int

    def within(self, other: DateText) -> bool:
        """Whether this date says no more than ``other`` and agrees with it (``2002`` is
        within ``12 April 2002``; ``12 April 2002`` is not within ``2002``)."""
        if self.year != other.year:
            return False
        if self.month is not None and self.month != other.month:
            return False
        return self.day is None or self.day == other.day

    def __str__(self) -> str:
        if self.month is None:
            return str(self.year)
        if self.day is None:
            return f"{self.year:04d}-{self.month:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"


def _valid(year: int, month: int | None, day: int | None) -> bool:
    try:
        dt.date(year, month or 1, day or 1)
    except ValueError:
        return False
    return True


def dates_in(text: str, *, years: bool = False) -> list[DateText]:
    """Every date written in ``text``, in order; with ``years``, bare years too."""
    found: list[DateText] = []
    taken: list[tuple[int, int]] = []
    for pattern, fields in _PATTERNS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            parts = dict(zip(fields, m.groups(), strict=True))
            month = _MONTHS[parts["M"].casefold()] if "M" in parts else int(parts.get("m") or 0)
            day = int(parts["d"]) if "d" in parts else None
            year = int(parts["y"])
            if _valid(year, month, day):
                found.append(DateText(year, month, day, m.start(), m.end()))
                taken.append(m.span())
    if years:
        for m in _YEAR.finditer(text):
            if not any(a < m.end() and m.start() < b for a, b in taken):
                found.append(DateText(int(m[1]), None, None, m.start(), m.end()))
    return sorted(found, key=lambda d: d.start)


def date_spans(text: str) -> list[tuple[int, int]]:
    """Where the (non-bare-year) dates of ``text`` are: spans no figure is read from."""
    return [(d.start, d.end) for d in dates_in(text)]
