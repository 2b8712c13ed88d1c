"""Company and fact names as words, for the lead-intelligence checks (the generic readings are
in :mod:`agentic_eval.reading.words`)."""

from __future__ import annotations

import re

from agentic_eval.reading.words import words

__all__ = ["mask_name", "mentions_company", "name_words"]


def name_words(text: str) -> str:
    """A company or fact name as words, ``limited`` read as ``ltd``."""
    return " ".join("ltd" if w == "limited" else w for w in words(text))


def mentions_company(text: str, company: str) -> bool:
    """Whether ``text`` names ``company`` (case, punctuation and Ltd/Limited aside)."""
    wanted = name_words(company)
    return not wanted or f" {wanted} " in f" {name_words(text)} "


def mask_name(text: str, name: str) -> str:
    """``text`` with every writing of ``name`` (case, punctuation and Ltd/Limited aside) blanked
    out, offsets kept: a name is no statement, so "Sales 4000 Ltd" or "Free Trade Ltd" as the
    job's own company or client says nothing about revenue or discounts."""
    parts = [
        r"(?:ltd|limited)\.?" if w == "ltd" else re.escape(w) for w in name_words(name).split()
    ]
    if not parts:
        return text
    pattern = re.compile(r"(?<![a-z0-9])" + r"[\W_]+".join(parts) + r"(?![a-z0-9])", re.I)
    return pattern.sub(lambda m: " " * len(m[0]), text)
