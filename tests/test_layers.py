"""Dependencies point down (DESIGN.md), and only the CLI imports click or rich."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "agentic_eval"

RANK = {
    "_version": 0,
    "core": 0,
    "reading": 0,
    "store": 1,
    "localmodel": 1,
    "backends": 1,
    "recordings": 2,
    "agent": 2,
    "testing": 2,
    "checks": 3,
    "tasks": 4,
    "domains": 5,
    "workflow": 6,
    "evaluation": 7,
    "corpus": 8,
    "batch": 9,
    "api": 10,
    "pytest_plugin": 11,
    "history": 10,
    "workers": 10,
    "report": 11,
    "exports": 11,
    "view": 11,
    "cli": 12,
}
"""A layer may import only layers of a strictly lower rank: two layers of one rank (store and
backends, recordings and agent, history and workers...) are independent of each other. The
corpus is a source of tasks, as workflow scenarios and domains are (a decided job rebuilt as a
scenario), so it sits below batch, whose plans, workers and resume run it."""
UI_LIBRARIES = {"click", "typer", "rich"}


def _layer(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


FILES = sorted(p for p in SRC.rglob("*.py") if _layer(p) in RANK)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: Path) -> None:
    layer = _layer(path)
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] in UI_LIBRARIES:
            assert layer == "cli", f"{path.relative_to(SRC)} imports {name}: only cli/ may"
        if parts[0] == "agentic_eval" and len(parts) > 1:
            target = parts[1]
            assert target in RANK, f"unknown layer {target}"
            if target == layer:
                continue
            assert RANK[target] < RANK[layer], (
                f"{path.relative_to(SRC)} ({layer}) imports {name} ({target}), which is "
                + ("beside it (same rank)" if RANK[target] == RANK[layer] else "above it")
            )


def test_every_layer_is_known() -> None:
    top = {p.name.removesuffix(".py") for p in SRC.iterdir() if not p.name.startswith("__")}
    top.discard("py.typed")
    assert top <= set(RANK), top - set(RANK)


def test_vendor_sdks_are_imported_lazily() -> None:
    for path in FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only
            if isinstance(node, ast.Import | ast.ImportFrom):
                mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                assert (mod or "").split(".")[0] not in {"anthropic", "openai", "celery"}, path
