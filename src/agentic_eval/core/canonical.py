"""Canonical JSON: sorted keys, no insignificant whitespace, stable bytes.

Every persisted artefact (case files, transcripts, scorecards) and every request key goes through
these functions, so that the same value always produces the same bytes. The encoder is orjson
(sorted keys, UTF-8, RFC 8259 escapes); dates, datetimes and dataclasses are refused rather than
converted (a value that is not plain JSON is an error), and the rare value orjson cannot encode
(an integer beyond 64 bits) falls back to the standard library encoder, deterministically.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import orjson

_STRICT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_COMPACT = orjson.OPT_SORT_KEYS | _STRICT
_INDENTED = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | _STRICT


_JSON_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    if type(value) in _JSON_TYPES:  # plain data: skip the (costly) isinstance on BaseModel
        return value
    from pydantic import BaseModel  # here: plain data is written without importing pydantic

    if isinstance(value, BaseModel):
        # The model's own serializer, without model_dump's per-call argument handling: this
        # runs several times per model turn, on the replay hot path.
        return type(value).__pydantic_serializer__.to_python(value, mode="json")
    return value


def canonical_bytes(value: Any, *, indent: bool = False) -> bytes:
    """Serialise ``value`` (a pydantic model or JSON-compatible data) to canonical JSON bytes.

    Args:
        value: A pydantic model or plain JSON data.
        indent: False for the compact form used in hashes; True for committed files (two
            spaces).

    Raises:
        TypeError: When ``value`` is not plain JSON data (a date, a set, an object...).
    """
    plain = _plain(value)
    try:
        return orjson.dumps(plain, option=_INDENTED if indent else _COMPACT)
    except orjson.JSONEncodeError:
        pass
    try:  # only an integer beyond 64 bits gets here with plain JSON data
        text = json.dumps(
            plain,
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ": ") if indent else (",", ":"),
            indent=2 if indent else None,
            allow_nan=False,
        )
    except ValueError as exc:
        raise TypeError(str(exc)) from None
    return text.encode("utf-8")


Fragment = orjson.Fragment
"""Already-canonical JSON bytes to place inside a value given to :func:`spliced_bytes`."""


def spliced_bytes(plain: Any) -> bytes | None:
    """Compact canonical JSON of plain data in which some values are :data:`Fragment` s of
    canonical JSON (written as they are), or None when the data holds a value only the fallback
    encoder takes (an integer beyond 64 bits): the caller then serialises the whole value with
    :func:`canonical_bytes`.
    """
    try:
        return orjson.dumps(plain, option=_COMPACT)
    except orjson.JSONEncodeError:
        return None


def indented_bytes(plain: Any) -> bytes | None:
    """:func:`canonical_bytes` with ``indent=True`` of plain data, or None when only the
    fallback encoder can write it (an integer beyond 64 bits)."""
    try:
        return orjson.dumps(plain, option=_INDENTED)
    except orjson.JSONEncodeError:
        return None


def unsorted_bytes(plain: Any) -> bytes | None:
    """Compact JSON of plain data with each object's keys in their own order, or None when
    orjson cannot write it. Equal to :func:`canonical_bytes` exactly when every object's keys
    are already sorted; so when it equals some canonical bytes, so does ``canonical_bytes``.
    """
    try:
        return orjson.dumps(plain, option=_STRICT)
    except orjson.JSONEncodeError:
        return None


def canonical_json(value: Any, *, indent: int | None = None) -> str:
    """Serialise ``value`` to canonical JSON text (see :func:`canonical_bytes`).

    Args:
        value: A pydantic model or plain JSON data.
        indent: ``None`` for the compact form used in hashes; 2 for committed files.

    Returns:
        The JSON text, keys sorted, non-ASCII kept as is.
    """
    return canonical_bytes(value, indent=indent is not None).decode("utf-8")


def canonical_file_text(value: Any) -> str:
    """The exact text of a committed file: canonical JSON, indented by two, ending in a newline."""
    return canonical_json(value, indent=2) + "\n"


def sha256_of(value: Any) -> str:
    """Hex sha256 of the compact canonical JSON of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """The path of the first field where two JSON values differ, or ``None`` when equal.

    Args:
        expected: The recorded (reference) value.
        actual: The value produced now.
        path: Prefix for the reported path.

    Returns:
        A path such as ``messages[3].content[0].content``, or ``None``.
    """
    expected, actual = _plain(expected), _plain(actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        exp: dict[str, Any] = expected  # pyright: ignore[reportUnknownVariableType]
        act: dict[str, Any] = actual  # pyright: ignore[reportUnknownVariableType]
        for key in sorted(set(exp) | set(act)):
            sub = f"{path}.{key}" if path else key
            if key not in exp or key not in act:
                return sub
            found = first_difference(exp[key], act[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        exp_l: list[Any] = expected  # pyright: ignore[reportUnknownVariableType]
        act_l: list[Any] = actual  # pyright: ignore[reportUnknownVariableType]
        for i, (e, a) in enumerate(zip(exp_l, act_l, strict=False)):
            found = first_difference(e, a, f"{path}[{i}]")
            if found is not None:
                return found
        if len(exp_l) != len(act_l):
            return f"{path}[{min(len(exp_l), len(act_l))}]"
        return None
    same = type(expected) is type(actual) and bool(expected == actual)  # pyright: ignore[reportUnknownArgumentType]
    if same and isinstance(expected, float) and isinstance(actual, float):
        same = math.copysign(1.0, expected) == math.copysign(1.0, actual)  # -0.0 is not 0.0
    return None if same else (path or "<root>")


class _Absent:
    """The value of a field that is not there."""

    def __repr__(self) -> str:
        return "absent"


ABSENT: Any = _Absent()
"""What :func:`value_at` may return for a path that does not exist; shown as ``absent``."""


def value_at(value: Any, path: str, absent: Any = None) -> Any:
    """The value at a path produced by :func:`first_difference`, or ``absent`` when there is
    none (pass :data:`ABSENT` to tell a missing field from a null one)."""
    import re

    current: Any = _plain(value)
    for name, index in re.findall(r"\.?([^.\[\]]+)|\[(\d+)\]", path):
        if name and isinstance(current, dict):
            mapping: dict[str, Any] = current  # pyright: ignore[reportUnknownVariableType]
            if name not in mapping:
                return absent
            current = mapping[name]
        elif index and isinstance(current, list):
            items: list[Any] = current  # pyright: ignore[reportUnknownVariableType]
            if int(index) >= len(items):
                return absent
            current = items[int(index)]
        else:
            return absent
    return current


def short_repr(value: Any, limit: int = 80) -> str:
    """A one-line, bounded repr of a JSON value for error messages (``absent`` for
    :data:`ABSENT`)."""
    if value is ABSENT:
        return "absent"
    text = canonical_json(value) if not isinstance(value, str) else repr(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_difference(was: Any, now: Any, limit: int = 80) -> str:
    """``recorded X, now Y`` for a message; long strings are cut around their first difference."""
    if isinstance(was, str) and isinstance(now, str) and (len(was) > limit or len(now) > limit):
        at = next(
            (i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b),
            min(len(was), len(now)),
        )
        start = max(0, at - limit // 2)
        prefix = "..." if start else ""
        return (
            f"recorded {prefix}{short_repr(was[start:], limit)}, "
            f"now {prefix}{short_repr(now[start:], limit)} (first difference at character {at})"
        )
    return f"recorded {short_repr(was, limit)}, now {short_repr(now, limit)}"
