"""What ``list`` and ``show`` read of a domain: its cases as rows (id, kind, hard gate,
instruction), read from the committed case file as JSON data, without building a model.

A domain that reads its cases the default way (it does not override
:meth:`~agentic_eval.domains.base.Domain.load_cases`, has a committed case file and runs on
committed fixtures) is read here when its file is exactly as ``goldens write`` writes it (it
fits :data:`CASE_FILE`). Any other domain, and any file that does not fit, goes through
:meth:`~agentic_eval.domains.base.Domain.load_cases`, which reads, builds or refuses its cases as
it always does: the rows are the same either way, and so is every error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from agentic_eval.core.file_shapes import CASE
from agentic_eval.core.shapes import Key, Lit, Obj, Opt, Seq, Str
from agentic_eval.domains.base import CASE_FILE_SCHEMA_VERSION, Domain
from agentic_eval.recordings.files import has_long_number

if TYPE_CHECKING:
    from pathlib import Path

CASE_FILE = Obj(
    {
        "schema_version": Key(Lit((CASE_FILE_SCHEMA_VERSION,)), CASE_FILE_SCHEMA_VERSION),
        "domain": Key(Str()),
        "fixtures_sha256": Key(Str()),
        "cases": Key(Seq(CASE)),
        "external_fixtures": Key(Opt(Str()), None),
    }
)
"""The shape of :class:`~agentic_eval.domains.casefile.CaseFile`."""

_MAX_DEPTH = 64
"""Data nested deeper is left to the model's JSON parser (whose nesting limit is higher, and
whose error a deeper file must get)."""


class CaseRow(NamedTuple):
    """One case, as listings show it."""

    id: str
    kind: str
    hard_gate: bool
    instruction: str


def case_rows(domain: Domain[Any]) -> list[CaseRow]:
    """The domain's cases, in order, as rows: those of :meth:`Domain.load_cases`.

    Raises:
        CaseFileError: When the case file is missing, unreadable or invalid.
        FixtureError: When cases are built from fixtures that are invalid.
    """
    rows = _committed_rows(domain)
    if rows is not None:
        return rows
    return [CaseRow(c.id, c.kind, c.hard_gate, c.instruction) for c in domain.load_cases()]


def _committed_rows(domain: Domain[Any]) -> list[CaseRow] | None:
    """The rows of the committed case file, or None when :meth:`Domain.load_cases` must say."""
    if type(domain).load_cases is not Domain.load_cases:  # pyright: ignore[reportUnknownMemberType]
        return None
    path = domain.case_file_path()
    if path is None or domain.external_fixtures():
        return None
    data = _json(path)
    case_file = None if data is None or _deeper_than(data, _MAX_DEPTH) else CASE_FILE.fill(data)
    if case_file is None:
        return None
    return [
        CaseRow(c["id"], c["kind"], c["hard_gate"], c["instruction"]) for c in case_file["cases"]
    ]


def _json(path: Path) -> Any:
    """The file's JSON data, or None when it cannot be read exactly as the model's parser
    would read it (it is missing or unreadable, not JSON, or holds an integer orjson reads as a
    float)."""
    try:
        raw = path.read_bytes()
        return None if has_long_number(raw) else orjson.loads(raw)
    except (OSError, orjson.JSONDecodeError):
        return None


def _deeper_than(value: Any, depth: int) -> bool:
    if depth < 0:
        return True
    if type(value) is dict:
        return any(_deeper_than(v, depth - 1) for v in value.values())  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
    if type(value) is list:
        return any(_deeper_than(v, depth - 1) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return False
