"""Company and fact names as words, for the lead-intelligence checks (the generic readings are
in :mod:`agentic_eval.reading.words`)."""

from __future__ import annotations

from agentic_eval.reading.words import words

__all__ = ["mentions_company", "name_words"]


def name_words(text: str) -> str:
    """A company or fact name as words, ``limited`` read as ``ltd``."""
    return " ".join("ltd" if w == "limited" else w for w in words(text))


def mentions_company(text: str, company: str) -> bool:
    """Whether ``text`` names ``company`` (case, punctuation and Ltd/Limited aside)."""
    wanted = name_words(company)
    return not wanted or f" {wanted} " in f" {name_words(text)} "
