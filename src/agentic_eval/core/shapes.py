"""Plain-data shapes of persisted models: a file read as JSON data is checked against the shape
its pydantic model has, without importing pydantic (what keeps ``list`` and ``show`` fast).

A shape is strict: it admits data only as our own writers spell it (a string where the model
has a string, an integer where it has an integer, no unknown key, every required key), which the
model accepts with the same values. Whatever does not fit (a value the model would coerce, or
refuse) makes :meth:`Shape.fill` return None, and the caller validates with the model itself,
which coerces, or names the first invalid field, exactly as before. So a shape may be stricter
than its model, never laxer; a test derives each shape from its model and fails when they drift.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast


class _Misfit(Exception):
    """The data does not have the shape (caught by :meth:`Shape.fill`)."""


class Shape:
    """What one value must be. Subclasses implement :meth:`_fill`; shapes are values (equal
    when of one class with equal parameters) and are never changed once made."""

    __slots__ = ()

    def fill(self, value: Any) -> Any:
        """``value`` with every absent field that has a default filled in, as the model's JSON
        dump (``model_dump(mode="json")``) has it; None when ``value`` does not fit the shape
        (the shape of a file is an :class:`Obj`, whose value is never None).

        A model whose serializer leaves out a field (a mark written only when set) is still
        filled: the caller reads the fields it prints, never the whole dump.
        """
        try:
            return self._fill(value)
        except (_Misfit, RecursionError):
            return None

    def _fill(self, value: Any) -> Any:
        raise NotImplementedError

    def _params(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _typed(self._params()) == _typed(
            cast(Shape, other)._params()
        )

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._params()!r}"


def _typed(value: Any) -> Any:
    """``value`` compared with its types: ``Lit((1,))`` is not ``Lit((True,))``."""
    if isinstance(value, tuple | list):
        items = cast(Sequence[Any], value)
        return (type(items), [_typed(v) for v in items])
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in cast(dict[str, Any], value).items()}
    return value if isinstance(value, Shape) else (type(value), value)


class Str(Shape):
    """A string; with ``pattern``, one the regular expression matches (``re.match``)."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: str | None = None) -> None:
        self.pattern = pattern

    def _fill(self, value: Any) -> Any:
        if type(value) is not str or (
            self.pattern is not None and re.match(self.pattern, value) is None
        ):
            raise _Misfit
        return value


class Int(Shape):
    """An integer (never a bool), within the bounds when given."""

    __slots__ = ("ge", "le")

    def __init__(self, ge: int | None = None, le: int | None = None) -> None:
        self.ge, self.le = ge, le

    def _fill(self, value: Any) -> Any:
        if (
            type(value) is not int
            or (self.ge is not None and value < self.ge)
            or (self.le is not None and value > self.le)
        ):
            raise _Misfit
        return value


class Float(Shape):
    """A finite number (an integer of at most 53 bits becomes a float, as the model makes it),
    within the bounds when given."""

    __slots__ = ("ge", "le")

    def __init__(self, ge: float | None = None, le: float | None = None) -> None:
        self.ge, self.le = ge, le

    def _fill(self, value: Any) -> Any:
        if type(value) is int and abs(value) < 2**53:
            value = float(value)
        if (
            type(value) is not float
            or not math.isfinite(value)
            or (self.ge is not None and value < self.ge)
            or (self.le is not None and value > self.le)
        ):
            raise _Misfit
        return value


class Bool(Shape):
    """``true`` or ``false``."""

    __slots__ = ()

    def _fill(self, value: Any) -> Any:
        if type(value) is not bool:
            raise _Misfit
        return value


class Anything(Shape):
    """Any JSON value, kept as it is (``Any`` in the model)."""

    __slots__ = ()

    def _fill(self, value: Any) -> Any:
        return value


class Lit(Shape):
    """One of a few strings or integers (``Literal`` in the model)."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[str | int, ...]) -> None:
        self.values = values

    def _fill(self, value: Any) -> Any:
        if not any(type(value) is type(v) and value == v for v in self.values):
            raise _Misfit
        return value


class Opt(Shape):
    """None, or a value of ``shape``."""

    __slots__ = ("shape",)

    def __init__(self, shape: Shape) -> None:
        self.shape = shape

    def _fill(self, value: Any) -> Any:
        return None if value is None else self.shape._fill(value)


class Seq(Shape):
    """A JSON array of values of ``item`` (a tuple or a list in the model)."""

    __slots__ = ("item",)

    def __init__(self, item: Shape) -> None:
        self.item = item

    def _fill(self, value: Any) -> Any:
        if type(value) is not list:
            raise _Misfit
        fill = self.item._fill
        return [fill(v) for v in value]  # pyright: ignore[reportUnknownVariableType]


class Map(Shape):
    """A JSON object of values of ``value`` (``dict[str, ...]`` in the model)."""

    __slots__ = ("value",)

    def __init__(self, value: Shape) -> None:
        self.value = value

    def _fill(self, value: Any) -> Any:
        if type(value) is not dict:
            raise _Misfit
        fill = self.value._fill
        return {k: fill(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a field the data must hold."""


class Key(NamedTuple):
    """One field of an :class:`Obj`: its shape and its default as JSON data (or
    :data:`REQUIRED`)."""

    shape: Shape
    default: Any = REQUIRED


class Obj(Shape):
    """A JSON object with exactly these fields (a model with ``extra="forbid"``)."""

    __slots__ = ("fields",)

    def __init__(self, fields: Mapping[str, Key]) -> None:
        self.fields = fields

    def _fill(self, value: Any) -> Any:
        if type(value) is not dict:
            raise _Misfit
        data = cast(dict[str, Any], value)
        if not data.keys() <= self.fields.keys():
            raise _Misfit
        out: dict[str, Any] = {}
        for name, key in self.fields.items():
            if name in data:
                out[name] = key.shape._fill(data[name])
            elif key.default is REQUIRED:
                raise _Misfit
            else:
                out[name] = _fresh(key.default)
        return out


def _fresh(default: Any) -> Any:
    """A default of its own for each value (an empty dict or list, as a default factory)."""
    if type(default) is dict:
        return dict(cast(dict[str, Any], default))
    if type(default) is list:
        return list(cast(list[Any], default))
    return default


class Tagged(Shape):
    """One of several objects, told apart by the string in their field ``tag`` (a
    discriminated union in the model)."""

    __slots__ = ("tag", "variants")

    def __init__(self, tag: str, variants: Mapping[str, Shape]) -> None:
        """Args:
        tag: The field naming the variant.
        variants: Each variant's shape (an :class:`Obj` holding the tag), by its tag.
        """
        self.tag, self.variants = tag, variants

    def _fill(self, value: Any) -> Any:
        if type(value) is not dict:
            raise _Misfit
        name = value.get(self.tag)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        variant = self.variants.get(name) if type(name) is str else None  # pyright: ignore[reportUnknownArgumentType]
        if variant is None:
            raise _Misfit
        return variant._fill(value)
