"""The one revenue lexicon: what a text says about a company's revenue, negation included.

Every check that asks "does this source state revenue", "does this fact value or these notes
give a revenue figure" or "does this quote state the revenue" asks :func:`revenue_figures`.

- Terms: revenue, turnover, sales, income, takings, top line, billings, (gross) receipts,
  bookings, run rate, ARR, GMV, and the verbs "turns over", "grosses", "brings in", "takes in"
  (any tense). Callers read text as :func:`~agentic_eval.core.plaintext.plain_text` first, so
  ``Rev\u00adenue`` is revenue.
- Not revenue: "staff turnover", "employee turnover", "stock turnover", "sales team",
  "sales director", "income tax", "HM Revenue"... (the word before or after the term says so).
- A figure: an amount of money (any currency, digits or words: ``£4,180,000``, "three million
  pounds"), or a number with a scale word ("3.2 million", "3.2mn"), or a bare number of 1,000
  or more that is not a year, an identifier (a leading zero, or right after "code", "SIC",
  "number", "no.", "reference", "registration": "the SIC code is 25990", unless a revenue
  term names it: "the revenue number is 3200000") or a date. A number
  with unknown letters on it ("3.2mm", :mod:`agentic_eval.reading.numbers`) is an uncertain
  figure: in a revenue statement it is a revenue figure whose amount cannot be read (so it
  never grounds a value). A number that counts something else ("4 million widgets", "200
  customers") or a percentage is not a revenue figure.
- A figure is stated as revenue when a term is in its sentence, in the same clause or an
  earlier one ("Revenue is not on file, but estimated at £3m" gives £3m), or, in a sentence
  with no term of its own that hedges ("about", "estimated", "roughly"...) or is the bare
  figure ("3.2m."), in the sentence just before ("Revenue: not filed. Our estimate: 3.2
  million."; "Share capital £100." after it gives none), unless a negation precedes it in
  its clause ("turnover is not disclosed below the £10.2 million threshold", "turnover is
  not £3m"). A clause starts afresh at a contrast ("but"), a parenthesis or a hedge, so
  "revenue is unknown (we estimate 3.2 million)" gives 3.2 million. A text with no term
  ("No accounts filed") says nothing about revenue.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from agentic_eval.reading.money import Amount, amounts_in
from agentic_eval.reading.numbers import Number, numbers_in
from agentic_eval.reading.words import sentences, word_set

_TERM = re.compile(
    r"\b(?:revenues?|turnover|sales|income|takings|top[\s-]?lines?|billings|receipts|bookings|"
    r"run[\s-]rate|arr|gmv|gross(?:es|ed|ing)|turn(?:s|ed|ing)?\s+over|"
    r"(?:brings?|brought|bringing|takes?|took|taking)\s+in)\b",
    re.IGNORECASE,
)
_NAMED_BY_A_TERM = re.compile(
    rf"(?:{_TERM.pattern})\s+(?:figures?\s+)?(?:number|no\.|nr|code|ref\w*|id)[\s.:#=()-]*"
    r"(?:(?:is|was)\s+)?$",
    re.IGNORECASE,
)
"""An identifier word that a revenue term names ("revenue number is 3200000"): the number
after it is that revenue, not an identifier."""
_NOT_REVENUE_BEFORE = word_set(
    "staff employee employees labour labor personnel workforce people customer customers "
    "client clients stock inventory asset assets board member members tenant hm"
)
_NOT_REVENUE_AFTER: dict[str, frozenset[str]] = {
    "sales": word_set(
        "team teams staff manager managers director directors office offices rep reps "
        "representative representatives executive executives person people force department "
        "call calls enquiries enquiry contact lead leads pitch email"
    ),
    "income": frozenset({"tax"}),
    "turnover": frozenset({"rate", "rates"}),
    "turn over": frozenset({"to", "the"}),
}
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|without|cannot|undisclosed|unpublished|unknown|"
    r"unavailable|unreported|withheld|confidential)\b|n['\u2019]t\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:estimat\w*|est|about|around|roughly|approximately|circa|probably|likely|"
    r"reportedly|believed|guess\w*)\b",
    re.IGNORECASE,
)
_CLAUSE_CUT = re.compile(
    rf"\b(?:but|however|although|though|whereas|yet)\b|[()]|{_HEDGE.pattern}", re.IGNORECASE
)
"""Where a clause starts afresh, so a negation before it no longer reaches: a contrast
("not on file, but £3m"), a parenthesis ("unknown (3.2 million)") or a hedge ("not disclosed,
estimated at £3m")."""
_NEXT_WORD = re.compile(r"[\s-]*([A-Za-z&]+)")
_PREVIOUS_WORD = re.compile(r"([A-Za-z]+)[^A-Za-z]*$")
_FOLLOWS_A_FIGURE = word_set(
    "in for of and or the a an this that last per by at on to from with was is were are be "
    "been over under about around approximately roughly each every annually year years "
    "pa p gbp usd eur pounds pound sterling dollars euros"
)


@dataclass(frozen=True)
class Term:
    """A revenue term written in a text, and where."""

    word: str
    """The term, normalised: ``revenue``, ``turnover``, ``sales``, ``top line``, ``turn
    over``, ``brings in``..."""
    start: int
    end: int


@dataclass(frozen=True)
class RevenueFigure:
    """A figure a text states as revenue, with the term that makes it revenue."""

    number: Number
    amount: Amount | None
    """The figure as money (None when it carries no currency, "3.2 million", or its value
    cannot be read, "£3.2mm")."""
    term: Term


_VERBS = {
    "turn": "turn over",
    "bring": "brings in",
    "brought": "brings in",
    "take": "takes in",
    "took": "takes in",
    "gross": "grosses",
}


def _term_word(raw: str) -> str:
    word = " ".join(raw.casefold().replace("-", " ").split())
    for stem, verb in _VERBS.items():
        if word.startswith(stem) and (" " in word or stem == "gross"):
            return verb
    if word.startswith("top"):
        return "top line"
    return "revenue" if word == "revenues" else word


def terms_in(text: str) -> list[Term]:
    """Every revenue term of ``text`` that is about a company's takings (not staff turnover,
    the sales team or income tax)."""
    found: list[Term] = []
    for m in _TERM.finditer(text):
        word = _term_word(m[0])
        before = _PREVIOUS_WORD.search(text[max(0, m.start() - 40) : m.start()])
        after = _NEXT_WORD.match(text[m.end() :])
        if before is not None and before[1].casefold() in _NOT_REVENUE_BEFORE:
            continue
        if after is not None and after[1].casefold() in _NOT_REVENUE_AFTER.get(word, ()):
            continue
        found.append(Term(word, m.start(), m.end()))
    return found


def mentions_revenue(text: str) -> bool:
    """Whether ``text`` names revenue at all (negated or not)."""
    return bool(terms_in(text))


def _counts_something(text: str, n: Number, end: int) -> bool:
    """Whether the word after ``n`` (in its sentence) says what it counts ("4 million
    widgets")."""
    after = _NEXT_WORD.match(text, n.end, end)
    if after is None:
        return False
    word = after[1].casefold()
    return word not in _FOLLOWS_A_FIGURE and not _TERM.match(text, after.start(1), end)


def _is_figure(text: str, n: Number, amount: Amount | None, end: int) -> bool:
    if n.percent:
        return False
    if amount is not None:
        return True
    if n.leading_zero or _counts_something(text, n, end):
        return False
    if n.identifier and not _NAMED_BY_A_TERM.search(text, max(0, n.start - 60), n.start):
        return False
    if n.uncertain:
        return True
    if n.scaled:
        return True
    year = not n.grouped and n.value == n.value.to_integral_value() and 1800 <= n.value <= 2199
    return n.value >= 1000 and not year


def _bare(text: str, start: int, end: int, written: list[tuple[int, int]]) -> bool:
    """Whether the sentence is figures alone ("3.2m.", "£3.2mn."): no word outside them."""
    rest = "".join(
        " " if any(a <= i < b for a, b in written) else text[i] for i in range(start, end)
    )
    return not re.search(r"[A-Za-z]", rest)


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts = [start, *(m.start() for m in _CLAUSE_CUT.finditer(text, start, end)), end]
    return list(itertools.pairwise(cuts))


def revenue_figures(text: str, within: tuple[int, int] | None = None) -> list[RevenueFigure]:
    """Every figure ``text`` states as a company's revenue, in order (see the module).

    Args:
        text: The text, read whole (a figure is read in its sentence).
        within: Only figures overlapping this span whose revenue term lies inside it (what a
            quote of ``text`` at that span states).
    """
    lo, hi = within if within is not None else (0, len(text))
    numbers = [n for n in numbers_in(text, uncertain=True) if n.start < hi and lo < n.end]
    amounts = amounts_in(text, uncertain=True)
    money = {a.number: a for a in amounts if a.number is not None and not a.uncertain}
    written = [(x.start, x.end) for x in [*numbers, *amounts]]
    terms = [t for t in terms_in(text) if lo <= t.start and t.end <= hi]
    found: list[RevenueFigure] = []
    before: list[Term] = []  # the previous sentence's terms
    for s_start, s_end in sentences(text):
        clauses = _clauses(text, s_start, s_end)
        own = [t for t in terms if s_start <= t.start < s_end]
        for n in (n for n in numbers if s_start <= n.start < s_end):
            amount = money.get(n)
            if not _is_figure(text, n, amount, s_end):
                continue
            c_start, c_end = next(c for c in clauses if c[0] <= n.start < c[1])
            follows_on = _HEDGE.search(text, s_start, s_end) or _bare(text, s_start, s_end, written)
            carried = before if not own and follows_on else []
            in_reach = [t for t in own if t.start < c_end] or carried
            if not in_reach or _NEGATION.search(text, c_start, n.start):
                continue
            nearest = min(in_reach, key=lambda t: abs(t.start - n.start))
            found.append(RevenueFigure(n, amount, nearest))
        before = own
    return found


def states_revenue(text: str) -> bool:
    """Whether ``text`` states a revenue figure (affirmatively: see the module)."""
    return bool(revenue_figures(text))
