"""Plain Python as a one-file domain's parts: case rows read from a list or a JSON-lines file,
typed functions as tools, and check functions' return values as results."""

from __future__ import annotations

import functools
import inspect
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.core.results import CheckResult
from agentic_eval.domains.fixtures import FixtureError

STATE_PARAMETER = "state"
"""A tool whose first parameter has this name receives the case's state (see ``state=``)."""
MAX_CASES_BYTES = 64 * 1024 * 1024


class CaseRows(BaseModel):
    """A one-file domain's fixtures: its case rows, as given (hashed into the case file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: tuple[dict[str, Any], ...] = Field(description="Every case row, in order.")


def caller_file(depth: int) -> Path | None:
    """The file of the module ``depth`` frames up (where the domain is defined)."""
    name = sys._getframe(depth).f_globals.get("__file__")  # pyright: ignore[reportPrivateUsage]
    return Path(name).resolve() if isinstance(name, str) else None


JSON_VALUES = "text, finite numbers, true/false, null, lists and objects with text keys"


def json_problem(value: object, where: str) -> str | None:
    """Why ``value`` is not a JSON value a case file can hold as it is (None: it is one):
    ``where`` names it, the path inside it is added."""
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where}: {value!r} is not a JSON number"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{where}: text with a lone surrogate is not JSON text"
        return None
    if isinstance(value, list):
        items = cast("list[object]", value)
        return next(
            (p for i, v in enumerate(items) if (p := json_problem(v, f"{where}[{i}]"))), None
        )
    if isinstance(value, dict):
        for key, item in cast("dict[object, object]", value).items():
            if not isinstance(key, str):
                return f"{where}: the key {key!r} is not text"
            problem = json_problem(key, f"{where}: the key") or json_problem(item, f"{where}.{key}")
            if problem:
                return problem
        return None
    return f"{where}: {type(value).__name__} is not a JSON value"


def row_problem(row: Mapping[str, Any], n: int) -> str | None:
    """Why case row ``n`` (1-based) cannot go into a case file as it is (None: it can)."""
    name = row.get("id", f"case-{n}")
    where = f"case {name}" if isinstance(name, str) else f"row {n}"
    for key, value in row.items():
        if not isinstance(key, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            return f"{where}: the key {key!r} is not text"
        problem = json_problem(key, f"{where}: the key") or json_problem(value, f"{where}, {key}")
        if problem:
            return problem
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Case rows from a JSON-lines file (blank lines skipped).

    Raises:
        FixtureError: One line naming the file (and the line) at fault.
    """
    try:
        if path.stat().st_size > MAX_CASES_BYTES:
            raise FixtureError(f"{path}: larger than {MAX_CASES_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except FixtureError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise FixtureError(f"{path}: cannot read the cases ({why})") from None
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, parse_constant=_no_constant)
        except ValueError as exc:
            raise FixtureError(f"{path}:{n}: not JSON: {str(exc).splitlines()[0]}") from None
        if not isinstance(row, dict):
            raise FixtureError(f"{path}:{n}: a case row is a JSON object, not {type(row).__name__}")
        problem = row_problem(cast("dict[str, Any]", row), n)
        if problem:
            raise FixtureError(f"{path}:{n}: {problem}")
        rows.append(row)  # pyright: ignore[reportUnknownArgumentType]
    return rows


def plain_tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a tool function of ``(state, args...)``: as is when its first parameter is
    ``state``, else wrapped to take (and ignore) the state. The wrapper keeps the signature,
    type hints and docstring the tool's JSON schema is read from."""
    params = list(inspect.signature(fn).parameters.values())
    if params and params[0].name == STATE_PARAMETER:
        return fn

    @functools.wraps(fn)
    def takes_state(_state: Any, /, **kwargs: Any) -> Any:
        return fn(**kwargs)

    leading = inspect.Parameter("_state", inspect.Parameter.POSITIONAL_ONLY)
    takes_state.__signature__ = inspect.signature(fn).replace(  # type: ignore[attr-defined]
        parameters=[leading, *params]
    )
    return takes_state


def as_results(name: str, got: object) -> CheckResult | list[CheckResult]:
    """A check function's return value as results (``True``/``False`` is a pass or a fail)."""
    if isinstance(got, bool):
        return CheckResult(name=name, passed=got)
    if isinstance(got, CheckResult):
        return got
    if isinstance(got, Sequence) and not isinstance(got, str):
        return list(got)  # pyright: ignore[reportUnknownArgumentType]  # run_checks checks each
    raise TypeError(f"returned {type(got).__name__}; return a bool or CheckResult(s)")
