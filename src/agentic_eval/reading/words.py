"""Plain-text readings gates share: normalised text, words, sentences and singular word forms.

A *sentence* is the unit a fact's words and its value must share ("next to the fact's own
words"). Registry filings put one fact per line with no full stop, while crawled pages wrap one
sentence over several lines, so a line break ends a sentence only when the next line starts like
a new one (a capital letter or a bullet), or after a blank line.
"""

from __future__ import annotations

import re

_WORDS = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n[ \t]*\n|\n(?=[ \t]*[A-Z\-*•])")


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, case folded."""
    return " ".join(text.split()).casefold()


def words(text: str) -> list[str]:
    """The case-folded words and numbers of ``text``, punctuation dropped."""
    return _WORDS.findall(text.casefold())


def sentences(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` span of every sentence of ``text``, in order (see the module)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if text[start : m.start()].strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set (how the lexicons are written)."""
    return frozenset(text.split())


def singular(word: str) -> str:
    """The singular of a plural service or unit word (``audits`` -> ``audit``, ``days`` ->
    ``day``, ``process`` unchanged): enough English for names in pricing notes."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def singular_words(text: str) -> str:
    """``text`` as singular words, space-separated (how service names are compared)."""
    return " ".join(singular(w) for w in words(text))
