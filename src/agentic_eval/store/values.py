"""Values on their way into and out of the store's rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import orjson


def _may_hold_nul(value: object) -> bool:
    """False when no string in ``value`` (keys included) holds a NUL, told cheaply: orjson
    writes a NUL as ``\\u0000`` (and a backslash as ``\\\\``, so a false alarm at worst);
    values it cannot write (an object, a huge integer) are taken as possible NULs."""
    try:
        return b"\\u0000" in orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return True


def clean(value: Any) -> Any:
    """``value`` with NUL characters removed from every string (PostgreSQL refuses them)."""
    if isinstance(value, dict | list | tuple) and not _may_hold_nul(cast(object, value)):
        return cast(object, value)  # nothing to clean (fast)
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def aware(moment: datetime) -> datetime:
    """A time read back from a row, in UTC (SQLite keeps no time zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
