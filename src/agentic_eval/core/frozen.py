"""A case's private view of shared fixtures, without copying what cannot change.

Each case gets its own world, so one case's writes never leak into the next. A domain whose
fixture model is *deeply immutable* (a frozen pydantic model whose every field is a scalar, a tuple
or frozenset of such values, or another deeply immutable model) cannot be written to at all, so a
deep copy buys nothing and costs most of a scripted sample (about 9 ms of 12 for retail_ops' book
here). ``private_copy`` returns such a model itself, and deep-copies any other, so a domain that
keeps a list or a dict in its fixtures still gets a private copy.

The check is made on the model's declared field types, once per type. A field holding an
instance of a subclass of its declared model (pydantic keeps it as given) is judged by the
declared type: build fixtures from data (JSON), as the loaders do, not from such instances.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from threading import Lock
from typing import Any, TypeVar

from pydantic import BaseModel

_M = TypeVar("_M", bound=BaseModel)

_SCALARS: tuple[type, ...] = (
    str,
    bytes,
    int,
    float,
    bool,
    Decimal,
    date,
    datetime,
    time,
    timedelta,
    type(None),
)
_known: dict[type, bool] = {}
_lock = Lock()


def private_copy(model: _M) -> _M:
    """``model`` itself when its type is deeply immutable, else a deep copy of it."""
    if is_deeply_immutable(type(model)):
        return model
    return model.model_copy(deep=True)


def is_deeply_immutable(model_type: type[BaseModel]) -> bool:
    """Whether no value of ``model_type`` can be changed after validation (see the module)."""
    known = _known.get(model_type)
    if known is None:
        with _lock:
            known = _immutable_type(model_type, set())
            _known[model_type] = known
    return known


def _immutable_model(model_type: type[BaseModel], seen: set[type]) -> bool:
    if model_type in seen:
        return True  # a recursive model: judged by its other fields
    seen.add(model_type)
    if not model_type.model_config.get("frozen", False):
        return False
    if model_type.model_config.get("extra") == "allow":
        return False  # extra values are stored untyped
    if model_type.__private_attributes__:
        return False  # private attributes are not frozen
    if any(
        isinstance(v, functools.cached_property)
        for c in model_type.__mro__
        for v in vars(c).values()
    ):
        return False  # a cached property writes to the instance
    return all(_immutable_type(f.annotation, seen) for f in model_type.model_fields.values())


def _immutable_type(annotation: Any, seen: set[type]) -> bool:
    if annotation is Any or annotation is None:
        return annotation is None
    if isinstance(annotation, typing.TypeVar):
        return False
    origin = typing.get_origin(annotation)
    if origin is None:
        if isinstance(annotation, type):
            if issubclass(annotation, BaseModel):
                return _immutable_model(annotation, seen)
            return issubclass(annotation, (*_SCALARS, enum.Enum))
        return False
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return all(isinstance(a, (*_SCALARS, enum.Enum)) for a in args)
    if origin is typing.Annotated:
        return _immutable_type(args[0], seen)
    if origin in (typing.Union, types.UnionType, tuple, frozenset):
        return all(a is Ellipsis or _immutable_type(a, seen) for a in args)
    return False
