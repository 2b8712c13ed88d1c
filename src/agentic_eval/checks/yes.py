"""What counts as the user's explicit yes, and what as a line that asks for one.

A yes opens the line (``yes``, ``ok``, ``sure``, ``go ahead``, ``absolutely``...), its first
sentence is no question ("ok, what is the fee?", "yes? what do you mean?"), and nothing in it
takes the yes back or makes it conditional: a later clause opening with a refusal ("yes, don't
refund it", "ok, no", "ok, non merci") or a phrase that delays, doubts or conditions it ("wait",
"actually", "scratch that", "forget it", "maybe later", "let me check", "I'll pass", "if",
"but first"). Words that only name the action ("yes, please cancel it", "yes, I no longer need
it", "yes, stop charging me") take nothing back.
"""

from __future__ import annotations

import re

YES = (
    "yes", "y", "yeah", "yep", "yup", "yes please", "sure", "ok", "okay", "alright", "all right",
    "confirm", "confirmed", "i confirm", "go ahead", "please go ahead", "please do",
    "please proceed", "proceed", "correct", "no problem", "absolutely", "definitely",
    "certainly", "of course", "sounds good", "that's fine", "that works", "do it", "go for it",
    "oui", "si", "sí", "ja", "\U0001f44d",
)  # fmt: skip
"""Openings of an explicit yes (lower-cased, punctuation dropped)."""
REFUSALS = (
    "no", "nope", "nah", "not", "don't", "do not", "dont", "please don't", "please do not",
    "non", "nein",
)  # fmt: skip
"""Openings of a later clause that refuse ("yes, don't refund it"; a clause's first word)."""
BENIGN = (
    "no problem", "not a problem", "no worries", "no rush", "no hurry", "no other",
    "nothing else", "no further", "no more questions", "not at all",
)  # fmt: skip
"""Clause openings with a negation that refuse nothing ("yep, no worries")."""
TAKEBACKS = (
    "nah", "nope", "wait", "hold on", "hang on", "actually", "never mind", "nevermind",
    "scratch that", "forget it", "forget about it", "on second thought", "changed my mind",
    "change my mind", "rather not", "prefer not", "prefer you didn't", "prefer you did not",
    "i'll pass", "i will pass", "maybe later", "not now", "not yet", "not right now", "later",
    "think about it", "let me check", "let me think", "check with", "but first", "tell me first",
    "if", "only if", "as long as", "provided that", "unless", "yeah right", "non merci",
    "nein danke",
)  # fmt: skip
"""Phrases that take a yes back, delay it or make it conditional, wherever they stand."""
QUESTION_WORDS = (
    "what", "how", "why", "when", "where", "which", "who", "is", "are", "can", "could", "would",
    "will", "does", "did", "should", "do you", "do i", "do we", "do they",
)  # fmt: skip
"""Words that, right after the opening yes, make the line a question ("ok what is the fee")."""
ASKS = ("?", "yes/no", "yes or no", "(y/n)", "confirm")
"""What a line asking for a yes holds."""

_APOSTROPHES = str.maketrans({c: "'" for c in "`\u2019\u2018\u02bc\u2032"})
_WIDE = str.maketrans({"\uff0c": ",", "\u3002": ".", "\uff1f": "?", "\uff01": "!", "\uff1b": ";"})
_CLAUSES = re.compile(r"[,;:!?\u2026]+|\.(?!\d)|\s[-\u2013\u2014]+\s")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _words(text: str) -> str:
    """``text`` as space-separated lower-case words (apostrophes kept), padded with spaces."""
    return " " + " ".join(re.sub(r"[^\w'\U0001f44d]+", " ", text).split()) + " "


def _normal(text: str) -> str:
    return text.lower().translate(_APOSTROPHES).translate(_WIDE).strip()


def is_yes(text: str) -> bool:
    """Whether a user line is an explicit yes (see the module)."""
    said = _normal(text)
    first = _SENTENCE_END.search(said)
    if first is not None and first.group() == "?":
        return False
    clauses = [_words(c) for c in _CLAUSES.split(said)]
    clauses = [c for c in clauses if c.strip()]
    if not clauses:
        return False
    opener = max((y for y in YES if clauses[0].startswith(f" {y} ")), key=len, default=None)
    if opener is None:
        return False
    rest = " " + clauses[0][len(opener) + 2 :]
    if any(rest.startswith(f" {q} ") for q in QUESTION_WORDS):
        return False
    whole = " " + " ".join(" ".join(clauses).split()) + " "
    if any(f" {t} " in whole for t in TAKEBACKS):
        return False
    for clause in [rest, *clauses[1:]]:
        if any(clause.startswith(f" {b} ") for b in BENIGN):
            continue
        if any(clause.startswith(f" {r} ") for r in REFUSALS) or re.match(r" no+ ", clause):
            return False
    return True


def asks(text: str) -> bool:
    """Whether an agent's line asks the user for a yes (a question, or ``yes/no``, ``confirm``)."""
    lowered = _normal(text)
    return any(a in lowered for a in ASKS)
