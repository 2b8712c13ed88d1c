"""Every free-text field of a typed output, as a reader sees it.

A check that reads a hand-picked list of fields can be walked around by writing the figure in
another one ("ACME WIDGETS LTD (turnover about £3.2m)" as the company name), so the checks read
:func:`string_fields` of the whole output, and read it as :func:`plain_copy` makes it: every
string as :func:`~agentic_eval.core.plaintext.plain_text` (soft hyphens, zero-width characters
and look-alike letters gone).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from agentic_eval.core.plaintext import plain_text

M = TypeVar("M", bound=BaseModel)


def _strings(value: Any, path: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, BaseModel):
        return [
            found
            for name in type(value).model_fields
            for found in _strings(getattr(value, name), f"{path}.{name}" if path else name)
        ]
    if isinstance(value, list | tuple):
        items = cast(list[Any], list(value))  # pyright: ignore[reportUnknownArgumentType]
        return [found for i, v in enumerate(items) for found in _strings(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        mapping = cast(dict[Any, Any], value)
        return [found for k, v in mapping.items() for found in _strings(v, f"{path}[{k!r}]")]
    return []


def string_fields(model: BaseModel) -> list[tuple[str, str]]:
    """``(path, text)`` of every string field of ``model``, nested models and lists included,
    in field order: ``company_name``, ``facts[0].value``, ``line_items[2].description``..."""
    return _strings(model, "")


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, list):
        return [_plain(v) for v in cast(list[Any], value)]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in cast(dict[Any, Any], value).items()}
    return value


def plain_copy(model: M) -> M:
    """``model`` with every string read as plain text (validated again, so it stays typed)."""
    return type(model).model_validate(_plain(model.model_dump()))
