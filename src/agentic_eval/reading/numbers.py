"""Numbers read out of free text the same way for every check: in digits (``4,180,000``,
``3.5k``, ``4 million``, ``3.2mn``, ``$3.2MM``, ``£2bn``) or in words (``two thousand four
hundred``, ``half a million``), with percentages marked (``10%``, ``5 per cent``, ``10pc``), and
never from inside a date (the ``04`` of ``2002-04-12`` is a month).

A number is read whole: ``2,400,000GBP`` is 2,400,000, never 2,400, and ``LS11`` (letters
before the digits, other than a currency code: ``GBP14,000`` is read) holds no number at all.

Scale words: k, thousand, m, mn, mln, mil, mio, million, MM (in capitals: ``mm`` is
millimetres), b (written on a decimal or on money: ``3.2b``, ``£2b``; ``Unit 7b`` is no
billion), bn, bln, mrd, billion, lakh, crore; before a scale word a comma may be the decimal
point (``3,2 Mio`` is 3.2 million). A number with other letters written on it (``3.2zz``,
``5QR``, ``14kk``) is *uncertain*: its scale or meaning cannot be read, so :func:`numbers_in`
leaves it out unless asked, and a check that asks decides what an unreadable figure means to it
(ordinals, ``2nd``, are no numbers at all). A whole number written plainly
(no grouping, no scale) right after an identifier word ("SIC code is 25990", "reference 48213",
"no. 7") is marked an *identifier*; "number: 3.2 million" is no identifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from agentic_eval.reading.currencies import CODE, SIGN, is_code
from agentic_eval.reading.dates import date_spans
from agentic_eval.reading.words import words

SCALE_WORDS = r"thousand|million|billion|mln|bln|mio|mrd|mil|mn|bn|lakhs?|crores?|(?-i:MM)|k|m"
"""The scale words a number may carry after it, spaced or not (``b`` only written on it)."""
_DIGITS = re.compile(
    r"(?<![\d.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|"
    rf"(?P<comma>\d+,\d{{1,2}}(?=\s*(?:{SCALE_WORDS})(?![a-z])))|\d+(?:\.\d+)?)"
    rf"(?:(?:\s*(?P<scale>{SCALE_WORDS})|(?P<b>b))(?![a-z]))?"
    r"(?P<pct>\s*(?:%|percent\b|per[\s-]cent\b|pct\b|pc\b))?",
    re.IGNORECASE,
)
_STUCK_CODE = re.compile(rf"(?:{CODE}|(?i:GBP|USD|EUR))(?![A-Za-z])")
_ORDINAL = re.compile(r"(?:st|nd|rd|th)(?![A-Za-z0-9])", re.IGNORECASE)
_GLUED = re.compile(r"[^\W_]+")
_MONEY_BEFORE = re.compile(rf"(?:{SIGN}|{CODE}|(?i:GBP|USD|EUR))\s*$")
_LETTERS_BEFORE = re.compile(r"[A-Za-z_]+$")
_IDENTIFIER_BEFORE = re.compile(
    r"(?:\b(?:code|sic|number|nos?\.|num|nr|ref|reference|registration|reg|id|crn)|#)"
    r"[\s.:#=()-]*(?:(?:is|was)\s+)?$",
    re.IGNORECASE,
)
_SCALES = {
    "k": 1000,
    "thousand": 1000,
    "m": 1_000_000,
    "mn": 1_000_000,
    "mln": 1_000_000,
    "mil": 1_000_000,
    "mio": 1_000_000,
    "mm": 1_000_000,
    "million": 1_000_000,
    "b": 1_000_000_000,
    "bn": 1_000_000_000,
    "bln": 1_000_000_000,
    "lakh": 100_000,
    "lakhs": 100_000,
    "crore": 10_000_000,
    "crores": 10_000_000,
    "mrd": 1_000_000_000,
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
        "thousand",
        "million",
        "billion",
        r"a(?=\s+(?:hundred|thousand|million|billion)\b)",
    ]
)
_WORD_RUN = re.compile(
    rf"\b(?:half\s+a\s+)?(?:{_NUMBER_WORD})(?:(?:\s+(?:and\s+)?|-)(?:{_NUMBER_WORD}))*\b"
    r"(?P<pct>\s+(?:percent\b|per[\s-]cent\b))?",
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
    identifier: bool = False
    """Right after an identifier word (``SIC code 25990``, ``ref 48213``): not a quantity."""
    uncertain: bool = False
    """Written with letters no reader knows on it (``3.2zz``, ``5QR``): its value is the
    digits alone, and its span covers the letters (see the module)."""


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


def _letters_allow(text: str, start: int) -> bool:
    """Whether the digits at ``start`` may be read: not glued to letters before them, unless
    those letters are a currency code (``GBP14,000``, never ``LS11``)."""
    if start == 0 or not (text[start - 1].isalpha() or text[start - 1] == "_"):
        return True
    letters = _LETTERS_BEFORE.search(text[max(0, start - 4) : start])
    return letters is not None and is_code(letters[0])


def _digit_numbers(text: str, free: Callable[[int, int], bool]) -> list[Number]:
    found: list[Number] = []
    for m in _DIGITS.finditer(text):
        if not free(*m.span()) or not _letters_allow(text, m.start()):
            continue  # a date's digits, or part of an id such as LS11
        raw, end = m["num"], m.end()
        scale = (m["scale"] or "").casefold()
        if m["b"] and ("." in raw or _MONEY_BEFORE.search(text, max(0, m.start() - 4), m.start())):
            scale = "b"  # £2b, 3.2b: a billion; "Unit 7b" is an address
        elif m["b"]:
            end = m.start("b")
        uncertain = False
        if text[end : end + 1].isalnum() or text[end : end + 1] == "_":
            if _STUCK_CODE.match(text, end):
                pass  # 2,400,000GBP: a currency written on the number
            elif not scale and not m["pct"] and _ORDINAL.match(text, end) and "." not in raw:
                continue  # 2nd, 3rd: an ordinal, no number
            else:
                glued = _GLUED.match(text, end)
                end, uncertain = (glued.end() if glued else end), True
        figure = raw.replace(",", ".") if m["comma"] else raw.replace(",", "")
        value = Decimal(figure) * (1 if uncertain else _SCALES.get(scale, 1))
        found.append(
            Number(
                value=canonical(value),
                start=m.start(),
                end=end,
                scaled=bool(scale) and not uncertain,
                percent=bool(m["pct"]) and not uncertain,
                grouped="," in raw and not m["comma"],
                leading_zero=len(raw) > 1 and raw.startswith("0") and raw[1] != ".",
                identifier=raw.isdigit()
                and not scale
                and _IDENTIFIER_BEFORE.search(text, max(0, m.start() - 30), m.start()) is not None,
                uncertain=uncertain,
            )
        )
    return found


def numbers_in(text: str, *, uncertain: bool = False) -> list[Number]:
    """Every number written in ``text`` (digits or words), in order, none from inside a date.

    Args:
        text: The text.
        uncertain: Also the numbers with unknown letters written on them (``3.2mm``: millions
            or millimetres?), marked :attr:`Number.uncertain`: left out by default, because
            their value is not known.

    Returns:
        The numbers, in order of where they start.
    """
    dates = date_spans(text)

    def free(start: int, end: int) -> bool:
        return not any(a < end and start < b for a, b in dates)

    found = [n for n in _digit_numbers(text, free) if uncertain or not n.uncertain]
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
