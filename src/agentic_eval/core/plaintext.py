"""Text reduced to what a reader sees, so that a gate matching words or ids cannot be dodged by
how they are encoded.

An agent (or an attacker writing a record) can spell the same words in many code points:
zero-width spaces or soft hyphens inside a word, a non-breaking hyphen in an id, full-width
digits, accented or Cyrillic look-alike letters. :func:`plain_text` maps all of those to one
plain form before a gate compares text: compatibility forms folded (NFKC), invisible format
characters removed, every dash and hyphen made ``-``, every space made `` ``, diacritics dropped,
and the common Cyrillic and Greek look-alikes of Latin letters replaced by them. It never adds or
reorders words, so what it finds can be quoted back.
"""

from __future__ import annotations

import unicodedata

__all__ = ["plain_text"]

_DASHES = dict.fromkeys(
    map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"), "-"
)
_LOOKALIKES = str.maketrans(
    "\u0430\u0432\u0435\u0456\u0458\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u0455"
    "\u0410\u0412\u0415\u0406\u0408\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0405"
    "\u03b1\u03bf\u03c1\u03c5\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1"
    "\u03a4\u03a5\u03a7",
    "abeijkmhopctyxsABEIJKMHOPCTYXSaopuABEZHIKMNOPTYX",
)


def plain_text(text: str) -> str:
    """``text`` as a reader sees it (see the module docstring); idempotent."""
    if text.isascii():
        # ASCII is its own plain form (NFKC, NFKD and NFC leave it alone; it has no format
        # character, combining mark, special dash or look-alike; its one space is " "): most
        # text a gate reads is ASCII, and this returns it without a pass per character
        return text
    return _unicode_plain(text)


def _unicode_plain(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).translate(_DASHES)
    kept: list[str] = []
    for ch in unicodedata.normalize("NFKD", folded):
        category = unicodedata.category(ch)
        if category == "Cf" or category == "Mn":
            continue  # invisible format characters; combining marks (diacritics)
        kept.append(" " if category == "Zs" else ch)
    return unicodedata.normalize("NFC", "".join(kept)).translate(_LOOKALIKES)
