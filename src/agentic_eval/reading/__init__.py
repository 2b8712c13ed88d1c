"""Reading numbers, amounts of money, dates and words out of free text, the same way for every
gate: ``£2,400``, ``GBP 2.4k`` and ``two thousand four hundred pounds`` are one amount, the
``04`` of ``2002-04-12`` is a month and no number, and an amount always carries its currency.

Gates of any layer read through these (lead-intelligence grounding and pricing, retail_ops's
confidential-amount check), so they depend on nothing but the standard library.
"""

from agentic_eval.reading.dates import DateText, dates_in
from agentic_eval.reading.money import Amount, amounts_among, amounts_in, fmt
from agentic_eval.reading.numbers import Number, numbers_in, percentages_in
from agentic_eval.reading.words import normalise, sentences, singular, words

__all__ = [
    "Amount",
    "DateText",
    "Number",
    "amounts_among",
    "amounts_in",
    "dates_in",
    "fmt",
    "normalise",
    "numbers_in",
    "percentages_in",
    "sentences",
    "singular",
    "words",
]
