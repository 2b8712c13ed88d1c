"""One canonical form per kind of identifier and amount, shared by tools, gates and answer keys.

A gate that compares an IBAN written ``GB29 NWBK 6016 1331 9268 19`` with ``GB29NWBK60161331926819``
as strings judges the spelling, not the account. Every place that stores, compares or expects
such a value goes through the functions here, so there is exactly one spelling of each:

- an IBAN: no whitespace or separators, upper case (:func:`canonical_iban`, :data:`Iban`);
- a record id (``INV-5010``, ``SUP-101``): trimmed, inner whitespace removed, upper case
  (:func:`canonical_id`);
- money: integer minor units with the ISO 4217 currency (:func:`money`), never a float.

The ``Annotated`` types apply the canonical form when a tool's arguments are validated, so a
tool, the approval checkpoint and a gate see the same value whatever the agent typed.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator

from agentic_eval.core.plaintext import plain_text

__all__ = [
    "Iban",
    "canonical_iban",
    "canonical_id",
    "iban_checksum_ok",
    "ibans_in",
    "money",
    "same_iban",
]

_SEPARATORS = re.compile(r"[\s\-./]+")
_IBAN_TEXT = re.compile(
    r"\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?:[ .-][A-Z0-9]{4}){2,7}(?:[ .-][A-Z0-9]{1,4})?)\b"
)


def canonical_iban(value: str) -> str:
    """The one spelling of an IBAN: read as plain text (:func:`.plaintext.plain_text`: no
    zero-width characters, every space and hyphen plain), whitespace, hyphens, dots and slashes
    removed, upper case.

    It does not validate the check digits: an invalid IBAN keeps its (canonical) spelling, so a
    gate can still name it.
    """
    return _SEPARATORS.sub("", plain_text(value)).upper()


def iban_checksum_ok(iban: str) -> bool:
    """Whether a canonical IBAN's mod-97 check digits hold."""
    if len(iban) < 15 or not iban.isalnum():
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def ibans_in(text: str) -> list[str]:
    """Every IBAN written in ``text`` (compact, or in groups of four separated by spaces,
    hyphens or dots, in any case and any Unicode spelling :func:`canonical_iban` accepts),
    canonical, in order.

    A grouped match that runs on into a following word is cut back to the longest prefix whose
    check digits hold.
    """
    found: list[str] = []
    for m in _IBAN_TEXT.finditer(plain_text(text).upper()):
        groups = re.split(r"[ .-]", m.group(0))
        whole = canonical_iban(m.group(0))
        prefixes = (canonical_iban("".join(groups[:end])) for end in range(len(groups), 2, -1))
        found.append(next((p for p in prefixes if iban_checksum_ok(p)), whole))
    return found


def same_iban(a: str | None, b: str | None) -> bool:
    """Whether two IBANs name the same account (None equals only None)."""
    if a is None or b is None:
        return a is b
    return canonical_iban(a) == canonical_iban(b)


def canonical_id(value: str) -> str:
    """The one spelling of a record id: read as plain text (no zero-width characters, every
    hyphen ``-``), trimmed, inner whitespace removed, upper case."""
    return "".join(plain_text(value).split()).upper()


def money(minor_units: int, currency: str) -> dict[str, Any]:
    """An amount as state records and expectations hold it: integer minor units (cents) and the
    upper-case ISO 4217 currency, as a JSON object.

    Raises:
        TypeError: When ``minor_units`` is not an integer (a float amount is never exact).
    """
    if isinstance(minor_units, bool) or not isinstance(minor_units, int):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"money needs integer minor units, got {type(minor_units).__name__}")
    return {"currency": currency.strip().upper(), "minor_units": minor_units}


Iban = Annotated[str, AfterValidator(canonical_iban)]
"""A tool argument holding an IBAN: validated into its canonical spelling."""
