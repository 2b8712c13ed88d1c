"""An offer draft read against the operator's pricing notes, as ``assert_price_from_notes`` does.

Every string field of the offer is read (the client, each line's description, the terms, the
notes: :mod:`fields`), as plain text, with the job's client's own name blanked out (a name is
no price: "Widgets 4000 Ltd").

- Every amount carries its currency (:mod:`money`), in digits or words; one in a currency the
  notes do not price in (``$1,200``, ``CHF 14,000``, ``₤14,000`` against notes in pounds) is
  not the notes' price.
- A bare number is a price too where it stands as one: after a price word ("fee 14,000"),
  before a tax ("14,000 plus VAT") or written like money ("Implementation: 14,000", "14k",
  "1,200.00"), but never a count ("payment 30 days net", "2 sites"), an identifier, a year or a
  date. It is read in the notes' currency (when they price in one) and judged as any price.
- A number with unknown letters on it ("£2.4zz", "fee 14kk") cannot be read as any price: it
  fails wherever it carries a currency or stands as a price.
- A line's unit price is a price the notes give, the price of the service the line names
  (service names compared as singular words: "audits" is "audit"), and a line naming no service
  of the notes fails; so does a line naming a second service that no line prices ("audit +
  automation pilot": the pilot would be given away). Naming another line's service ("workshop
  after the audit") is a reference, not a bundle.
- A line's description names its unit as the notes do: "per day" or "/day" where the notes
  price per site fails, so does "2 days" where 2 is the line's quantity; "20 sites" on a line of
  quantity 2 contradicts it. ("2 sites, 1 day each" states no unit of the price.)
- An amount (or bare price) in a field plays one of three roles, read from the words around it:

  - a *rate* ("£3,500 per day", "£2,400 a site", "£1,200/month", "£2,400 each"): it must be a
    price of the notes (in a line's description, that line's service's price), at the unit the
    notes give when a unit is written;
  - a *total* ("total £4,800", "£4,800 in total", "= £22,500", "£4,800 for 2 sites"): it must
    equal quantity x unit price of the line it totals (in a description) or of the whole offer
    or one of its lines (elsewhere);
  - otherwise a *price*: it must be a price of the notes (in a line's description, that line's
    service's price). A line total written with no word saying it is a total is not derived.

- A percentage or a discount (:mod:`discounts`: "10% off", "10pc", "no charge", "half price",
  "waived"...) that the notes never mention fails; a percentage stating the VAT rate is a tax,
  not a price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal

from agentic_eval.reading.money import Amount, amounts_in, fmt, gbp
from agentic_eval.reading.numbers import Number, numbers_in, percentages_in
from agentic_eval.reading.words import singular, singular_words, word_set
from agentic_eval.workflow.lead_intel.discounts import discounts_in, is_tax_rate
from agentic_eval.workflow.lead_intel.fields import string_fields
from agentic_eval.workflow.lead_intel.outputs import LineItem, OfferDraft
from agentic_eval.workflow.lead_intel.text import mask_name

__all__ = ["NotePrice", "discounts_in", "note_prices", "offer_problems"]

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
_PRICE_WORD_BEFORE = re.compile(
    r"\b(?:prices?|priced|costs?|costing|fees?|charges?|charged|rates?|tariffs?|budget|"
    r"quoted?|sum|amount|(?:sub-?)?total\w*|invoiced?|billed|payable)\b[^.;\n\d]{0,24}$",
    re.IGNORECASE,
)
_TAX_AFTER = re.compile(
    r"\s*(?:\+|plus|ex\.?|exc\.?|excl\.?|excluding|exclusive\s+of|inc\.?|incl\.?|including|"
    r"inclusive\s+of|net\s+of)?\s*(?:VAT|tax|GST)\b",
    re.IGNORECASE,
)
_NEXT_WORD = re.compile(r"[\s-]*([A-Za-z]+)")
_STILL_A_PRICE_AFTER = word_set(
    "per a an each every for in on total overall altogether payable upfront fixed flat only "
    "plus ex exc excl excluding inc incl including net vat to or and is was"
)
"""Words after a bare number that leave it a price ("14,000 for the audit"); any other word
says what it counts ("30 days", "2 sites")."""
_PER_UNIT = re.compile(r"(?:\bper\s+|/\s*)(?P<unit>[A-Za-z]+)", re.IGNORECASE)
_UNIT_SYNONYMS = {"annum": "year", "yr": "year", "hr": "hour", "wk": "week", "mo": "month"}
UNIT_WORDS = word_set(
    "hour day week fortnight month quarter year site location plant factory person head "
    "attendee delegate participant user seat licence license session visit pilot project "
    "engagement"
)
"""Words that name what a price is per (the notes' own units are units too)."""
_DETAIL_AFTER = re.compile(r"\s+(?:each|per|a|an|every)\b", re.IGNORECASE)


@dataclass(frozen=True)
class NotePrice:
    """One service the notes price: its name (singular words, without the qualifier after a
    comma or in brackets: "Automation pilot, fixed scope" is "automation pilot"), price and
    unit."""

    service: str
    amount: Amount
    unit: str | None


def _unit(word: str) -> str:
    unit = singular(word.casefold())
    return _UNIT_SYNONYMS.get(unit, unit)


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
            unit = _unit(rate["unit"]) if rate and rate["unit"] else None
            name = re.split(r"[,(]", m["name"], maxsplit=1)[0]
            found.append(
                NotePrice(singular_words(name) or singular_words(m["name"]), prices[0], unit)
            )
    return found


def _role(text: str, start: int, end: int) -> tuple[str, str | None]:
    """``("rate", unit)``, ``("total", None)`` or ``("price", None)`` (see the module)."""
    rate = _RATE_AFTER.match(text, end)
    if rate is not None:
        return "rate", _unit(rate["unit"]) if rate["unit"] else None
    if _TOTAL_AFTER.match(text, end) or _TOTAL_BEFORE.search(text, 0, start):
        return "total", None
    return "price", None


def _is_year(n: Number) -> bool:
    whole = n.value == n.value.to_integral_value()
    return not n.grouped and not n.scaled and whole and 1800 <= n.value <= 2199


def _money_shaped(text: str, n: Number) -> bool:
    raw = text[n.start : n.end]
    return n.grouped or n.scaled or re.fullmatch(r"\d+\.\d\d", raw) is not None


def bare_prices(text: str) -> list[Number]:
    """The numbers of ``text`` with no currency that stand as prices (see the module)."""
    money = [(a.start, a.end) for a in amounts_in(text, uncertain=True)]
    found: list[Number] = []
    for n in numbers_in(text, uncertain=True):
        if n.percent or n.leading_zero or n.identifier or _is_year(n):
            continue
        if any(a < n.end and n.start < b for a, b in money):
            continue
        taxed = _TAX_AFTER.match(text, n.end) is not None
        after = _NEXT_WORD.match(text, n.end)
        if not taxed and after is not None and after[1].casefold() not in _STILL_A_PRICE_AFTER:
            continue  # it counts something: 30 days, 2 sites
        priced = _PRICE_WORD_BEFORE.search(text, max(0, n.start - 40), n.start) is not None
        if taxed or priced or (not n.uncertain and _money_shaped(text, n)):
            found.append(n)
    return found


@dataclass(frozen=True)
class _Notes:
    amounts: set[tuple[str, Decimal]]
    currencies: set[str]
    percentages: set[Decimal]
    discounts: bool


@dataclass(frozen=True)
class _Field:
    """One string field of the offer and what its amounts are judged against."""

    where: str
    text: str
    priced: list[NotePrice]
    """The notes prices a price here may be (a line's own service's, else every one)."""
    totals: set[Amount]
    line: LineItem | None = None
    line_no: int = 0
    named: tuple[NotePrice, ...] = ()
    """The notes services the line names (in a line's fields)."""


def _amount_problem(f: _Field, a: Amount, notes: _Notes) -> str | None:
    where, text = f.where, f.text
    if a.currency not in notes.currencies:
        return f"{fmt(a)} ({where}) is in {a.currency}; the pricing notes price in " + ", ".join(
            sorted(notes.currencies)
        )
    role, unit = _role(text, a.start, a.end)
    if role == "total":
        if a.key in {t.key for t in f.totals}:
            return None
        want = ", ".join(sorted({fmt(t) for t in f.totals}))
        return f"{fmt(a)} ({where}) is called a total, but the offer's totals are {want}"
    same = [p for p in f.priced if p.amount.key == a.key]
    if not same:
        kind = "rate" if role == "rate" else "price"
        if a.key in notes.amounts:
            services = ", ".join(p.service for p in f.priced)
            return f"{fmt(a)} ({where}, a {kind}) is not the notes' price of {services}"
        return f"{fmt(a)} ({where}, a {kind}) is not in the operator's pricing notes"
    if unit is not None and not any(p.unit in (None, unit) for p in same):
        units = ", ".join(sorted({f"per {p.unit}" for p in same}))
        return f"{fmt(a)} per {unit} ({where}): the pricing notes give {fmt(a)} {units}"
    return None


def _bare_problem(f: _Field, n: Number, notes: _Notes) -> str | None:
    raw = f.text[n.start : n.end]
    if n.uncertain:
        return f"{raw!r} ({f.where}) stands as a price but cannot be read as an amount"
    if len(notes.currencies) != 1:
        return f"{raw} ({f.where}) stands as a price with no currency"
    (currency,) = notes.currencies
    problem = _amount_problem(f, Amount(currency, n.value, n.start, n.end, n), notes)
    return None if problem is None else f"{problem} (written {raw!r}, with no currency)"


def _unit_problems(f: _Field, judged: list[tuple[int, int]]) -> list[str]:
    """What a line's description says of its unit and count, against the notes (see the
    module); ``judged`` are the rates already judged with their amounts."""
    line, text, line_no = f.line, f.text, f.line_no
    units = {p.unit for p in f.named if p.unit}
    if line is None or not units:
        return []
    service = " or ".join(sorted({p.service for p in f.named}))
    per = " or ".join(f"per {u}" for u in sorted(units))
    known = UNIT_WORDS | units
    problems: list[str] = []
    for m in _PER_UNIT.finditer(text):
        unit = _unit(m["unit"])
        if unit in known and unit not in units and not any(a <= m.start() < b for a, b in judged):
            problems.append(f"line {line_no} is priced per {unit}; the notes price {service} {per}")
    for n in numbers_in(text):
        after = _NEXT_WORD.match(text, n.end)
        if after is None or n.percent or _DETAIL_AFTER.match(text, after.end()):
            continue
        unit, said = _unit(after[1]), f"{text[n.start : n.end]} {after[1]}"
        if unit in units and n.value != line.quantity:
            problems.append(f"line {line_no} says {said!r}, but its quantity is {line.quantity}")
        elif unit in known and unit not in units and n.value == line.quantity:
            problems.append(f"line {line_no} counts {said!r}; the notes price {service} {per}")
    return problems


def _named(line: LineItem, prices: list[NotePrice]) -> tuple[NotePrice, ...]:
    """The notes services a line's description names (a name inside a longer one named is the
    longer one's)."""
    described = f" {singular_words(line.description)} "
    named = [p for p in prices if p.service and f" {p.service} " in described]
    return tuple(
        p
        for p in named
        if not any(o.service != p.service and f" {p.service} " in f" {o.service} " for o in named)
    )


def _unpriced_services(offer: OfferDraft, prices: list[NotePrice]) -> list[str]:
    """A line naming a second service of the notes, priced on no line of the offer ("audit +
    automation pilot" at the audit's price): that service is given away."""
    own: list[set[str]] = []
    for line in offer.line_items:
        price = gbp(line.unit_price_gbp).key
        named = _named(line, prices)
        own.append(
            {p.service for p in named if p.amount.key == price} or {p.service for p in named[:1]}
        )
    priced: set[str] = set[str]().union(*own)
    problems: list[str] = []
    for i, line in enumerate(offer.line_items, 1):
        for p in _named(line, prices):
            if p.service not in own[i - 1] and p.service not in priced:
                problems.append(
                    f"line {i} ({line.description!r}) also names {p.service}, which no line "
                    "prices: one service per line"
                )
    return problems


def _line_problem(
    i: int, line: LineItem, prices: list[NotePrice], allowed: set[tuple[str, Decimal]]
) -> str | None:
    price = gbp(line.unit_price_gbp)
    named = _named(line, prices)
    if price.key not in allowed:
        return f"{fmt(price)} (line {i} unit price) is not in the operator's pricing notes"
    if prices and not named:
        return f"line {i} ({line.description!r}) is not a service in the pricing notes"
    if named and price.key not in {p.amount.key for p in named}:
        want = ", ".join(f"{p.service} at {fmt(p.amount)}" for p in named)
        return f"line {i} is priced {fmt(price)}; the notes price {want}"
    return None


def _fields(
    offer: OfferDraft, prices: list[NotePrice], everywhere: list[NotePrice]
) -> list[_Field]:
    line_totals = [
        Amount("GBP", gbp(li.unit_price_gbp).value * li.quantity) for li in offer.line_items
    ]
    grand = Amount("GBP", sum((t.value for t in line_totals), start=Decimal(0)))
    fields: list[_Field] = []
    for path, text in string_fields(offer):
        head, _, field = path.partition(".")
        if head.startswith("line_items[") and field:
            i = int(head[11:-1])
            line = offer.line_items[i]
            named = _named(line, prices)
            totals = {line_totals[i]}
            where = f"line {i + 1} {field}"
            fields.append(
                _Field(where, text, list(named) or everywhere, totals, line, i + 1, named)
            )
        else:
            fields.append(_Field(path, text, everywhere, {grand, *line_totals}))
    return fields


def offer_problems(offer: OfferDraft, notes_text: str, *, client: str = "") -> list[str]:
    """Everything in ``offer`` the pricing notes do not support (see the module).

    Args:
        offer: The offer draft, read as given (the check reads it as plain text first).
        notes_text: The operator's pricing notes, likewise.
        client: The client the job names: its name in any field is a name, never a price or a
            discount ("Free Trade Ltd", "Widgets 4000 Ltd").
    """
    prices = note_prices(notes_text)
    noted = amounts_in(notes_text)
    notes = _Notes(
        amounts={a.key for a in noted},
        currencies={a.currency for a in noted} or {"GBP"},
        percentages=set(percentages_in(notes_text)),
        discounts=bool(discounts_in(notes_text)),
    )
    everywhere = prices or [NotePrice("", a, None) for a in noted]
    problems: list[str] = []
    if not offer.line_items:
        problems.append("the offer prices nothing (no line items)")
    for i, line in enumerate(offer.line_items, 1):
        problem = _line_problem(i, line, prices, notes.amounts)
        if problem is not None:
            problems.append(problem)
    problems += _unpriced_services(offer, prices)
    for f in _fields(offer, prices, everywhere):
        masked = replace(f, text=mask_name(f.text, client)) if client else f
        problems += _field_problems(masked, notes)
    return problems


def _field_problems(f: _Field, notes: _Notes) -> list[str]:
    problems: list[str] = []
    judged: list[tuple[int, int]] = []
    for a in amounts_in(f.text, uncertain=True):
        if a.uncertain:
            raw = f.text[a.start : a.end]
            problems.append(f"{raw!r} ({f.where}) cannot be read as an amount")
            continue
        rate = _RATE_AFTER.match(f.text, a.end)
        judged += [rate.span()] if rate else []
        if (problem := _amount_problem(f, a, notes)) is not None:
            problems.append(problem)
    for n in bare_prices(f.text):
        rate = _RATE_AFTER.match(f.text, n.end)
        judged += [rate.span()] if rate else []
        if (problem := _bare_problem(f, n, notes)) is not None:
            problems.append(problem)
    problems += _unit_problems(f, judged)
    problems.extend(
        f"{n.value.normalize():f}% ({f.where}) is not in the operator's pricing notes"
        for n in numbers_in(f.text)
        if n.percent and n.value not in notes.percentages and not is_tax_rate(f.text, n)
    )
    if not notes.discounts:
        problems.extend(
            f"{f.where} offer a discount ({d!r}) the pricing notes never mention"
            for d in discounts_in(f.text)
        )
    return problems
