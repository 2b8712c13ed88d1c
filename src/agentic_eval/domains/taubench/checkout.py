"""Reading a tau-bench checkout the user points at, without running any of its code.

A checkout is a directory holding ``tau_bench/envs/<env>/``: the database (``data/*.json``), the
policy (``wiki.md``), the tasks (``tasks_test.py``, ``tasks_train.py``...) and the tools
(``tools/*.py``). The task files are Python: they are parsed with :mod:`ast`, never imported, and
every ``Task(...)`` and ``Action(...)`` must be written with literal arguments (as tau-bench's
are). Each tool module's ``get_info()`` (a literal dict) gives the tool's schema exactly as
tau-bench shows it to the agent. Nothing read here is ever written into this repository.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_eval.domains.fixtures import FixtureError

TABLES: dict[str, tuple[str, ...]] = {
    "retail": ("orders", "products", "users"),
    "airline": ("flights", "reservations", "users"),
}
"""Each environment's database: one JSON file per table under ``data/``."""
SPLITS: dict[str, tuple[str, ...]] = {
    "retail": ("test", "train", "dev"),
    "airline": ("test",),
}
"""The task files each environment has (``tasks_<split>.py``)."""


class TauBenchError(FixtureError):
    """A path that is not a usable tau-bench checkout (one line, naming the file); a kind of
    :class:`FixtureError`, since the checkout is the domain's fixtures."""


@dataclass(frozen=True)
class GoldAction:
    """One action of a task's gold trajectory: a tool name and its arguments."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True)
class TauTask:
    """One tau-bench task, as its task file writes it."""

    index: int
    """Position in the task file's list (tau-bench's task index)."""
    user_id: str
    instruction: str
    """What the simulated user wants, knows and will accept."""
    actions: tuple[GoldAction, ...]
    """The gold actions: applied to the database, they give the expected final state."""
    outputs: tuple[str, ...]
    """Strings the agent must say to the user (tau-bench's ``outputs``)."""


def env_dir(root: Path, env: str) -> Path:
    """``tau_bench/envs/<env>`` under a checkout."""
    return root / "tau_bench" / "envs" / env


def check_checkout(root: Path, env: str, split: str) -> Path:
    """The environment's directory in the checkout at ``root``.

    Raises:
        TauBenchError: When ``root`` lacks a file the import reads (naming the first one).
    """
    if env not in TABLES:
        raise TauBenchError(f"unknown tau-bench environment {env!r}; known: {', '.join(TABLES)}")
    if split not in SPLITS[env]:
        known = ", ".join(SPLITS[env])
        raise TauBenchError(f"tau-bench {env} has no task split {split!r}; known: {known}")
    if not root.is_dir():
        raise TauBenchError(
            f"{root}: {'not a directory' if root.exists() else 'no such directory'}"
        )
    where = env_dir(root, env)
    needed = [where / "data" / f"{t}.json" for t in TABLES[env]]
    needed += [where / "wiki.md", where / f"tasks_{split}.py"]
    for path in needed:
        if not path.is_file():
            raise TauBenchError(
                f"{root} is not a tau-bench checkout: {path.relative_to(root)} is missing"
            )
    return where


def read_tables(where: Path, env: str) -> dict[str, bytes]:
    """The raw JSON of each table of the database, in tau-bench's load order.

    Raises:
        TauBenchError: When a file cannot be read.
    """
    tables: dict[str, bytes] = {}
    for table in TABLES[env]:
        path = where / "data" / f"{table}.json"
        try:
            tables[table] = path.read_bytes()
        except OSError as exc:
            raise TauBenchError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return tables


def read_policy(where: Path) -> str:
    """The environment's policy (``wiki.md``): the agent's system prompt, as tau-bench's.

    Raises:
        TauBenchError: When it cannot be read as UTF-8 text.
    """
    path = where / "wiki.md"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TauBenchError(f"{path}: cannot be read: {exc}") from None


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise TauBenchError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TauBenchError(f"{path}: cannot be read: {exc}") from None


def _called(node: ast.expr, name: str) -> ast.Call | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
        return node
    return None


def _keywords(call: ast.Call, path: Path, what: str) -> dict[str, Any]:
    """The literal keyword arguments of ``call``."""
    if call.args:
        raise TauBenchError(f"{path}:{call.lineno}: {what}(...) must use keyword arguments")
    values: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise TauBenchError(f"{path}:{call.lineno}: {what}(**...) is not supported")
        if kw.arg == "actions" and isinstance(kw.value, ast.List):
            values[kw.arg] = kw.value
            continue
        try:
            values[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            raise TauBenchError(
                f"{path}:{kw.value.lineno}: {what}({kw.arg}=...) is not a literal"
            ) from None
    return values


def _action(node: ast.expr, path: Path) -> GoldAction:
    call = _called(node, "Action")
    if call is None:
        raise TauBenchError(f"{path}:{node.lineno}: expected Action(...) in actions")
    values = _keywords(call, path, "Action")
    name, kwargs = values.get("name"), values.get("kwargs", {})
    if not isinstance(name, str) or not isinstance(kwargs, dict):
        raise TauBenchError(f"{path}:{call.lineno}: Action needs name= (text) and kwargs= (dict)")
    return GoldAction(name, {str(k): v for k, v in kwargs.items()})  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _task(index: int, call: ast.Call, path: Path) -> TauTask:
    values = _keywords(call, path, "Task")
    actions = values.get("actions")
    user_id, instruction = values.get("user_id"), values.get("instruction")
    outputs = values.get("outputs", [])
    if not isinstance(user_id, str) or not isinstance(instruction, str):
        raise TauBenchError(f"{path}:{call.lineno}: Task needs user_id= and instruction= (text)")
    if not isinstance(actions, ast.List):
        raise TauBenchError(f"{path}:{call.lineno}: Task needs actions=[Action(...), ...]")
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):  # pyright: ignore[reportUnknownVariableType]
        raise TauBenchError(f"{path}:{call.lineno}: Task(outputs=...) must be a list of text")
    return TauTask(
        index=index,
        user_id=user_id,
        instruction=instruction,
        actions=tuple(_action(a, path) for a in actions.elts),
        outputs=tuple(outputs),  # pyright: ignore[reportUnknownArgumentType]
    )


def read_tasks(where: Path, split: str) -> list[TauTask]:
    """The tasks of ``tasks_<split>.py``: the list its one top-level assignment holds.

    Raises:
        TauBenchError: When the file holds no such list, or a task is not written with literals.
    """
    path = where / f"tasks_{split}.py"
    module = _parse(path)
    lists = [
        node.value
        for node in module.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List)
    ]
    if len(lists) != 1:
        raise TauBenchError(f"{path}: expected one top-level list of Task(...), found {len(lists)}")
    tasks: list[TauTask] = []
    for index, node in enumerate(lists[0].elts):
        call = _called(node, "Task")
        if call is None:
            raise TauBenchError(f"{path}:{node.lineno}: expected Task(...) in the task list")
        tasks.append(_task(index, call, path))
    return tasks


def read_tool_infos(where: Path) -> dict[str, dict[str, Any]]:
    """Each tool's ``get_info()["function"]`` (name, description, parameters) as tau-bench shows
    it to the agent, by tool name; tools whose module is absent or not literal are left out
    (their descriptions then come from this package's own)."""
    infos: dict[str, dict[str, Any]] = {}
    folder = where / "tools"
    if not folder.is_dir():
        return infos
    for path in sorted(folder.glob("*.py")):
        try:
            module = _parse(path)
        except TauBenchError:
            continue
        for node in ast.walk(module):
            if not (isinstance(node, ast.FunctionDef) and node.name == "get_info"):
                continue
            returned = [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
            try:
                info = ast.literal_eval(returned[0]) if returned else None
            except ValueError:
                info = None
            function = info.get("function") if isinstance(info, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(function, dict) and isinstance(function.get("name"), str):  # pyright: ignore[reportUnknownMemberType]
                infos[function["name"]] = function  # pyright: ignore[reportUnknownArgumentType]
    return infos


def _literal_lists(node: ast.AST) -> dict[str, list[Any]]:
    """The names assigned a literal list anywhere under ``node`` (``name = [...]``)."""
    found: dict[str, list[Any]] = {}
    for sub in ast.walk(node):
        if not (isinstance(sub, ast.Assign) and isinstance(sub.value, ast.List)):
            continue
        try:
            value = ast.literal_eval(sub.value)
        except ValueError:
            continue
        for target in sub.targets:
            if isinstance(target, ast.Name):
                found[target.id] = value
    return found


def read_airports(where: Path) -> dict[str, str] | None:
    """The airline's airport list as its ``list_all_airports`` tool holds it (code to city, in
    its order): the literal lists ``airports`` and ``cities`` its code zips, read, not run. None
    when the checkout has no such tool module or it holds no such lists."""
    path = where / "tools" / "list_all_airports.py"
    if not path.is_file():
        return None
    try:
        lists = _literal_lists(_parse(path))
    except TauBenchError:
        return None
    codes, cities = lists.get("airports"), lists.get("cities")
    if codes is None or cities is None:
        return None
    if not all(isinstance(x, str) for x in [*codes, *cities]):
        return None
    return {str(code): str(city) for code, city in zip(codes, cities, strict=False)}
