"""Numbers read out of free text the same way for every check: in digits (``4,180,000``,
``3.5k``, ``4 million``) or in words (``two thousand four hundred``, ``half a million``), with
percentages marked, and never from inside a date (the ``04`` of ``2002-04-12`` is a month).

A number is read whole: ``2,400,000GBP`` is 2,400,000, never 2,400, and ``LS11 5QR`` (a
postcode) holds no number at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from agentic_eval.reading.dates import date_spans
from agentic_eval.reading.words import words

_DIGITS = re.compile(
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<scale>k|m|bn|thousand|million|billion)(?![a-z]))?"
    r"(?P<pct>\s*(?:%|percent\b|per\s+cent\b))?",
    re.IGNORECASE,
)
_STUCK_CODE = re.compile(r"(?:GBP|USD|EUR)(?![A-Za-z])")
_SCALES = {
    "k": 1000,
    "thousand": 1000,
    "m": 1_000_000,
    "million": 1_000_000,
    "bn": 1_000_000_000,
    "billion": 1_000_000_000,
}
_UNITS = {
    w: n
    for n, w in enumerate(
        words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen"
        )
    )
}
_TENS = {
    w: 10 * n
    for n, w in enumerate(words("twenty thirty forty fifty sixty seventy eighty ninety"), 2)
}
_NUMBER_WORD = "|".join(
    [
        *_UNITS,
        *_TENS,
        "hundred",
        *(s for s in _SCALES if len(s) > 2),
        r"a(?=\s+(?:hundred|thousand|million|billion)\b)",
    ]
)
_WORD_RUN = re.compile(
    rf"\b(?:half\s+a\s+)?(?:{_NUMBER_WORD})(?:(?:\s+(?:and\s+)?|-)(?:{_NUMBER_WORD}))*\b"
    r"(?P<pct>\s+(?:percent\b|per\s+cent\b))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Number:
    """A number written in a text, with how it was written and where."""

    value: Decimal
    start: int
    end: int
    scaled: bool = False
    """Written with a scale word (``3.2m``, ``4 million``, ``three million``)."""
    in_words: bool = False
    percent: bool = False
    grouped: bool = False
    """Written with thousands separators (``4,180,000``): a quantity, not an identifier."""
    leading_zero: bool = False
    """Written with a leading zero (``04417321``): an identifier, never an amount."""


def canonical(value: Decimal) -> Decimal:
    """One spelling per value: ``2400``, never ``2.4E+3`` or ``2400.00``."""
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()


def _words_value(text: str) -> tuple[Decimal, bool]:
    """The value of a run of number words, and whether a scale word was in it."""
    tokens = [t for t in re.split(r"[\s-]+", text.casefold()) if t and t != "and"]
    half = tokens[:2] == ["half", "a"]
    if half:
        tokens = tokens[2:]
    total, current, scaled = Decimal(0), Decimal(0), False
    for t in tokens:
        if t == "a":  # only ever before "hundred" or a scale word (the pattern sees to it)
            current += 1
        elif t in _UNITS:
            current += _UNITS[t]
        elif t in _TENS:
            current += _TENS[t]
        elif t == "hundred":
            current = (current or 1) * 100
        else:
            total += (current or 1) * _SCALES[t]
            current, scaled = Decimal(0), True
    value = total + current
    return (value / 2 if half else value), scaled or half


def numbers_in(text: str) -> list[Number]:
    """Every number written in ``text`` (digits or words), in order, none from inside a date."""
    dates = date_spans(text)
    found: list[Number] = []

    def free(start: int, end: int) -> bool:
        return not any(a < end and start < b for a, b in dates)

    for m in _DIGITS.finditer(text):
        after = text[m.end() :]
        if (after[:1].isalnum() and not _STUCK_CODE.match(after)) or not free(*m.span()):
            continue  # "5QR", "2nd" or a date's digits: no number here
        raw, scale = m["num"], (m["scale"] or "").casefold()
        value = Decimal(raw.replace(",", "")) * _SCALES.get(scale, 1)
        found.append(
            Number(
                value=canonical(value),
                start=m.start(),
                end=m.end(),
                scaled=bool(scale),
                percent=bool(m["pct"]),
                grouped="," in raw,
                leading_zero=len(raw) > 1 and raw.startswith("0") and raw[1] != ".",
            )
        )
    digits = [(n.start, n.end) for n in found]
    for m in _WORD_RUN.finditer(text):
        if not free(*m.span()) or any(a < m.end() and m.start() < b for a, b in digits):
            continue  # the "million" of "4 million" belongs to the digits
        value, scaled = _words_value(m[0][: m.start("pct") - m.start()] if m["pct"] else m[0])
        found.append(
            Number(
                value=canonical(value),
                start=m.start(),
                end=m.end(),
                scaled=scaled,
                in_words=True,
                percent=bool(m["pct"]),
            )
        )
    return sorted(found, key=lambda n: n.start)


def percentages_in(text: str) -> list[Decimal]:
    """Every percentage written in ``text`` (``10%``, ``5 per cent``, ``ten percent``)."""
    return [n.value for n in numbers_in(text) if n.percent]
