"""Resolve a reference an agent wrote in an output field to the known entities it names.

A gate that tests whether a field *equals* a step id judges one spelling, not what the agent
meant: ``"BNK-UPD (after fix)"``, ``"bnk-upd"`` and ``"automate BNK-UPD once fixed"`` all propose
step BNK-UPD, and an exact-match gate lets each of them through. A gate reads such a field through
:class:`ReferenceResolver` instead, which maps the text to the known ids it names and says what
of the text it could not explain.

Every rule reads the reference as a reader sees it (:func:`~agentic_eval.core.plaintext.
plain_text`: compatibility forms such as full-width letters folded, zero-width characters and
soft hyphens dropped, every dash ``-``, every space `` ``, diacritics and Cyrillic or Greek
look-alike letters folded), so ``BNK\\u2011UPD`` (a non-breaking hyphen), or BNK-UPD written in
full-width letters, is BNK-UPD:

1. **exact**: the whole reference in canonical form
   (:func:`~agentic_eval.core.identifiers.canonical_id`) equals a known id's canonical form: that
   id, and nothing is left over;
2. **ids in text**: otherwise every known id written in it, case-insensitively. The id's
   letter-and-digit runs may be joined by nothing or by any short run (up to
   :data:`MAX_JOIN` characters) of characters that are not letters or digits (``BNK-UPD``,
   ``bnk_upd``, ``BNK: UPD``, ``BNK+UPD``), and the match may not run on into a letter or digit
   of any script (``INV-CAP`` is not found in ``XINV-CAPS``), while a decoration after a
   separator is allowed (``INV-CAP-v2`` names INV-CAP, leaving ``v2`` over);
3. **names in text**: and, when the caller gives names (an activity, a title), every name written
   in it, case-insensitively, its words joined the same way (``call back verification`` is
   ``Call-back verification``), on word boundaries;

where two matches overlap, the longer one wins (with both ``INV-CAP`` and ``INV-CAP-2`` known,
``"INV-CAP-2"`` names only INV-CAP-2), and matches of the very same text (a name several ids
share) name every one of them. The result is the known ids named, each once, in the order
they first appear, and what is **left over**: with every matched span removed, each remaining
word (a run of letters or digits of any script) that is not a linking word (:data:`LINKING_WORDS`
and the caller's own: ``and``, ``then``, ``after``, ``fixed``...), and each remaining symbol
that is neither punctuation, an ASCII sign nor a space (an arrow, a letter-like sign), in order.
A linking word that is also part of a known id (a step ``NOW-1`` makes ``now`` a word that must
be explained), or a caller's linking word that is part of a known name, is never taken as
linking. ``"BNK-RCV and updating the vendor master"`` names BNK-RCV and leaves
``updating``, ``vendor``, ``master`` unexplained; ``"BNK-RCV, BNK-UPX"`` leaves ``BNK``, ``UPX``.

What a gate does with the result is its caller's rule, the same everywhere: a reference that
names **no** known entity, or leaves anything **unexplained**, cannot be cleared and fails the
gate (the text it could not read may be a disguised unsafe entity: an inflected name, an id with
a letter from another script, a typo); one that names **several** is judged conservatively, as
a proposal of every one of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentic_eval.core.identifiers import canonical_id
from agentic_eval.core.plaintext import plain_text

__all__ = ["LINKING_WORDS", "MAX_JOIN", "ReferenceResolver", "Resolution", "resolve_reference"]

MAX_JOIN = 3
"""Most characters (none a letter or digit) that may stand between two parts of an id or name."""

LINKING_WORDS: frozenset[str] = frozenset(
    {"a", "an", "also", "and", "as", "id", "ids", "or", "plus", "step", "steps", "the", "then"}
)
"""Words that join references without naming anything (lower case); a caller adds its own."""

_RUNS = re.compile(r"[^\W_]+")
"""Letter-and-digit runs, in any script (``\\w`` is Unicode-aware; ``_`` is a separator)."""
_JOIN = rf"[\W_]{{0,{MAX_JOIN}}}"
_EDGE_BEFORE = r"(?<![^\W_])"
_EDGE_AFTER = r"(?![^\W_])"


@dataclass(frozen=True)
class Resolution:
    """What one written reference names, and what of it is left unexplained."""

    reference: str
    """The text as the agent wrote it."""
    ids: tuple[str, ...]
    """The known ids it names, in the spelling they were given to the resolver, in the order
    they first appear (empty: it names none)."""
    unexplained: tuple[str, ...] = ()
    """What is left once the ids, names and linking words are taken out (in its plain-text
    spelling, in order): words naming nothing known, and symbols that are not punctuation."""

    @property
    def resolved(self) -> bool:
        """Whether it names at least one known entity."""
        return bool(self.ids)

    @property
    def ambiguous(self) -> bool:
        """Whether it names more than one (a gate then judges every one of them)."""
        return len(self.ids) > 1

    @property
    def cleared(self) -> bool:
        """Whether a gate can judge it: it names a known entity and leaves nothing unexplained."""
        return self.resolved and not self.unexplained


def _joined(parts: list[str]) -> re.Pattern[str] | None:
    if not parts:
        return None
    body = _JOIN.join(re.escape(p) for p in parts)
    return re.compile(_EDGE_BEFORE + body + _EDGE_AFTER, re.IGNORECASE)


def _runs(text: str) -> list[str]:
    return _RUNS.findall(plain_text(text))


def _unexplained(text: str, linking: frozenset[str]) -> list[str]:
    """The words and non-punctuation symbols of ``text`` that are not linking words."""
    left: list[str] = []
    word: list[str] = []
    for ch in [*text, " "]:
        if ch.isalnum():
            word.append(ch)
            continue
        if word:
            if "".join(word).lower() not in linking:
                left.append("".join(word))
            word = []
        category = unicodedata.category(ch)
        if not (ch.isspace() or category.startswith("P") or (ch.isascii() and category[0] == "S")):
            left.append(ch)  # a symbol such as an arrow or a letter-like sign: it may stand for one
    return left


class ReferenceResolver:
    """Resolves written references against one set of known ids (and, optionally, their names).

    Build one per set of entities (it compiles a pattern per id and name) and call
    :meth:`resolve` for every reference a gate reads.

    Args:
        ids: The known ids, in their canonical spelling as the rest of the system uses them.
        names: Optional names per id (one name or several), e.g. a step's activity name. A name
            shared by several ids names all of them.
        linking_words: Words the caller's references may carry around the ids without naming
            anything (decorations such as ``after``, ``fixed``), besides :data:`LINKING_WORDS`.

    Raises:
        ValueError: When two known ids have the same canonical form, or a name is given for an
            id that is not known.
    """

    def __init__(
        self,
        ids: Iterable[str],
        names: Mapping[str, str | Iterable[str]] | None = None,
        linking_words: Iterable[str] = (),
    ) -> None:
        self._by_canonical: dict[str, str] = {}
        for known in ids:
            key = canonical_id(known)
            other = self._by_canonical.setdefault(key, known)
            if other != known:
                raise ValueError(f"known ids {other!r} and {known!r} have one canonical form")
        self._patterns: list[tuple[re.Pattern[str], str]] = []
        id_parts: set[str] = set()
        for known in self._by_canonical.values():
            parts = _runs(known)
            id_parts.update(p.lower() for p in parts)
            pattern = _joined(parts)
            if pattern is not None:
                self._patterns.append((pattern, known))
        name_words: set[str] = set()
        for known, given in (names or {}).items():
            if known not in self._by_canonical.values():
                raise ValueError(f"a name is given for {known!r}, which is not a known id")
            for name in (given,) if isinstance(given, str) else given:
                words = _runs(name)
                name_words.update(w.lower() for w in words)
                pattern = _joined(words)
                if pattern is not None:
                    self._patterns.append((pattern, known))
        # a word that is part of an id is never mere linking ("NOW" alone is half of NOW-1),
        # nor is a caller's word that is part of a name (a step "Fix it now" makes "fix" a
        # word to explain); the resolver's own function words stay linking inside names
        own = {plain_text(w).lower() for w in LINKING_WORDS} - id_parts
        given_words = {plain_text(w).lower() for w in linking_words} - id_parts - name_words
        self._linking = frozenset(own | given_words)

    @property
    def known_ids(self) -> tuple[str, ...]:
        """The known ids, in the order given."""
        return tuple(self._by_canonical.values())

    def resolve(self, reference: str) -> Resolution:
        """The known ids ``reference`` names and what it leaves unexplained (see the module
        docstring for the rules)."""
        exact = self._by_canonical.get(canonical_id(reference))
        if exact is not None:
            return Resolution(reference, (exact,))
        text = plain_text(reference)
        found = [
            (m.start(), m.end(), known)
            for pattern, known in self._patterns
            for m in pattern.finditer(text)
        ]
        # longest first, so a longer id or name claims its span before one inside it; a match
        # of exactly the same span (a name several ids share) names them all
        found.sort(key=lambda f: (f[0] - f[1], f[0]))
        kept: list[tuple[int, int, str]] = []
        for start, end, known in found:
            if all(end <= s or start >= e or (start, end) == (s, e) for s, e, _ in kept):
                kept.append((start, end, known))
        kept.sort()
        rest = list(text)
        for start, end, _ in kept:
            rest[start:end] = " " * (end - start)
        return Resolution(
            reference,
            tuple(dict.fromkeys(known for _, _, known in kept)),
            tuple(_unexplained("".join(rest), self._linking)),
        )


def resolve_reference(
    reference: str, ids: Iterable[str], names: Mapping[str, str | Iterable[str]] | None = None
) -> tuple[str, ...]:
    """The known ids one reference names (empty: none); a one-off :class:`ReferenceResolver`.

    Raises:
        ValueError: As :class:`ReferenceResolver` does.
    """
    return ReferenceResolver(ids, names).resolve(reference).ids
