"""Shared fixtures: an isolated AGENTIC_EVAL_HOME per test, the network blocked (pytest-socket)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own store folder and no provider keys from the environment."""
    home = tmp_path / "home"
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(home))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.delenv("AGENTIC_EVAL_DATABASE_URL", raising=False)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    yield home
