"""A case's copy of a tau-bench database, and tau-bench's hash of it.

tau-bench judges the final database by a hash: ``sha256(str(to_hashable(data)))``, where
``to_hashable`` turns dicts into tuples of (key, value) pairs sorted by key and lists into tuples
(``tau_bench/envs/base.py``). :func:`to_hashable` and :func:`consistent_hash` are that algorithm.

Copying the whole database for every case, and hashing all of it at the end, costs a tenth of a
second per case on the retail data; so a :class:`TauDatabase` is copy-on-write instead: its
tables start as shallow copies sharing the pristine records, a tool that changes a record first
takes a private deep copy of it (:meth:`TauDatabase.writable`), and :meth:`TauDatabase.hash`
reuses the pristine records' text, computing it only for the records a tool took. The text is
the same string ``str(to_hashable(data))`` is, so the hash is the same: the tests compare the two
on every case.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def to_hashable(item: Any) -> Any:
    """tau-bench's ``to_hashable``: dicts as tuples of (key, value) sorted by key, lists as
    tuples, sets as sorted tuples, anything else as itself."""
    if isinstance(item, dict):
        pairs: list[tuple[Any, Any]] = sorted(item.items())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        return tuple((key, to_hashable(value)) for key, value in pairs)
    if isinstance(item, list):
        return tuple(to_hashable(element) for element in item)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(item, set):
        return tuple(sorted(to_hashable(element) for element in item))  # pyright: ignore[reportUnknownVariableType]
    return item


def consistent_hash(value: Any) -> str:
    """tau-bench's ``consistent_hash``: sha256 of the value's ``str``, hex."""
    return hashlib.sha256(str(value).encode("utf-8")).hexdigest()


def data_hash(data: Mapping[str, Any]) -> str:
    """The hash tau-bench compares: ``consistent_hash(to_hashable(data))``."""
    return consistent_hash(to_hashable(dict(data)))


def _tuple_text(parts: list[str]) -> str:
    """How Python writes a tuple whose elements are written ``parts``."""
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class Pristine:
    """A database as loaded, never changed, with each record's hash text computed on demand.

    Args:
        raw: Each table's JSON, by table name.
        constants: What a tool reads that tau-bench keeps in its code rather than its data (the
            airline's airport list, read from the checkout); never hashed, never changed.
    """

    def __init__(
        self, raw: Mapping[str, bytes], constants: Mapping[str, Any] | None = None
    ) -> None:
        self.tables: dict[str, dict[str, Any]] = {t: json.loads(b) for t, b in raw.items()}
        self.constants: Mapping[str, Any] = dict(constants or {})
        self._text: dict[tuple[str, str], str] = {}

    def record_text(self, table: str, key: str) -> str:
        """``repr(to_hashable(record))`` of a pristine record (computed once)."""
        found = self._text.get((table, key))
        if found is None:
            found = self._text[(table, key)] = repr(to_hashable(self.tables[table][key]))
        return found

    def copy(self) -> TauDatabase:
        """A fresh copy for one case (its tables share the pristine records until written)."""
        return TauDatabase({t: dict(records) for t, records in self.tables.items()}, self)


@dataclass
class TauDatabase:
    """One case's database: what the tools read and change, and what the reward hashes.

    ``data`` has tau-bench's shape (``data["orders"]["#W0000000"]``...). Tools read it freely;
    a tool that changes a record calls :meth:`writable` first and changes what it returns.
    """

    data: dict[str, dict[str, Any]]
    pristine: Pristine
    taken: set[tuple[str, str]] = field(default_factory=lambda: set[tuple[str, str]]())
    """The records a tool took a private copy of (their hash text is recomputed)."""

    def writable(self, table: str, key: str) -> dict[str, Any]:
        """The record ``data[table][key]``, as this case's own copy, to change in place.

        Raises:
            KeyError: When there is no such record (as tau-bench's code would).
        """
        if (table, key) not in self.taken:
            self.data[table][key] = copy.deepcopy(self.data[table][key])
            self.taken.add((table, key))
        return self.data[table][key]

    def hash_text(self) -> str:
        """``str(to_hashable(self.data))``, from the pristine records' text where it can."""
        tables: list[str] = []
        for table in sorted(self.data):
            records = self.data[table]
            same = self.pristine.tables.get(table)
            parts: list[str] = []
            for key in sorted(records):
                if (
                    same is not None
                    and (table, key) not in self.taken
                    and same.get(key) is records[key]
                ):
                    text = self.pristine.record_text(table, key)
                else:
                    text = repr(to_hashable(records[key]))
                parts.append(_tuple_text([repr(key), text]))
            tables.append(_tuple_text([repr(table), _tuple_text(parts)]))
        return _tuple_text(tables)

    def hash(self) -> str:
        """tau-bench's hash of this database (equal to :func:`data_hash` of ``data``)."""
        return hashlib.sha256(self.hash_text().encode("utf-8")).hexdigest()
