"""Resolve a reference an agent wrote in an output field to the known entities it names.

A gate that tests whether a field *equals* a step id judges one spelling, not what the agent
meant: ``"BNK-UPD (after fix)"``, ``"bnk-upd"`` and ``"automate BNK-UPD once fixed"`` all propose
step BNK-UPD, and an exact-match gate lets each of them through. A gate reads such a field through
:class:`ReferenceResolver` instead, which maps the text to the known ids it names:

1. **exact**: the whole reference in canonical form
   (:func:`~agentic_eval.core.identifiers.canonical_id`: trimmed, inner whitespace removed,
   upper case) equals a known id's canonical form: that id;
2. **ids in text**: otherwise every known id written in it as a token, case-insensitively. The
   id's letter-and-digit runs may be joined by nothing or by any run of spaces, hyphens,
   underscores, dots or slashes (``BNK-UPD``, ``bnk_upd``, ``BNK UPD``), and the match may not
   run on into a letter or digit (``INV-CAP`` is not found in ``XINV-CAPS``), while a decoration
   after a separator is allowed (``INV-CAP-v2`` names INV-CAP);
3. **names in text**: and, when the caller gives names (an activity, a title), every name written
   in it as a phrase, case- and whitespace-insensitively, on word boundaries;

where two matches overlap, the longer one wins (with both ``INV-CAP`` and ``INV-CAP-2`` known,
``"INV-CAP-2"`` names only INV-CAP-2), and matches of the very same text (a name several ids
share) name every one of them. The result is the known ids named, each once, in the order
they first appear.

What a gate does with the result is its caller's rule, the same everywhere: a reference that
names **no** known entity is a failure of the gate (it cannot be judged, so it cannot be cleared),
and one that names **several** is judged conservatively, as a proposal of every one of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentic_eval.core.identifiers import canonical_id

__all__ = ["ReferenceResolver", "Resolution", "resolve_reference"]

_RUNS = re.compile(r"[A-Za-z0-9]+")
_JOIN = r"[\s\-_./]*"
"""What may stand between an id's letter-and-digit runs in a written reference."""
_EDGE_BEFORE = r"(?<![A-Za-z0-9])"
_EDGE_AFTER = r"(?![A-Za-z0-9])"


@dataclass(frozen=True)
class Resolution:
    """What one written reference names."""

    reference: str
    """The text as the agent wrote it."""
    ids: tuple[str, ...]
    """The known ids it names, in the spelling they were given to the resolver, in the order
    they first appear (empty: it names none)."""

    @property
    def resolved(self) -> bool:
        """Whether it names at least one known entity."""
        return bool(self.ids)

    @property
    def ambiguous(self) -> bool:
        """Whether it names more than one (a gate then judges every one of them)."""
        return len(self.ids) > 1


def _id_pattern(known_id: str) -> re.Pattern[str] | None:
    runs = _RUNS.findall(known_id)
    if not runs:
        return None
    body = _JOIN.join(re.escape(r) for r in runs)
    return re.compile(_EDGE_BEFORE + body + _EDGE_AFTER, re.IGNORECASE)


def _name_pattern(name: str) -> re.Pattern[str] | None:
    words = name.split()
    if not words:
        return None
    body = r"\s+".join(re.escape(w) for w in words)
    return re.compile(_EDGE_BEFORE + body + _EDGE_AFTER, re.IGNORECASE)


class ReferenceResolver:
    """Resolves written references against one set of known ids (and, optionally, their names).

    Build one per set of entities (it compiles a pattern per id and name) and call
    :meth:`resolve` for every reference a gate reads.

    Args:
        ids: The known ids, in their canonical spelling as the rest of the system uses them.
        names: Optional names per id (one name or several), e.g. a step's activity name. A name
            shared by several ids names all of them.

    Raises:
        ValueError: When two known ids have the same canonical form, or a name is given for an
            id that is not known.
    """

    def __init__(
        self, ids: Iterable[str], names: Mapping[str, str | Iterable[str]] | None = None
    ) -> None:
        self._by_canonical: dict[str, str] = {}
        for known in ids:
            key = canonical_id(known)
            other = self._by_canonical.setdefault(key, known)
            if other != known:
                raise ValueError(f"known ids {other!r} and {known!r} have one canonical form")
        self._patterns: list[tuple[re.Pattern[str], str]] = []
        for known in self._by_canonical.values():
            pattern = _id_pattern(known)
            if pattern is not None:
                self._patterns.append((pattern, known))
        for known, given in (names or {}).items():
            if known not in self._by_canonical.values():
                raise ValueError(f"a name is given for {known!r}, which is not a known id")
            for name in (given,) if isinstance(given, str) else given:
                pattern = _name_pattern(name)
                if pattern is not None:
                    self._patterns.append((pattern, known))

    @property
    def known_ids(self) -> tuple[str, ...]:
        """The known ids, in the order given."""
        return tuple(self._by_canonical.values())

    def resolve(self, reference: str) -> Resolution:
        """The known ids ``reference`` names (see the module docstring for the rules)."""
        exact = self._by_canonical.get(canonical_id(reference))
        if exact is not None:
            return Resolution(reference, (exact,))
        found = [
            (m.start(), m.end(), known)
            for pattern, known in self._patterns
            for m in pattern.finditer(reference)
        ]
        # longest first, so a longer id or name claims its span before one inside it; a match
        # of exactly the same span (a name several ids share) names them all
        found.sort(key=lambda f: (f[0] - f[1], f[0]))
        kept: list[tuple[int, int, str]] = []
        for start, end, known in found:
            if all(end <= s or start >= e or (start, end) == (s, e) for s, e, _ in kept):
                kept.append((start, end, known))
        kept.sort()
        return Resolution(reference, tuple(dict.fromkeys(known for _, _, known in kept)))


def resolve_reference(
    reference: str, ids: Iterable[str], names: Mapping[str, str | Iterable[str]] | None = None
) -> tuple[str, ...]:
    """The known ids one reference names (empty: none); a one-off :class:`ReferenceResolver`.

    Raises:
        ValueError: As :class:`ReferenceResolver` does.
    """
    return ReferenceResolver(ids, names).resolve(reference).ids
