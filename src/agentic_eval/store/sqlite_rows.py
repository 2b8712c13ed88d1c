"""Sample rows as sqlite3 parameters: the store's fast insert path on SQLite.

SQLAlchemy's per-row work costs more than a replayed sample's insert itself, so on SQLite the
store hands rows to the driver directly, converted exactly as SQLAlchemy's SQLite types would
convert them (``tests/test_fast_paths.py`` holds the two paths to the same stored rows).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, cast

import orjson
from sqlalchemy import JSON, Boolean, DateTime

from agentic_eval.store.models import EvalSample

_SAMPLE_COLUMNS = tuple(c for c in EvalSample.__table__.columns if c.name != "id")
_COLUMN_NAMES = tuple(c.name for c in _SAMPLE_COLUMNS)
SQLITE_INSERT = (
    f"INSERT INTO {EvalSample.__tablename__} ({', '.join(_COLUMN_NAMES)}) "
    f"VALUES ({', '.join('?' for _ in _COLUMN_NAMES)}) "
    "ON CONFLICT (run_id, case_id, sample, attempt) DO NOTHING"
)
_DATETIME_AT = tuple(i for i, c in enumerate(_SAMPLE_COLUMNS) if isinstance(c.type, DateTime))
_JSON_AT = tuple(i for i, c in enumerate(_SAMPLE_COLUMNS) if isinstance(c.type, JSON))
_BOOLEAN_AT = tuple(i for i, c in enumerate(_SAMPLE_COLUMNS) if isinstance(c.type, Boolean))
_PLAIN = frozenset({str, int, float, type(None)})


def _json_text() -> Callable[[Any], str]:
    """``json.dumps`` with its defaults (what SQLAlchemy's JSON type writes), as one reusable
    encoder: building the encoder costs as much as encoding a sample's checks."""
    from json import encoder

    make = cast(
        Callable[..., Callable[[Any, int], Iterable[str]]] | None,
        getattr(encoder, "c_make_encoder", None),
    )
    if make is None:  # pragma: no cover - CPython always has the C encoder
        return json.dumps
    plain = json.JSONEncoder()
    encode = make(
        {},
        plain.default,
        encoder.encode_basestring_ascii,
        None,
        plain.key_separator,
        plain.item_separator,
        False,
        False,
        True,
    )
    return lambda value: "".join(encode(value, 0))


def _sqlite_datetime(moment: datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS.ffffff``: the datetime's own fields, its zone dropped (as
    SQLAlchemy's SQLite DATETIME stores it), formatted by orjson (cheaper than isoformat)."""
    text = orjson.dumps(moment)  # b'"YYYY-MM-DDTHH:MM:SS[.ffffff][+HH:MM]"'
    if moment.microsecond:
        return (text[1:11] + b" " + text[12:27]).decode()
    return (text[1:11] + b" " + text[12:20]).decode() + ".000000"


def sqlite_params(run_id: str, rows: list[dict[str, Any]]) -> list[tuple[Any, ...]] | None:
    """Sample rows of a run as sqlite3 parameters, converted exactly as SQLAlchemy's SQLite
    types convert them (a datetime to ``YYYY-MM-DD HH:MM:SS.ffffff``, without its zone; a JSON
    value to ``json.dumps`` text; a boolean to 0/1), or None when a row is not one this path
    takes (a column missing or extra, a value of another type, a NUL to remove): SQLAlchemy
    then inserts the batch. SQLAlchemy's per-row work costs more than the insert itself (a
    test holds the two paths to the same stored rows).
    """
    out: list[tuple[Any, ...]] = []
    dumps = _json_text()
    for row in rows:
        if len(row) != len(_COLUMN_NAMES) - 1 or "run_id" in row:
            return None
        try:
            values = [run_id if name == "run_id" else row[name] for name in _COLUMN_NAMES]
        except KeyError:
            return None
        for i in _DATETIME_AT:
            moment = values[i]
            if moment is not None:
                if type(moment) is not datetime:
                    return None
                values[i] = _sqlite_datetime(moment)
        for i in _JSON_AT:
            if values[i] is None:
                return None  # JSON null or SQL NULL: SQLAlchemy decides
            try:
                values[i] = dumps(values[i])
            except (TypeError, ValueError, RecursionError):
                return None  # SQLAlchemy reports it
        for i in _BOOLEAN_AT:
            flag = values[i]
            if flag is not None:
                if type(flag) is not bool:
                    return None
                values[i] = int(flag)  # sqlite3 adapts a bool at some cost; SQLAlchemy: int
        if not _PLAIN.issuperset(map(type, values)):
            return None
        # a NUL clean() would remove: in a text as it is, in a JSON value as json.dumps writes
        # it (\u0000; an escaped backslash before "u0000" is a false alarm: SQLAlchemy decides).
        # A text's escaped "\u0000" (a transcript's JSON) is no NUL: clean() keeps it too.
        if any("\x00" in v for v in values if type(v) is str) or any(
            "\\u0000" in values[i] for i in _JSON_AT
        ):
            return None
        out.append(tuple(values))
    return out
