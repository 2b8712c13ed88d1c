"""Shortcuts that must not change what a run sees: fixtures shared only when nothing can write
to them (``core.frozen.private_copy``), and ``core.aio.run`` returning what ``asyncio.run`` does
without building the result's repr."""

from __future__ import annotations

import asyncio
import functools
import sys
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, PrivateAttr

from agentic_eval.core.aio import run
from agentic_eval.core.frozen import is_deeply_immutable, private_copy
from agentic_eval.domains import get_domain

FROZEN = ConfigDict(frozen=True, extra="forbid")


class Colour(Enum):
    RED = "red"


class Leaf(BaseModel):
    model_config = FROZEN
    name: str
    amount: Decimal
    on: date
    colour: Colour
    kind: Literal["a", "b"]
    maybe: int | None = None


class Tree(BaseModel):
    model_config = FROZEN
    leaves: tuple[Leaf, ...]
    tags: frozenset[str]
    pair: tuple[int, str]


class WithList(BaseModel):
    model_config = FROZEN
    leaves: list[Leaf]


class WithDict(BaseModel):
    model_config = FROZEN
    index: dict[str, int]


class Thawed(BaseModel):
    name: str


class HoldsThawed(BaseModel):
    model_config = FROZEN
    inner: tuple[Thawed, ...]


class Extra(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")
    name: str


class Private(BaseModel):
    model_config = FROZEN
    name: str
    _seen: list[int] = PrivateAttr(default_factory=list)


class Cached(BaseModel):
    model_config = FROZEN
    name: str

    @functools.cached_property
    def index(self) -> dict[str, int]:
        return {}


class Loose(BaseModel):
    model_config = FROZEN
    anything: Any


def _leaf() -> Leaf:
    return Leaf(name="x", amount=Decimal("1.5"), on=date(2026, 1, 1), colour=Colour.RED, kind="a")


def test_a_deeply_immutable_model_is_shared() -> None:
    tree = Tree(leaves=(_leaf(),), tags=frozenset({"t"}), pair=(1, "a"))
    assert is_deeply_immutable(Tree)
    assert private_copy(tree) is tree


@pytest.mark.parametrize(
    "model_type", [WithList, WithDict, HoldsThawed, Extra, Loose, Thawed, Private, Cached]
)
def test_anything_that_could_be_written_is_copied(model_type: type[BaseModel]) -> None:
    assert not is_deeply_immutable(model_type)


def test_a_copied_model_is_private() -> None:
    shared = WithList(leaves=[_leaf()])
    mine = private_copy(shared)
    assert mine is not shared
    mine.leaves.append(_leaf())
    assert len(shared.leaves) == 1


@pytest.mark.parametrize("name", ["retail_ops", "approval_audit", "process_mapping"])
def test_each_case_still_gets_a_world_no_other_case_wrote_to(name: str) -> None:
    """The built-in domains share their (frozen) fixtures; what a case changes lives in its env."""
    domain = get_domain(name)
    case = domain.load_cases()[0]
    first, second = domain.make_env(case), domain.make_env(case)
    assert first is not second
    state = next(v for k, v in vars(first).items() if k in ("state",))
    assert isinstance(state, BaseModel) and is_deeply_immutable(type(state))
    with pytest.raises(Exception, match="frozen"):
        setattr(state, next(iter(type(state).model_fields)), None)


class _LoudRepr:
    calls = 0

    def __repr__(self) -> str:
        type(self).calls += 1
        return "loud"


async def _value() -> _LoudRepr:
    await asyncio.sleep(0)
    return _LoudRepr()


def test_run_returns_the_result_without_its_repr() -> None:
    _LoudRepr.calls = 0
    assert isinstance(run(_value()), _LoudRepr)
    assert _LoudRepr.calls == 0


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the cost is Python 3.11's signal")
def test_plain_asyncio_run_builds_the_repr_on_this_python() -> None:
    """Why ``run`` exists: on 3.11 ``asyncio.run`` reprs its main task (and so its result)."""
    _LoudRepr.calls = 0
    asyncio.run(_value())
    assert _LoudRepr.calls > 0


def test_run_raises_what_the_coroutine_raises() -> None:
    async def boom() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run(boom())
