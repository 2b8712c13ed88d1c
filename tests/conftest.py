"""Shared fixtures: an isolated AGENTIC_EVAL_HOME per test, the network blocked (pytest-socket)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _pg_up() -> bool:
    try:
        import psycopg

        with psycopg.connect(
            "host=127.0.0.1 port=5432 user=postgres dbname=test", connect_timeout=3
        ):
            return True
    except Exception:
        return False


def _start_pg() -> None:
    if shutil.which("pg_ctlcluster") is None or not Path("/etc/postgresql").is_dir():
        return
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"],
        check=False,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this session (the server is started if it is down)."""
    if not _pg_up():
        _start_pg()
    if not _pg_up():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432 and could not be started")
    import psycopg

    name = f"agentic_eval_test_{os.getpid()}"
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')  # type: ignore[arg-type]
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def own_pg_url(request: pytest.FixtureRequest, pg_url: str) -> Iterator[str]:
    """A PostgreSQL database of the module's own (the session's is shared by every module): for
    tests that make what other modules must not find there (the real workflow templates)."""
    import psycopg

    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    name = f"agentic_eval_{module}_{os.getpid()}"
    admin = "host=127.0.0.1 user=postgres dbname=test"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    yield pg_url.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def wf(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The workflow services over a fresh SQLite store, then over the session's PostgreSQL
    database (shared by the session: give what you create unique names)."""
    from agentic_eval.store import Store
    from agentic_eval.workflow.service import Workflow

    if request.param == "sqlite":
        store = Store(f"sqlite:///{tmp_path / 'wf.db'}")
    else:
        store = Store(request.getfixturevalue("pg_url"))
    yield Workflow(store)
    store.close()
