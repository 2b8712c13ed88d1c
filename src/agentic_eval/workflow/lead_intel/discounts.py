"""Discounts and percentages in an offer's words, as the price check reads them.

- A discount in any words: "discount", "rebate", "money off", "10% off", "£500 off", "10pc
  off", "free of charge", "free", "no charge", "no extra fee for...", "at no extra cost",
  "waived", "complimentary", "half price", "on the house", "two for one"... A negated one ("no
  discount applies", "Discounts: none") offers none, and "no additional charges apply" (the
  price is complete) gives nothing away.
- "Free" in a compound is no discount ("hassle-free cancellation", "risk free", "free-form",
  "feel free to call", "free from defects"), unless the compound frees a price ("fee-free",
  "cost-free").
- "Reduction", "reduced" and "promotional" are a discount only beside a price word, a
  percentage or an amount ("a 5% reduction", "reduced fee"; never "scrap reduction").
- A percentage stating the VAT (or sales tax, GST) rate, the tax word right beside it, is a
  tax, not a price ("prices exclude VAT (currently 20%)", "20% VAT"), unless its clause also
  takes something off.
"""

from __future__ import annotations

import re

from agentic_eval.reading.money import amounts_in
from agentic_eval.reading.numbers import Number
from agentic_eval.reading.words import word_set

_DISCOUNT = re.compile(
    r"\b(?:discount\w*|rebate\w*|money\s+off|cash\s*back|free[\s-]+of[\s-]+(?:charge|cost)|"
    r"for\s+free|(?:at|with)\s+no\s+(?:extra\s+|additional\s+)?(?:cost|charge|fee)s?|"
    r"no[\s-]+(?:charge|fee|cost)|without\s+(?:extra\s+)?charge|"
    r"no\s+(?:(?:extra|additional|further)\s+)?(?:charge|fee|cost)s?(?=\s+(?:for|on)\b)|"
    r"complimentary|gratis|waive\w*|promotional|reductions?|reduced|"
    r"(?:introductory|special)\s+(?:offer|price|rate)|off\s+the\s+(?:list\s+)?price|"
    r"half[\s-]+(?:price|off)|half\s+(?:the\s+)?(?:price|fee|rate|cost)|on\s+the\s+house|"
    r"(?:two|2)[\s-]+for[\s-]+(?:one|1)|buy\s+one,?\s+get\s+one|bogof|"
    r"(?:fee|cost|charge|price|commission)[\s-]free|free)\b|"
    r"(?:(?<![\w.,])\d[\d,.]*\s*(?:%|pc\b|pct\b|percent\b|per[\s-]cent\b|k\b)?|%)\s*off\b",
    re.IGNORECASE,
)
_NEEDS_A_PRICE = word_set("reduction reductions reduced promotional")
"""Discount words that are a discount only beside a price, a percentage or an amount."""
_PRICE_NEAR = re.compile(
    r"\b(?:prices?|pricing|fees?|rates?|costs?|charges?|tariffs?|bills?|invoices?)\b|%|"
    r"\b(?:per[\s-]?cent|percent|pc|pct)\b",
    re.IGNORECASE,
)
_FREE_COMPOUND_BEFORE = word_set(
    "hassle risk stress worry error trouble care fault defect scrap carbon paper toll hands "
    "duty tax lead sugar gluten smoke jargon"
)
_WORD_BEFORE = re.compile(r"([A-Za-z]+)([\s-]+)$")
_NOT_A_FREEBIE_AFTER = re.compile(r"\s+(?:to|of|from)\b", re.IGNORECASE)
_NEGATED_BEFORE = re.compile(r"\b(?:no|not|without|never|nor)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_NEGATED_AFTER = re.compile(
    r"^[^.;\n]{0,24}?(?:\b(?:not|none|nil)\b|n/a\b|n['\u2019]t\b)", re.IGNORECASE
)
_CLAUSE_END = re.compile(r"[.;\n]")
_TAX = r"\b(?:VAT|value[\s-]added\s+tax|sales\s+tax|GST)\b"
_TAX_THEN_RATE = re.compile(
    rf"{_TAX}[\s(:@=,-]*(?:(?:at|of|is|currently|rate|the|standard|charged|applied|applies|"
    r"added|applicable)[\s(:@=,-]+){0,6}$",
    re.IGNORECASE,
)
_RATE_THEN_TAX = re.compile(rf"[\s)]*(?:(?:rate\s+)?of\s+)?{_TAX}", re.IGNORECASE)
_TAKES_OFF = re.compile(r"\b(?:off|discount\w*|reduc\w*|rebate\w*|less|saving\w*)\b", re.I)


def clause(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause (between full stops, semicolons and line breaks) around ``start:end``."""
    before = [m.end() for m in _CLAUSE_END.finditer(text, 0, start)]
    after = _CLAUSE_END.search(text, end)
    return (before[-1] if before else 0), (after.start() if after else len(text))


def _free_is_no_discount(text: str, start: int) -> bool:
    """ "free" after a compound's first word ("hassle-free", "risk free") or before "to",
    "of", "from" ("feel free to", "free from defects")."""
    if _NOT_A_FREEBIE_AFTER.match(text, start + 4) or text[start + 4 : start + 5] == "-":
        return True
    joined = _WORD_BEFORE.search(text, max(0, start - 30), start)
    if joined is None:
        return False
    word, glue = joined[1].casefold(), joined[2]
    return word == "feel" or word in _FREE_COMPOUND_BEFORE or "-" in glue


def discounts_in(text: str) -> list[str]:
    """Every discount ``text`` offers (in any words), not counting negated ones (see the
    module)."""
    found: list[str] = []
    for m in _DISCOUNT.finditer(text):
        word = m[0].casefold()
        if word == "free" and _free_is_no_discount(text, m.start()):
            continue
        if word in _NEEDS_A_PRICE:
            lo, hi = clause(text, m.start(), m.end())
            if not (_PRICE_NEAR.search(text, lo, hi) or amounts_in(text[lo:hi])):
                continue
        if _NEGATED_BEFORE.search(text, 0, m.start()) or _NEGATED_AFTER.match(text[m.end() :]):
            continue
        found.append(m[0])
    return found


def is_tax_rate(text: str, n: Number) -> bool:
    """Whether the percentage ``n`` states a VAT or sales-tax rate, the tax word right beside
    it ("VAT (currently 20%)", "VAT at 20%", "20% VAT"; not "15% surcharge, prices exclude
    VAT"), with nothing taken off in its clause."""
    lo, hi = clause(text, n.start, n.end)
    beside = _TAX_THEN_RATE.search(text, max(lo, n.start - 60), n.start) or _RATE_THEN_TAX.match(
        text, n.end, hi
    )
    return beside is not None and not _TAKES_OFF.search(text, lo, hi)
