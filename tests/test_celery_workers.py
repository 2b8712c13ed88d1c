"""The celery executor on real processes: Redis, PostgreSQL and two `agentic-eval worker`s.

Every test has its own queue (``AGENTIC_EVAL_QUEUE``) on a Redis database of its own number, so
no test sees another's messages; the runs live in the session's PostgreSQL database. Every
process a test starts is in a session of its own and is killed (its whole group) in teardown.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pytest
from sqlalchemy import create_engine, text

from agentic_eval.cli.main import main
from agentic_eval.store import Store

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(150)]

SCENARIO = "synthesize.missing_revenue"
REDIS_DB = 11
KILLED = 60
"""Samples of the batches whose worker or submitter is killed."""
MISSING_EXTRA = "the celery executor needs the celery extra: pip install 'agentic-eval[celery]'"


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="module")
def broker_url() -> str:
    """Redis on 127.0.0.1:6379 (started, without persistence, if it is down)."""
    pytest.importorskip("celery", reason="the celery extra is not installed")
    if not _redis_up() and shutil.which("redis-server"):
        subprocess.run(
            ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379",
             "--save", "", "--appendonly", "no"],
            check=False, capture_output=True, timeout=30,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not _redis_up() and time.monotonic() < deadline:
            time.sleep(0.1)
    if not _redis_up():
        pytest.skip("Redis is not reachable on 127.0.0.1:6379 and could not be started")
    return f"redis://127.0.0.1:6379/{REDIS_DB}"


@pytest.fixture(scope="module")
def pg_url(own_pg_url: str) -> str:
    """A PostgreSQL database of this module's own (conftest's ``own_pg_url``): the workers'
    scenario batches seed workflow templates and users that other modules' tests must not find
    in the session's shared database."""
    return own_pg_url


class Cluster:
    """The processes of one test: workers and batch commands, on one queue."""

    def __init__(self, tmp_path: Path, pg_url: str, broker: str) -> None:
        self.tmp = tmp_path
        self.queue = f"test-{uuid.uuid4().hex[:10]}"
        self.env = {
            **os.environ,
            "AGENTIC_EVAL_DATABASE_URL": pg_url,
            "AGENTIC_EVAL_BROKER_URL": broker,
            "AGENTIC_EVAL_QUEUE": self.queue,
            "PYTHONUNBUFFERED": "1",
        }
        self.procs: list[subprocess.Popen[bytes]] = []
        self.engine = create_engine(pg_url)
        store = Store(pg_url)  # migrated once: two commands migrating a fresh database at
        store.migrate()  # once race on Alembic's table (not what these tests are about)
        store.close()
        self.files: list[IO[bytes]] = []

    def start(
        self, label: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        out = (self.tmp / f"{label}.out").open("wb")
        err = (self.tmp / f"{label}.err").open("wb")
        self.files += [out, err]
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentic_eval", *args],
            env=env or self.env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=self.tmp,
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def output(self, label: str) -> tuple[str, str]:
        return (
            (self.tmp / f"{label}.out").read_text(errors="replace"),
            (self.tmp / f"{label}.err").read_text(errors="replace"),
        )

    def workers(self, *names: str) -> list[subprocess.Popen[bytes]]:
        """Start one worker per name (prefork, one process each) and wait until all are ready."""
        procs = [
            self.start(name, "worker", "--name", name, "--concurrency", "1")  # log level WARNING
            for name in names
        ]
        deadline = time.monotonic() + 30
        for name, proc in zip(names, procs, strict=True):
            while f"agentic-eval worker {name}: ready (prefork pool x1" not in self.output(name)[1]:
                assert proc.poll() is None, f"worker {name} exited: {self.output(name)[1][-2000:]}"
                assert time.monotonic() < deadline, f"worker {name} not ready"
                time.sleep(0.1)
        return procs

    def run_id(self, label: str, proc: subprocess.Popen[bytes]) -> str:
        """The run a celery batch names on stderr as it starts."""
        deadline = time.monotonic() + 30
        while True:
            found = re.search(r"batch: run (\S+) on the celery workers", self.output(label)[1])
            if found:
                return found.group(1)
            assert proc.poll() is None, self.output(label)
            assert time.monotonic() < deadline, "the batch did not start"
            time.sleep(0.05)

    def wait_stored(self, run_id: str, at_least: int, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while (n := len(self.rows(run_id))) < at_least:
            assert time.monotonic() < deadline, f"only {n} samples stored"
            time.sleep(0.05)
        return n

    def rows(self, run_id: str) -> list[tuple[str, int, str | None]]:
        with self.engine.connect() as conn:
            found = conn.execute(
                text("SELECT case_id, sample, worker_id FROM eval_sample WHERE run_id = :r"),
                {"r": run_id},
            )
            return [(c, s, w) for c, s, w in found]

    def status(self, run_id: str) -> str:
        with self.engine.connect() as conn:
            found = conn.execute(text("SELECT status FROM eval_run WHERE id = :r"), {"r": run_id})
            return str(found.scalar_one())

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL the process and its pool children (its own process group)."""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        for f in self.files:
            f.close()
        self.procs, self.files = [], []
        self.engine.dispose()


@pytest.fixture
def cluster(tmp_path: Path, pg_url: str, broker_url: str) -> Iterator[Cluster]:
    c = Cluster(tmp_path, pg_url, broker_url)
    try:
        yield c
    finally:
        c.close()


def _assert_complete(cluster: Cluster, run_id: str, samples: int) -> list[str | None]:
    """Every planned sample stored exactly once; returns the worker of each row."""
    rows = cluster.rows(run_id)
    assert len(rows) == samples  # none counted twice ...
    assert {(c, s) for c, s, _ in rows} == {(SCENARIO, e) for e in range(samples)}  # ... none lost
    assert cluster.status(run_id) == "finished"
    return [w for _, _, w in rows]


def _summary(stdout: str) -> list[str]:
    """The summary lines but the run's id (named on its first line, and a corpus's)."""
    found = re.search(r"^run: (\S+) ", stdout, re.M)
    lines = [line for line in stdout.splitlines() if not line.startswith("run: ")]
    return [line.replace(found.group(1), "RUN") for line in lines] if found else lines


def test_two_workers_share_a_batch_whose_gate_is_the_local_executors(cluster: Cluster) -> None:
    cluster.workers("w1@test", "w2@test")
    args = ["batch", "--scenario", SCENARIO, "--samples", "200", "--agent", "hallucinating"]
    on_workers = cluster.start("celery", *args, "--executor", "celery")
    # the same command line on the local executor, at the same time, in the default store (a
    # SQLite file: PostgreSQL's CPU is the workers' on this small machine)
    alone = {k: v for k, v in cluster.env.items() if k != "AGENTIC_EVAL_DATABASE_URL"}
    local = cluster.start("local", *args, "--executor", "local", "--no-history", env=alone)
    assert on_workers.wait(timeout=120) == 1, cluster.output("celery")
    assert local.wait(timeout=120) == 1, cluster.output("local")
    out, err = cluster.output("celery")
    run_id = re.search(r"^run: (\S+) \(finished\)$", out, re.M)
    assert run_id, out
    workers = _assert_complete(cluster, run_id.group(1), 200)
    assert {w: workers.count(w) for w in set(workers)}.keys() == {"w1@test", "w2@test"}
    assert min(workers.count("w1@test"), workers.count("w2@test")) >= 20, workers
    summary = _summary(out)
    assert summary == _summary(cluster.output("local")[0])  # counts, rate, bound, pass^k, gate
    assert "samples: 200" in summary and "check_failed: 200" in summary
    assert summary[-1].startswith("gate: FAIL (failure rate 200/200 = 100.0% > 1%)")
    assert "batch: 200/200 done, 0 passed, 200 failed" in err  # progress read from the store


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (a prefork worker's pool processes)."""
    found: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_a_killed_worker_loses_no_sample_and_resume_counts_none_twice(cluster: Cluster) -> None:
    w1, _ = cluster.workers("w1@test", "w2@test")
    args = ["batch", "--scenario", SCENARIO, "--samples", str(KILLED), "--executor", "celery"]
    submitter = cluster.start("batch", *args, "--stall-timeout", "3")
    run_id = cluster.run_id("batch", submitter)
    cluster.wait_stored(run_id, 6)
    (pool,) = _children(w1.pid)
    os.kill(pool, signal.SIGKILL)  # w1's pool process, mid-sample: its task goes back to the
    deadline = time.monotonic() + 20  # queue at once (late ack, reject on worker lost)
    while f"pid:{pool} exited with 'signal 9 (SIGKILL)'" not in cluster.output("w1@test")[1]:
        assert time.monotonic() < deadline, "w1 did not see its pool process die"
        time.sleep(0.1)
    # w1's new pool process goes on (unless the batch is done by now: samples got cheaper)
    cluster.wait_stored(run_id, min(len(cluster.rows(run_id)) + 4, KILLED))
    cluster.kill(w1)  # all of w1 (a machine lost): its task waits for the visibility timeout
    code = submitter.wait(timeout=90)
    out, err = cluster.output("batch")
    if code == 2:  # the usual case: the killed worker's sample is missing, the batch stalls
        assert re.search(rf"of {KILLED} planned samples are missing", err), err
        assert f"agentic-eval batch --resume {run_id} --executor celery re-enqueues them" in err
        assert f"run: {run_id} (interrupted)" in out
        missing = KILLED - len(cluster.rows(run_id))
        assert missing == 1  # w1's one unacknowledged task (prefetch 1), not its pool's too
        resumed = cluster.start("resume", "batch", "--resume", run_id, "--executor", "celery")
        assert resumed.wait(timeout=60) == 0, cluster.output("resume")
        out, err = cluster.output("resume")
        assert f"{KILLED - missing} of {KILLED} samples already stored" in err
    else:  # the kill fell after the sample was stored and before it was acknowledged
        assert code == 0, (out, err)
    assert f"samples: {KILLED}" in out and "gate: PASS" in out
    workers = _assert_complete(cluster, run_id, KILLED)
    assert {"w1@test", "w2@test"} == set(workers)


def test_a_killed_submitter_is_resumed_without_a_sample_lost_or_twice(cluster: Cluster) -> None:
    cluster.workers("w1@test", "w2@test")
    args = ["batch", "--scenario", SCENARIO, "--samples", str(KILLED), "--executor", "celery"]
    submitter = cluster.start("batch", *args)
    run_id = cluster.run_id("batch", submitter)
    cluster.wait_stored(run_id, 8)
    cluster.kill(submitter)
    assert cluster.status(run_id) == "running"  # nobody closed it
    resumed = cluster.start("resume", "batch", "--resume", run_id, "--executor", "celery")
    assert resumed.wait(timeout=60) == 0, cluster.output("resume")
    out, err = cluster.output("resume")
    assert re.search(rf"resuming run \S+: \d+ of {KILLED} samples already stored", err), err
    assert f"run: {run_id} (finished)" in out and f"samples: {KILLED}" in out
    assert "gate: PASS" in out
    _assert_complete(cluster, run_id, KILLED)
    time.sleep(1)  # the tasks enqueued twice (queued when the submitter died) are skipped
    assert len(cluster.rows(run_id)) == KILLED


def test_a_worker_on_another_database_fails_the_batch_at_once_naming_it(
    cluster: Cluster, pg_url: str
) -> None:
    import psycopg

    other = f"agentic_eval_other_{os.getpid()}"
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{other}"')  # type: ignore[arg-type]
        conn.execute(f'CREATE DATABASE "{other}"')  # type: ignore[arg-type]
    try:
        cluster.env["AGENTIC_EVAL_DATABASE_URL"] = pg_url.rsplit("/", 1)[0] + f"/{other}"
        cluster.workers("lost@test")  # it cannot see the submitter's runs
        cluster.env["AGENTIC_EVAL_DATABASE_URL"] = pg_url
        args = ["batch", "--scenario", SCENARIO, "--samples", "3", "--executor", "celery"]
        started = time.monotonic()
        submitter = cluster.start("batch", *args)  # the stall timeout (900 s) is not waited for
        assert submitter.wait(timeout=60) == 2  # the run cannot go on: no verdict
        assert time.monotonic() - started < 30
        err = cluster.output("batch")[1].splitlines()[-1]
        assert re.fullmatch(
            r"agentic-eval: error: worker lost@test could not run sample "
            r"synthesize\.missing_revenue(@\d)? of run (\S+): no run \2 in the store \(once "
            r"that is fixed, agentic-eval batch --resume \2 --executor celery runs what is "
            r"missing\)",
            err,
        ), err
    finally:
        cluster.close()
        with psycopg.connect("host=127.0.0.1 user=postgres dbname=test", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{other}" WITH (FORCE)')  # type: ignore[arg-type]


def test_nothing_imports_celery_until_it_is_chosen() -> None:
    code = (
        "import sys; import agentic_eval.workers, agentic_eval.cli.app; "
        "assert 'celery' not in sys.modules, 'celery imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _one_line(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert captured.out == ""
    return code, lines[0]


def _run_count(pg_url: str) -> int:
    """Runs in the module's database (migrated here: under xdist this module's tests are
    shared by processes, each with a database of its own, so no other test may have)."""
    store = Store(pg_url)
    store.migrate()
    store.close()
    engine = create_engine(pg_url)
    with engine.connect() as conn:
        n = int(conn.execute(text("SELECT count(*) FROM eval_run")).scalar_one())
    engine.dispose()
    return n


def test_a_missing_celery_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], pg_url: str
) -> None:
    monkeypatch.setitem(sys.modules, "celery", None)  # `import celery` raises ImportError
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", pg_url)
    monkeypatch.setenv("AGENTIC_EVAL_BROKER_URL", "redis://127.0.0.1:6379/11")
    before = _run_count(pg_url)
    batch = ["batch", "--scenario", SCENARIO, "--executor", "celery"]
    assert _one_line(capsys, *batch) == (2, f"agentic-eval: error: {MISSING_EXTRA}")
    assert _one_line(capsys, "worker") == (2, f"agentic-eval: error: {MISSING_EXTRA}")
    assert _run_count(pg_url) == before  # refused before a run was opened


def test_the_celery_executor_needs_a_shared_database_and_a_broker(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], pg_url: str
) -> None:
    batch = ["batch", "--scenario", SCENARIO, "--executor", "celery"]
    monkeypatch.setenv("AGENTIC_EVAL_BROKER_URL", "redis://127.0.0.1:6379/11")
    for args in (batch, ["worker"], ["batch", "--resume", "some-run", "--executor", "celery"]):
        code, line = _one_line(capsys, *args)
        assert code == 2
        assert line.startswith("agentic-eval: error: the celery executor and its workers need a "
                               "shared database: set AGENTIC_EVAL_DATABASE_URL")  # fmt: skip
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", "sqlite:////tmp/x.db")
    code, line = _one_line(capsys, *batch)
    assert code == 2 and "names a SQLite file" in line
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", pg_url)
    monkeypatch.delenv("AGENTIC_EVAL_BROKER_URL")
    code, line = _one_line(capsys, *batch)
    assert (code, line) == (
        2,
        "agentic-eval: error: the celery executor needs a broker: set AGENTIC_EVAL_BROKER_URL "
        "(e.g. redis://127.0.0.1:6379/0)",
    )
    before = _run_count(pg_url)
    monkeypatch.setenv("AGENTIC_EVAL_BROKER_URL", "redis://:s3cret@127.0.0.1:1/0")
    code, line = _one_line(capsys, *batch)
    assert code == 2 and line.startswith("agentic-eval: error: cannot reach the broker "
                                         "redis://***@127.0.0.1:1/0: "), line  # fmt: skip
    assert "s3cret" not in line
    assert _run_count(pg_url) == before


def test_a_stall_timeout_is_for_the_celery_executor(capsys: pytest.CaptureFixture[str]) -> None:
    assert _one_line(capsys, "batch", "retail_ops", "--stall-timeout", "3") == (
        2,
        "agentic-eval: error: --stall-timeout applies to --executor celery only",
    )


def test_a_workflow_batch_and_its_corpus_give_the_same_verdicts_on_the_workers(
    cluster: Cluster,
) -> None:
    """Issue 19, acceptance 3: whole jobs driven on the workers report what the local executor
    reports, and the corpus they leave, replayed on the workers, judges as it does locally."""
    cluster.workers("w1@test", "w2@test")
    since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    drive = ["workflow", "batch", "--fixture", "acme-widgets-b", "--runs", "6", "--agent",
             "hallucinating", "--no-history"]  # fmt: skip
    outputs: dict[str, list[str]] = {}
    for label, executor in (("wf-celery", "celery"), ("wf-local", "local")):
        proc = cluster.start(label, *drive, "--executor", executor)
        assert proc.wait(timeout=120) == 1, cluster.output(label)
        outputs[label] = _summary(cluster.output(label)[0])
    assert outputs["wf-celery"] == outputs["wf-local"]
    assert "synthesize             18        0       18      0" in outputs["wf-local"]
    replay = ["batch", "--corpus", "--origin", "workflow-batch", "--since", since, "--no-history"]
    for label, executor in (("corpus-celery", "celery"), ("corpus-local", "local")):
        proc = cluster.start(label, *replay, "--executor", executor)
        assert proc.wait(timeout=120) == 0, cluster.output(label)
        outputs[label] = _summary(cluster.output(label)[0])
    assert outputs["corpus-celery"] == outputs["corpus-local"]
    assert outputs["corpus-local"][0].startswith(
        "corpus: 24 case(s) run: 12 approved (judged, 12 samples), 12 rejected (run, not judged, "
        "12 samples)"
    )
    assert outputs["corpus-local"][-1] == "gate: PASS"
