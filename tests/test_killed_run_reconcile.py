"""A killed run keeps what it finished (issue 17, class 7).

SIGKILL in the middle of a recorded run leaves transcripts on disk whose sample rows were still
in the store's write batch. The next run that finds the killed run abandoned adds a row for each
such transcript, judged as the transcript says, and never counts a sample twice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, select, update

from agentic_eval.cli.main import main
from agentic_eval.store import Store
from agentic_eval.store.models import EvalRun, EvalSample

EXE = Path(sys.executable).parent / "agentic-eval"
LONG = ("run", "retail_ops", "--backend", "scripted", "--agent", "reference", "--samples", "200")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    import psycopg

    request.getfixturevalue("pg_url")  # starts the server, or skips
    name = f"agentic_eval_killed_{os.getpid()}"
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')  # type: ignore[arg-type]
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def _transcripts(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    return {p.name for p in folder.glob("*.json") if p.name != "scorecard.json"}


def _rows(store: Store) -> int:
    try:
        with store.engine.connect() as conn:
            return len(conn.execute(select(EvalSample.id)).all())
    except Exception:  # the tables are not there yet
        return 0


def test_a_killed_recorded_run_gets_its_recorded_samples_back(
    url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rec = tmp_path / "rec"
    folder = rec / "retail_ops" / "reference"
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", url)
    env = {**os.environ, "AGENTIC_EVAL_DATABASE_URL": url}
    proc = subprocess.Popen(
        [str(EXE), *LONG, "--record", "--recordings", str(rec), "--no-history"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    store = Store(url)
    try:
        deadline = time.monotonic() + 60
        while _rows(store) == 0 or len(_transcripts(folder)) < 50:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no sample stored within 60 s"
            time.sleep(0.05)
        proc.kill()
        proc.communicate(timeout=10)
        written = _transcripts(folder)
        (dead,) = store.runs()
        assert dead.status == "running"
        # what the write batch still held at the kill: make sure the test sees a gap even
        # when the kill happened to land right after a flush
        with store.engine.begin() as conn:
            newest = conn.execute(
                select(EvalSample.id).where(EvalSample.run_id == dead.id).order_by(
                    EvalSample.id.desc()
                ).limit(7)
            ).scalars().all()  # fmt: skip
            conn.execute(delete(EvalSample).where(EvalSample.id.in_(newest)))
            long_ago = datetime.now(UTC) - timedelta(minutes=10)
            conn.execute(  # as if ten minutes had passed since it last beat
                update(EvalRun)
                .where(EvalRun.id == dead.id)
                .values(started_at=long_ago, heartbeat_at=long_ago)
            )
        (folder / ".match-001@9.json.half.tmp").write_text("{")  # as a killed write leaves it
        before = len(store.samples(dead.id))
        assert before < len(written)

        code = main(["run", "retail_ops", "--backend", "scripted", "--cases", "match-001"])
        err = capsys.readouterr().err
        assert code == 0, err
        assert f"run {dead.id}" in err and "marked abandoned" in err
        added = len(written) - before
        assert f"{added} sample(s) it recorded under {folder} but never stored" in err
        rows = store.samples(dead.id)
        keys = [(r.case_id, r.sample) for r in rows]
        assert len(keys) == len(set(keys)) == len(written)  # none lost, none twice
        names = {r.case_id if r.sample == 0 else f"{r.case_id}@{r.sample}" for r in rows}
        assert {f"{n}.json" for n in names} == written
        assert all(r.outcome == "passed" for r in rows)  # the reference agent, as recorded
        (run,) = [r for r in store.runs() if r.id == dead.id]
        assert run.status == "abandoned" and run.samples == len(written)

        assert not list(folder.glob(".*.tmp"))  # the half-written file is gone
        main(["run", "retail_ops", "--backend", "scripted", "--cases", "match-001"])
        assert "abandoned" not in capsys.readouterr().err  # reconciled once
        assert len(store.samples(dead.id)) == len(written)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        store.close()
