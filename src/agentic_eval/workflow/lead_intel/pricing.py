"""An offer draft read against the operator's pricing notes, as ``assert_price_from_notes`` does.

- Every amount carries its currency (:mod:`money`), in digits or words; one in a currency the
  notes do not price in (``$1,200`` against notes in pounds) is not the notes' price.
- A line's unit price is a price the notes give, the price of the service the line names
  (service names compared as singular words: "audits" is "audit"), and a line naming no service
  of the notes fails.
- An amount in a line's description, the terms or the notes plays one of three roles, read from
  the words around it:

  - a *rate* ("£3,500 per day", "£2,400 a site", "£1,200/month", "£2,400 each"): it must be a
    price of the notes (in a line's description, that line's service's price), at the unit the
    notes give when a unit is written;
  - a *total* ("total £4,800", "£4,800 in total", "= £22,500", "£4,800 for 2 sites"): it must
    equal quantity x unit price of the line it totals (in a description) or of the whole offer
    or one of its lines (in the terms and notes);
  - otherwise a *price*: it must be a price of the notes (in a line's description, that line's
    service's price). A line total written with no word saying it is a total is not derived.

- A percentage, or a discount in any words ("discount", "rebate", "free of charge", "waived"),
  that the notes never mention fails; "no discount applies" offers none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from agentic_eval.reading.money import Amount, amounts_in, fmt, gbp
from agentic_eval.reading.numbers import percentages_in
from agentic_eval.reading.words import singular, singular_words
from agentic_eval.workflow.lead_intel.outputs import OfferDraft

_NOTE_SERVICE = re.compile(r"^\s*[-*•]\s*(?P<name>[^:]+):\s*(?P<rest>.+)$")
_RATE_AFTER = re.compile(
    r"\s*(?:(?:per|a|an|every)\s+|/\s*)(?P<unit>[A-Za-z]+)|\s*(?:for\s+)?each\b", re.IGNORECASE
)
_TOTAL_AFTER = re.compile(
    r"\s*(?:in\s+total|in\s+all|altogether|total\b|overall\b|for\s+(?:the\s+)?"
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b)",
    re.IGNORECASE,
)
_TOTAL_BEFORE = re.compile(
    r"(?:\b(?:(?:sub-?|grand\s+)?total\w*|in\s+all|altogether|overall|sum)\b[^.;\n]*|=\s*)$",
    re.IGNORECASE,
)
_DISCOUNT = re.compile(
    r"\b(?:discount\w*|rebate\w*|reductions?|reduced\s+(?:rate|price|fee)s?|money\s+off|"
    r"cash\s*back|free\s+of\s+charge|for\s+free|at\s+no\s+(?:extra\s+|additional\s+)?"
    r"(?:cost|charge)|complimentary|waived?|waives|waiver|promotional|"
    r"(?:introductory|special)\s+(?:offer|price|rate)|off\s+the\s+(?:list\s+)?price|"
    r"(?<!feel\s)free(?!\s+to\b))\b|%\s*off\b",
    re.IGNORECASE,
)
_NEGATED_BEFORE = re.compile(r"\b(?:no|not|without|never|nor)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_NEGATED_AFTER = re.compile(
    r"^[^.;\n]{0,24}?(?:\b(?:not|none|nil)\b|n/a\b|n['\u2019]t\b)", re.IGNORECASE
)


@dataclass(frozen=True)
class NotePrice:
    """One service the notes price: its name (singular words), price and unit."""

    service: str
    amount: Amount
    unit: str | None


def note_prices(notes: str) -> list[NotePrice]:
    """Every ``- Service: price per unit`` line of the pricing notes, in order."""
    found: list[NotePrice] = []
    for line in notes.splitlines():
        m = _NOTE_SERVICE.match(line)
        if m is None:
            continue
        prices = amounts_in(m["rest"])
        if prices:
            rate = _RATE_AFTER.match(m["rest"], prices[0].end)
            unit = singular(rate["unit"].casefold()) if rate and rate["unit"] else None
            found.append(NotePrice(singular_words(m["name"]), prices[0], unit))
    return found


def discounts_in(text: str) -> list[str]:
    """Every discount ``text`` offers (in any words), not counting negated ones."""
    return [
        m[0]
        for m in _DISCOUNT.finditer(text)
        if not _NEGATED_BEFORE.search(text, 0, m.start())
        and not _NEGATED_AFTER.match(text[m.end() :])
    ]


def _role(text: str, a: Amount) -> tuple[str, str | None]:
    """``("rate", unit)``, ``("total", None)`` or ``("price", None)`` (see the module)."""
    rate = _RATE_AFTER.match(text, a.end)
    if rate is not None:
        return "rate", singular(rate["unit"].casefold()) if rate["unit"] else None
    if _TOTAL_AFTER.match(text, a.end) or _TOTAL_BEFORE.search(text, 0, a.start):
        return "total", None
    return "price", None


@dataclass(frozen=True)
class _Notes:
    amounts: set[tuple[str, Decimal]]
    currencies: set[str]
    percentages: set[Decimal]
    discounts: bool


def _amount_problem(
    where: str, text: str, a: Amount, notes: _Notes, priced: list[NotePrice], totals: set[Amount]
) -> str | None:
    if a.currency not in notes.currencies:
        return f"{fmt(a)} ({where}) is in {a.currency}; the pricing notes price in " + ", ".join(
            sorted(notes.currencies)
        )
    role, unit = _role(text, a)
    if role == "total":
        if a.key in {t.key for t in totals}:
            return None
        want = ", ".join(sorted({fmt(t) for t in totals}))
        return f"{fmt(a)} ({where}) is called a total, but the offer's totals are {want}"
    same = [p for p in priced if p.amount.key == a.key]
    if not same:
        kind = "rate" if role == "rate" else "price"
        if a.key in notes.amounts:
            services = ", ".join(p.service for p in priced)
            return f"{fmt(a)} ({where}, a {kind}) is not the notes' price of {services}"
        return f"{fmt(a)} ({where}, a {kind}) is not in the operator's pricing notes"
    if unit is not None and not any(p.unit in (None, unit) for p in same):
        units = ", ".join(sorted({f"per {p.unit}" for p in same}))
        return f"{fmt(a)} per {unit} ({where}): the pricing notes give {fmt(a)} {units}"
    return None


def offer_problems(offer: OfferDraft, notes_text: str) -> list[str]:
    """Everything in ``offer`` the pricing notes do not support (see the module)."""
    prices = note_prices(notes_text)
    noted = amounts_in(notes_text)
    notes = _Notes(
        amounts={a.key for a in noted},
        currencies={a.currency for a in noted} or {"GBP"},
        percentages=set(percentages_in(notes_text)),
        discounts=bool(discounts_in(notes_text)),
    )
    allowed = notes.amounts
    everywhere = prices or [NotePrice("", a, None) for a in noted]
    problems: list[str] = []
    if not offer.line_items:
        problems.append("the offer prices nothing (no line items)")
    line_totals: list[Amount] = []
    texts: list[tuple[str, str, list[NotePrice], set[Amount]]] = []
    for i, line in enumerate(offer.line_items, 1):
        price = gbp(line.unit_price_gbp)
        line_total = Amount("GBP", price.value * line.quantity)
        line_totals.append(line_total)
        described = f" {singular_words(line.description)} "
        named = [p for p in prices if p.service and f" {p.service} " in described]
        if price.key not in allowed:
            problems.append(
                f"{fmt(price)} (line {i} unit price) is not in the operator's pricing notes"
            )
        elif prices and not named:
            problems.append(
                f"line {i} ({line.description!r}) is not a service in the pricing notes"
            )
        elif named and price.key not in {p.amount.key for p in named}:
            want = ", ".join(f"{p.service} at {fmt(p.amount)}" for p in named)
            problems.append(f"line {i} is priced {fmt(price)}; the notes price {want}")
        texts.append((f"line {i} description", line.description, named or everywhere, {line_total}))
    grand = Amount("GBP", sum((t.value for t in line_totals), start=Decimal(0)))
    offer_totals = {grand, *line_totals}
    texts += [("terms", offer.terms, everywhere, offer_totals)]
    texts += [("notes", offer.notes, everywhere, offer_totals)]
    for where, text, priced, totals in texts:
        for a in amounts_in(text):
            problem = _amount_problem(where, text, a, notes, priced, totals)
            if problem is not None:
                problems.append(problem)
        problems.extend(
            f"{p.normalize():f}% ({where}) is not in the operator's pricing notes"
            for p in percentages_in(text)
            if p not in notes.percentages
        )
        if not notes.discounts:
            problems.extend(
                f"{where} offer a discount ({d!r}) the pricing notes never mention"
                for d in discounts_in(text)
            )
    return problems
