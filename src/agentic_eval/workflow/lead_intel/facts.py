"""Whether a quote, read in its source, states a value *as that fact* of the vocabulary.

A quote is found in its source (whitespace and case aside; both read as plain text by the
check, so a soft hyphen or a look-alike letter changes nothing) and read there: the fact's own
words must be inside the quote, and the value must be in the same sentence of the quote, read
whole from the source (a quote cut to ``£4`` out of ``£4,180,000`` states £4,180,000, and the
``200`` of "ships to more than 200 customers" counts customers even if the quote stops before
"customers").

- ``company_number``: a registry number (``04417321``, ``SC123456``) beside "company number"
  (or registration/registered number, CRN).
- ``incorporated``: a date beside "incorporated"/"incorporation", compared as a date
  (``2002-04-12`` is 12 April 2002; a bare ``2002`` is within it, never the reverse).
- ``registered_office``: the value's words, in order, beside "registered office/address".
- ``employees``: one count, stated as a count of employees/staff/team/workforce ("38-strong
  team", "employees during the year: 38"), not of customers or widgets.
- ``revenue``: one amount of money with its currency, stated as revenue by the revenue lexicon
  (:mod:`revenue`) in the same currency and the same amount (``£4.18 million`` and ``£4.18mn``
  are ``£4,180,000``).

A value holding a number no reader can read (``£4.18mm``, ``38ish``) is not of its fact's
kind, and a figure in a source that cannot be read states no value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentic_eval.core.identifiers import canonical_id
from agentic_eval.reading.dates import DateText, dates_in
from agentic_eval.reading.money import Amount, amounts_in
from agentic_eval.reading.numbers import numbers_in
from agentic_eval.reading.words import sentences, word_set, words
from agentic_eval.workflow.lead_intel.outputs import FactName
from agentic_eval.workflow.lead_intel.revenue import revenue_figures

Span = tuple[int, int]

_COMPANY_NUMBER_WORDS = re.compile(
    r"\b(?:company|registration|registered)\s+(?:number|no\b\.?)|\bcrn\b", re.IGNORECASE
)
_COMPANY_NUMBER = re.compile(r"\b[A-Za-z]{0,2}\d{6,8}\b")
_INCORPORATED = re.compile(r"\bincorporat\w*", re.IGNORECASE)
_OFFICE = re.compile(r"\bregistered\s+(?:office|address)\b", re.IGNORECASE)
_EMPLOYEE_WORDS = word_set(
    "employee employees staff people persons team workforce headcount colleagues workers "
    "personnel employs employ employed employing"
)
_EMPLOYEES_BEFORE = re.compile(
    r"\b(?:employees?|staff|headcount|workforce|team|personnel|employ(?:s|ed|ing)?)\b"
    r"[^\d]{0,40}$",
    re.IGNORECASE,
)
_COUNT_NOUN = re.compile(
    r"[\s-]*(?:strong\s+)?(?:(?:full|part)[\s-]time\s+|permanent\s+)?([A-Za-z]+)", re.IGNORECASE
)
_AFTER_A_COUNT = word_set("in at as on and during across for this last by of")
_VALUE_FILLER = word_set(
    "about around approximately roughly some over under more than less fewer circa c average "
    "of number during the year full time on in date incorporation incorporated"
)
_WORD = re.compile(r"[A-Za-z0-9]+")


def locate(quote: str, source: str) -> list[Span]:
    """Every place ``quote`` appears in ``source``, whitespace- and case-normalised."""
    tokens = quote.split()
    if not tokens:
        return []
    pattern = re.compile(r"\s+".join(re.escape(t) for t in tokens), re.IGNORECASE)
    return [m.span() for m in pattern.finditer(source)]


def _leftover(value: str, spans: list[Span], allowed: frozenset[str]) -> list[str]:
    """The words of ``value`` outside ``spans`` that are not filler."""
    rest = "".join(" " if any(a <= i < b for a, b in spans) else ch for i, ch in enumerate(value))
    return [w for w in words(rest) if w not in allowed]


@dataclass(frozen=True)
class _Reading:
    """How one fact's value is read, and how a quote is seen to state it."""

    label: str
    parse: Callable[[str], Any]
    """The value read (None: the value is not one of this fact's kind)."""
    kind: str
    """What the value must be, for the message when it is not."""
    states: Callable[[Any, str, Span], bool]
    """Whether the source, within the span (one sentence's part of the quote), states it."""


def _company_number(value: str) -> str | None:
    found = canonical_id(_COMPANY_NUMBER_WORDS.sub(" ", value).replace(":", " "))
    return found if re.fullmatch(r"[A-Z]{0,2}\d{6,8}", found) else None


def _states_company_number(number: str, source: str, clip: Span) -> bool:
    if not _COMPANY_NUMBER_WORDS.search(source, *clip):
        return False
    return any(
        canonical_id(m[0]) == number
        for m in _COMPANY_NUMBER.finditer(source)
        if m.start() < clip[1] and clip[0] < m.end()
    )


def _date(value: str) -> DateText | None:
    found = dates_in(value, years=True)
    if len(found) != 1 or _leftover(value, [(found[0].start, found[0].end)], _VALUE_FILLER):
        return None
    return found[0]


def _states_date(date: DateText, source: str, clip: Span) -> bool:
    if not _INCORPORATED.search(source, *clip):
        return False
    return any(
        date.within(d)
        for d in dates_in(source, years=True)
        if d.start < clip[1] and clip[0] < d.end
    )


def _address(value: str) -> list[str] | None:
    return words(value) or None


def _states_address(address: list[str], source: str, clip: Span) -> bool:
    if not _OFFICE.search(source, *clip):
        return False
    quoted = [
        m[0].casefold() for m in _WORD.finditer(source) if m.start() < clip[1] and clip[0] < m.end()
    ]
    n = len(address)
    return any(quoted[i : i + n] == address for i in range(len(quoted) - n + 1))


def _count(value: str) -> int | None:
    found = numbers_in(value, uncertain=True)
    if len(found) != 1 or found[0].percent or found[0].uncertain or amounts_in(value):
        return None
    n = found[0]
    if n.value != n.value.to_integral_value() or _leftover(
        value, [(n.start, n.end)], _VALUE_FILLER | _EMPLOYEE_WORDS
    ):
        return None
    return int(n.value)


def _states_count(count: int, source: str, clip: Span) -> bool:
    sentence_end = next(b for a, b in sentences(source) if a <= clip[0] < b)
    money = {a.number for a in amounts_in(source)}
    for n in numbers_in(source):
        if not (n.start < clip[1] and clip[0] < n.end) or n.value != count or n.percent:
            continue
        if n in money:
            continue
        noun = _COUNT_NOUN.match(source, n.end, sentence_end)
        if noun is not None and noun[1].casefold() not in _AFTER_A_COUNT:
            if noun[1].casefold() in _EMPLOYEE_WORDS and noun.end(1) <= clip[1]:
                return True
            continue  # it counts something else: customers, widgets, sites
        if _EMPLOYEES_BEFORE.search(source[clip[0] : n.start]):
            return True
    return False


def _money(value: str) -> Amount | None:
    found = amounts_in(value)
    dates = [(d.start, d.end) for d in dates_in(value, years=True)]
    figures = [
        n for n in numbers_in(value, uncertain=True) if not any(a <= n.start < b for a, b in dates)
    ]
    return found[0] if len(found) == 1 and len(figures) == 1 else None


def _states_revenue(amount: Amount, source: str, clip: Span) -> bool:
    return any(
        f.amount is not None and f.amount.key == amount.key
        for f in revenue_figures(source, within=clip)
    )


_READINGS: dict[FactName, _Reading] = {
    "company_number": _Reading(
        "the company number", _company_number, "a company number", _states_company_number
    ),
    "incorporated": _Reading("the incorporation date", _date, "a date", _states_date),
    "registered_office": _Reading("the registered office", _address, "an address", _states_address),
    "employees": _Reading("the number of employees", _count, "a count of employees", _states_count),
    "revenue": _Reading(
        "revenue",
        _money,
        "one amount of money with its currency (e.g. £4,180,000)",
        _states_revenue,
    ),
}


def value_problem(name: FactName, value: str) -> str | None:
    """Why ``value`` cannot be a value of fact ``name`` (None when it can)."""
    reading = _READINGS[name]
    if reading.parse(value) is None:
        return f"the value of fact {name!r} ({value!r}) is not {reading.kind}"
    return None


def states_fact(name: FactName, value: str, quote: str, source: str) -> bool:
    """Whether ``quote``, found in ``source``, states ``value`` as fact ``name`` (see the
    module). A value that is not of the fact's kind is never stated."""
    reading = _READINGS[name]
    parsed = reading.parse(value)
    if parsed is None:
        return False
    for q_start, q_end in locate(quote, source):
        for s_start, s_end in sentences(source):
            if s_start < q_end and q_start < s_end:
                clip = (max(q_start, s_start), min(q_end, s_end))
                if reading.states(parsed, source, clip):
                    return True
    return False


def label(name: FactName) -> str:
    """How a message names the fact (``the number of employees``)."""
    return _READINGS[name].label
