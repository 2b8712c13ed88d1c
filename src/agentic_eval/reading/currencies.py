"""What marks a number as money: currency codes, signs and names, known or not.

An amount in a currency the reader has no special name for is still money, and never the
notes' pounds: ``CHF 14,000``, ``₤3,200,000``, ``A$14,000`` and ``14,000 francs`` are amounts
(in ``CHF``, ``₤``, ``A$``, ``CHF``). Codes are the ISO 4217 ones, written in capitals, minus
those that are English words or common acronyms next to a number (``ALL 3 SITES``, ``TOP 10``,
``PEN 2``, ``CVE 2024``, ``SVC 4``): reading ``SIC 25990`` or ``VAT 20`` as money would be
worse than missing a lek.
"""

from __future__ import annotations

import re
import unicodedata

_ISO_4217 = """
AED AFN AOA ARS AUD AWG AZN BBD BDT BGN BHD BIF BMD BND BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP
CNH CNY COP CRC CZK DJF DKK DZD EGP ERN ETB EUR FJD FKP GBP GHS GIP GMD GNF GTQ GYD HKD HNL HTG
HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LBP LKR LRD LSL LYD
MDL MGA MKD MMK MNT MRU MUR MVR MWK MXN MYR MZN NGN NIO NOK NPR NZD OMR PAB PGK PKR PLN PYG QAR
RMB RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SRD SSP SYP SZL THB TJS TMT TND TTD TWD TZS
UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL
"""
CODES: frozenset[str] = frozenset(_ISO_4217.split())
"""Currency codes read in capitals (ISO 4217, plus RMB; words such as ALL, TOP, PEN left out)."""

_SIGN_CHARS = "".join(ch for ch in map(chr, range(0x10000)) if unicodedata.category(ch) == "Sc")
SIGN = f"[{re.escape(_SIGN_CHARS)}]"
"""A regular-expression class of every currency sign (Unicode category Sc: £ $ € ¥ ₹ ₤ ...)."""
CODE = "|".join(sorted(CODES))
"""The codes as a regular-expression alternation (match them case-sensitively)."""
NAMES = (
    r"pounds?(?:\s+sterling)?|sterling|quid|dollars?|euros?|francs?|yen|yuan|renminbi|"
    r"rupees?|roubles?|rubles?|kronor|kroner|krona|krone|zlotys?|pesos?|dirhams?|riyals?|"
    r"baht|ringgit|lira|lire|rand"
)
"""Currency names written after a number (``14,000 pounds``, ``14,000 francs``)."""
ADJECTIVE = r"(?:U\.?S\.?|New\s+Zealand|Hong\s+Kong|[A-Z][a-z]+)"
"""A word naming whose currency a name is, before it: ``Swiss francs``, ``US dollars``."""
_BY_ADJECTIVE = {
    "us": "USD",
    "american": "USD",
    "australian": "AUD",
    "canadian": "CAD",
    "new zealand": "NZD",
    "hong kong": "HKD",
    "singapore": "SGD",
    "swiss": "CHF",
    "british": "GBP",
    "mexican": "MXN",
    "japanese": "JPY",
    "chinese": "CNY",
    "indian": "INR",
    "swedish": "SEK",
    "norwegian": "NOK",
    "danish": "DKK",
}

_BY_NAME = {
    "£": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "sterling": "GBP",
    "quid": "GBP",
    "$": "USD",
    "us$": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "€": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "¥": "JPY",
    "yen": "JPY",
    "yuan": "CNY",
    "renminbi": "CNY",
    "franc": "CHF",
    "francs": "CHF",
    "₹": "INR",
    "rupee": "INR",
    "rupees": "INR",
    "₽": "RUB",
    "rouble": "RUB",
    "roubles": "RUB",
    "ruble": "RUB",
    "rubles": "RUB",
    "kronor": "SEK",
    "krona": "SEK",
    "kroner": "NOK",
    "krone": "NOK",
    "zloty": "PLN",
    "zlotys": "PLN",
    "peso": "MXN",
    "pesos": "MXN",
    "dirham": "AED",
    "dirhams": "AED",
    "riyal": "SAR",
    "riyals": "SAR",
    "baht": "THB",
    "ringgit": "MYR",
    "lira": "TRY",
    "lire": "TRY",
    "rand": "ZAR",
    "₩": "KRW",
    "₺": "TRY",
    "₪": "ILS",
    "₦": "NGN",
    "₫": "VND",
    "₴": "UAH",
}


def currency_of(marker: str) -> str:
    """The currency a marker names: an ISO code for a code or a known sign or name (the most
    common currency of that name: ``francs`` is CHF), else the marker itself (``₤``, ``A$``)."""
    word = marker.split()[0]
    if word.upper() in CODES:
        return word.upper()
    return _BY_NAME.get(word.casefold(), word)


def named_currency(adjective: str, name: str) -> str:
    """The currency of ``name`` said to be ``adjective``'s (``Swiss francs`` is CHF, ``Canadian
    dollars`` CAD; an adjective no reader knows makes its own currency, never the plain name's)."""
    key = " ".join(adjective.replace(".", "").casefold().split())
    if key in _BY_ADJECTIVE:
        return _BY_ADJECTIVE[key]
    return f"{adjective} {name}"


def is_code(letters: str) -> bool:
    """Whether ``letters`` (glued before a number: ``GBP14,000``) is a currency code."""
    return letters.upper() in {"GBP", "USD", "EUR"} or letters in CODES
