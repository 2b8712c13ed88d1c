"""The store: migrations, runs and samples, on SQLite and on the local PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from agentic_eval.core import ProducedBy
from agentic_eval.evaluation import build_scorecard
from agentic_eval.store import Store, StoreError, database_url
from agentic_eval.store.db import head_revision


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        s = Store(f"sqlite:///{tmp_path / 'db' / 'eval.db'}")
    else:
        s = Store(request.getfixturevalue("pg_url"))
    yield s
    s.close()


PRODUCED = ProducedBy(
    agent="reference",
    agent_kind="scripted",
    backend="scripted",
    model="scripted:reference",
    approval_mode="enforce",
)


def _row(case_id: str, outcome: str) -> dict[str, object]:
    return {
        "case_id": case_id,
        "outcome": outcome,
        "failure_reason": "",
        "failure_where": "",
        "checks": [{"name": "x", "passed": outcome == "passed"}],
        "hard_gate_failed": False,
        "unapproved_attempts": 0,
        "unapproved_executions": 0,
        "turns": 2,
        "tool_calls": 1,
        "input_tokens": 10,
        "output_tokens": 5,
        "duration_ms": 1.5,
        "transcript_ref": None,
        "reproduced": None,
    }


def test_migrations_create_tables_and_are_idempotent(store: Store) -> None:
    store.migrate()
    again = Store(store.url)  # a second store on the same database finds it at head
    again.migrate()
    again.close()
    with store.engine.connect() as conn:
        tables = set(inspect(conn).get_table_names())
        assert {"eval_run", "eval_sample", "alembic_version"} <= tables
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert version == head_revision() != "0001"


def test_run_and_samples_round_trip(store: Store) -> None:
    run_id = store.start_run("retail_ops", PRODUCED, "scripted", datetime.now(UTC))
    store.add_samples(run_id, [_row("b", "check_failed")])
    store.add_samples(run_id, [_row("a", "passed")])
    assert store.runs()[0].status == "running"  # rows are there before the run finishes
    from agentic_eval.core import CaseResult, Outcome

    results = [
        CaseResult(
            case_id=c,
            outcome=Outcome(kind=k),
            checks=(),
            hard_gate_failed=False,  # type: ignore[arg-type]
            unapproved_attempts=0,
            unapproved_executions=0,
            turns=2,
            tool_calls=1,
        )
        for c, k in [("a", "passed"), ("b", "check_failed")]
    ]
    card = build_scorecard(
        "retail_ops", PRODUCED, results, max_failure_rate=0.01, max_transient=0.2
    )
    store.finish_run(run_id, card, datetime.now(UTC), reproduced=None)
    run = next(r for r in store.runs() if r.id == run_id)
    assert (run.status, run.samples, run.passed, run.check_failed, run.gate) == (
        "finished",
        2,
        1,
        1,
        "FAIL",
    )
    assert run.failure_rate == 0.5
    samples = store.samples(run_id)
    assert [s.case_id for s in samples] == ["a", "b"]
    assert samples[1].checks == [{"name": "x", "passed": False}]


def test_three_samples_of_one_case_in_one_run_and_inserts_are_idempotent(store: Store) -> None:
    run_id = store.start_run("d", PRODUCED, "scripted", datetime.now(UTC), planned_samples=3)
    rows = [{**_row("a", k), "sample": i} for i, k in enumerate(["passed", "error", "passed"])]
    store.add_samples(run_id, rows)
    store.add_samples(run_id, [rows[1], {**rows[2], "outcome": "transient"}])  # a retried write
    samples = store.samples(run_id)
    assert [(s.case_id, s.sample, s.outcome) for s in samples] == [
        ("a", 0, "passed"),
        ("a", 1, "error"),
        ("a", 2, "passed"),  # the first write of (run, case, sample) stands
    ]
    counts = store.gate_counts(run_id)
    assert counts == {
        "passed": 2,
        "check_failed": 0,
        "error": 1,
        "transient": 0,
        "hard_gate_failures": 0,
    }


def test_values_postgres_would_refuse_are_stored_alike_on_both(store: Store) -> None:
    long_label = "Qwen/" + "x" * 300
    produced = PRODUCED.model_copy(update={"agent": long_label, "model": long_label})
    run_id = store.start_run("d", produced, "live", datetime.now(UTC))
    row = {
        **_row("a", "error"),
        "failure_reason": "bad\x00byte in a reason",
        "failure_where": "w" * 400,
        "transcript_ref": "/" + "p" * 900,
        "checks": [{"name": "x\x00", "passed": False, "message": "m\x00"}],
    }
    store.add_samples(run_id, [row])
    (sample,) = store.samples(run_id)
    assert sample.failure_reason == "badbyte in a reason"
    assert sample.transcript_ref == "/" + "p" * 900 and sample.failure_where == "w" * 400
    assert sample.checks == [{"name": "x", "passed": False, "message": "m"}]
    assert store.run(run_id) is not None and store.run(run_id).agent == long_label  # type: ignore[union-attr]


def test_a_run_left_running_by_a_dead_process_is_recognised(store: Store) -> None:
    from datetime import timedelta

    old = datetime.now(UTC) - timedelta(hours=1)
    dead = store.start_run("d", PRODUCED, "live", old)
    alive = store.start_run("d", PRODUCED, "live", datetime.now(UTC))
    found = {r.id for r in store.abandoned_runs()}
    assert dead in found and alive not in found
    store.heartbeat(dead)
    assert dead not in {r.id for r in store.abandoned_runs()}


def test_database_url_defaults_to_sqlite_under_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "h"))
    assert database_url() == f"sqlite:///{tmp_path / 'h' / 'agentic-eval.db'}"
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", "postgresql://u@h/db")
    assert database_url() == "postgresql+psycopg://u@h/db"


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    s = Store(f"sqlite:///{tmp_path / 'w.db'}")
    s.migrate()
    with s.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    s.close()


def _cli_run_writes_rows(url: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_eval.cli.main import main

    if url:
        monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", url)
    recordings = Path(__file__).resolve().parent.parent / "evals" / "recordings"
    assert main(["run", "retail_ops", "--agent", "reference", "--recordings", str(recordings)]) == 0
    store = Store()
    try:
        run = store.runs(limit=1)[0]
        assert (run.domain, run.agent, run.mode, run.status) == (
            "retail_ops",
            "reference",
            "replay",
            "finished",
        )
        assert (run.samples, run.passed, run.gate, run.reproduced) == (34, 34, "PASS", True)
        samples = store.samples(run.id)
        assert len(samples) == 34 and all(s.reproduced for s in samples)
        assert all(
            s.transcript_ref and s.transcript_ref.endswith(f"{s.case_id}.json") for s in samples
        )
    finally:
        store.close()


def test_every_cli_run_writes_its_run_and_samples_to_sqlite(
    monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    _cli_run_writes_rows(None, monkeypatch)
    assert (isolated_home / "agentic-eval.db").is_file()


@pytest.mark.postgres
def test_every_cli_run_writes_its_run_and_samples_to_postgres(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cli_run_writes_rows(pg_url, monkeypatch)


def _issue2_database(url: str) -> None:
    """A database as the first release left it: migrated to 0001, one run with one sample."""
    from agentic_eval.store.db import _upgrade  # pyright: ignore[reportPrivateUsage]

    s = Store(url)
    with s.engine.begin() as conn:
        _upgrade(conn, "0001")
        conn.execute(
            text(
                "INSERT INTO eval_run (id, domain, agent, agent_kind, backend, mode, model, "
                "approval_mode, started_at, status, samples, passed, check_failed, error, "
                "transient, hard_gate_failures, package_version) VALUES ('r1', 'retail_ops', "
                "'reference', 'scripted', 'scripted', 'replay', 'm', 'enforce', "
                "'2026-11-29 10:00:00', 'finished', 1, 1, 0, 0, 0, 0, '0.1.0')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO eval_sample (run_id, case_id, outcome, failure_reason, "
                "failure_where, checks, hard_gate_failed, unapproved_attempts, "
                "unapproved_executions, turns, tool_calls, input_tokens, output_tokens, "
                "duration_ms) VALUES ('r1', 'match-001', 'passed', '', '', '[]', false, 0, 0, "
                "3, 2, 0, 0, 1.5)"
            )
        )
    s.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_an_issue_2_database_is_upgraded_in_place(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
    else:
        import psycopg

        base = request.getfixturevalue("pg_url")
        name = f"agentic_eval_upgrade_{os.getpid()}"
        with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}"')  # type: ignore[arg-type]
            c.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        url = base.rsplit("/", 1)[0] + f"/{name}"
    _issue2_database(url)
    s = Store(url)
    s.migrate()
    (old,) = s.samples("r1")
    assert (old.case_id, old.sample, old.attempt, old.outcome) == ("match-001", 0, 1, "passed")
    s.add_samples("r1", [{**_row("match-001", "error"), "sample": 1}])  # a second sample now fits
    assert [x.sample for x in s.samples("r1")] == [0, 1]
    assert s.gate_counts("r1")["passed"] == 1
    s.close()


def test_store_errors_are_one_line_without_the_password(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(StoreError) as info:
        Store(f"sqlite:///{blocker / 'db' / 'x.db'}")
    assert "\n" not in str(info.value) and "cannot create the store folder" in str(info.value)
    s = Store("postgresql+psycopg://me:s3cret-pass@127.0.0.1:1/nodb?connect_timeout=2")
    with pytest.raises(StoreError) as info:
        s.migrate()
    text_ = str(info.value)
    assert "s3cret-pass" not in text_ and "\n" not in text_ and "sqlalche.me" not in text_
    assert "me:***@127.0.0.1:1/nodb" in text_


def test_every_run_writes_its_history_entry_to_the_folder_and_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentic_eval.cli.main import main

    history = tmp_path / "history"
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(history))
    assert main(["run", "retail_ops", "--backend", "scripted", "--cases", "match-00*"]) == 0
    (written,) = (history / "retail_ops").glob("*.json")
    store = Store()
    try:
        (row,) = store.history_entries("retail_ops")
        assert row.run_id in written.name
        assert row.entry == written.read_text(encoding="utf-8")  # the same canonical bytes
    finally:
        store.close()
