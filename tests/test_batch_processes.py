"""The local executor on several processes (`batch --processes N`, `run_agent_batch(processes=)`).

The children rebuild the run from its stored plan and write to the same store; the parent reads
the gate back from the rows. Same plan, same verdict and scorecard as one process; every planned
sample stored once; a stopped or killed child loses only what it had not stored, and `--resume`
runs the rest.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event, select

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import RunPlan, SampleKey, open_run, processes, run_agent_batch
from agentic_eval.batch import forked as forked_module
from agentic_eval.batch.finish import finish_plan, stored_runs
from agentic_eval.batch.forked import COMM
from agentic_eval.batch.processes import ProcessFailed, run_on_processes, shards
from agentic_eval.cli.main import main
from agentic_eval.core.aio import run
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains import get_domain
from agentic_eval.store import Store
from agentic_eval.store.models import EvalSample

CASES = [c.id for c in get_domain("retail_ops").load_cases()]


def _plan(epochs: int, agent: str = "reference") -> RunPlan:
    return RunPlan(
        suite="retail_ops",
        keys=tuple(SampleKey(case=c, epoch=e) for c in CASES for e in range(epochs)),
        backend=BackendSpec(kind="scripted", agent=agent),
        model=f"scripted:{agent}",
        parameters=RunParameters(),
    )


@pytest.fixture(params=["fork", "spawn"])
def start(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the children start: forked from this process (forced: pytest-xdist's worker runs a
    thread of its own, so the executor would not fork here by itself), or fresh interpreters."""
    monkeypatch.setattr(processes, "fork_safe", lambda: request.param == "fork")
    return str(request.param)


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path}/store.db")
    s.migrate()
    yield s
    s.close()


def _rows(store: Store, run_id: str) -> list[tuple[str, int, int, str | None]]:
    cols = (EvalSample.case_id, EvalSample.sample, EvalSample.attempt, EvalSample.worker_id)
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(*cols).where(EvalSample.run_id == run_id))]  # type: ignore[misc]


def _results(store: Store, run_id: str) -> list[str]:
    """Every stored sample's whole result (checks included), as JSON, in case/sample order."""
    return [r.result.model_dump_json() for r in stored_runs(store, run_id)]


def test_shards_deal_every_key_once_round_robin() -> None:
    keys = list(_plan(3).keys)
    dealt = shards(keys, 4)
    assert sorted((k for s in dealt for k in s), key=keys.index) == keys
    assert [len(s) for s in dealt] == [len(keys[i::4]) for i in range(4)]
    assert shards(keys[:2], 5) == [[keys[0]], [keys[1]]]  # no empty shard, no idle child


@pytest.mark.parametrize("agent", ["reference", "naive"])
@pytest.mark.usefixtures("start")
def test_two_processes_give_the_verdict_and_results_of_one(store: Store, agent: str) -> None:
    plan = _plan(2, agent)
    one = run(run_agent_batch(store, plan))
    two = run(run_agent_batch(store, plan, processes=2))
    assert two.gate == one.gate and two.counts == one.counts
    assert two.samples == len(plan.keys)
    assert _results(store, two.run_id) == _results(store, one.run_id)
    rows = _rows(store, two.run_id)
    assert sorted((c, s, a) for c, s, a, _ in rows) == sorted(
        (k.case, k.epoch, k.attempt) for k in plan.keys
    )
    assert {w for *_, w in rows} == {"process-1", "process-2"}


@pytest.mark.usefixtures("start")
def test_a_child_that_fails_is_reported_in_one_line(store: Store, tmp_path: Path) -> None:
    plan = _plan(1)
    run_id = open_run(store, plan)
    empty = Store(f"sqlite:///{tmp_path}/empty.db")
    empty.migrate()
    empty.close()
    store.url = f"sqlite:///{tmp_path}/empty.db"  # the children open a store without the run
    with pytest.raises(ProcessFailed) as err:
        run(run_on_processes(store, run_id, 2))
    message = str(err.value)
    assert "\n" not in message
    assert f"BatchError: no run {run_id} in the store" in message
    assert f"agentic-eval batch --resume {run_id}" in message


def test_a_malformed_job_is_one_line_and_exit_1() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_eval.batch.child"],
        input=b"{not json",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("agentic-eval: error: bad job on stdin:")


@pytest.mark.usefixtures("start")
def test_stopped_children_store_what_they_ran_and_resume_finishes(store: Store) -> None:
    plan = _plan(60)  # 2,040 samples: stopped long before the end
    run_id = open_run(store, plan)
    seen: list[int] = []

    def progress(new: dict[str, int]) -> None:
        seen.append(sum(new.values()))

    first = run(
        run_on_processes(store, run_id, 2, on_progress=progress, should_stop=lambda: bool(seen))
    )
    assert not first.complete
    stored = _rows(store, run_id)
    assert 0 < len(stored) < len(plan.keys)
    second = run(run_on_processes(store, run_id, 2))
    assert second.complete
    rows = _rows(store, run_id)
    assert len(rows) == len(plan.keys) == len({(c, s, a) for c, s, a, _ in rows})
    finished = finish_plan(store, run_id, [], stopped=False)
    assert len(finished.scorecard.cases) == len(plan.keys)


def _children(parent: int) -> list[int]:
    """The batch children of ``parent``: forked (named so) or fresh interpreters.

    Read from /proc, not from ``ps``: ps cuts its last column to 80 characters when its output is
    a pipe, and a long virtualenv path pushed ``agentic_eval.batch.child`` out of it in CI."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # gone meanwhile
            continue
        comm, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        ours = comm == COMM or "agentic_eval.batch.child" in cmdline
        if ours and int(rest.split()[1]) == parent:
            found.append(int(entry.name))
    return sorted(found)


def test_sigkill_of_a_child_then_resume_loses_and_doubles_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTIC_EVAL_DATABASE_URL": f"sqlite:///{tmp_path}/store.db",
           "AGENTIC_EVAL_HOME": str(tmp_path / "home")}  # fmt: skip
    exe = Path(sys.executable).parent / "agentic-eval"
    args = [str(exe), "batch", "retail_ops", "--samples", "150", "--processes", "2", "--no-history"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    store = Store(env["AGENTIC_EVAL_DATABASE_URL"])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until the children have stored something
            kids = _children(proc.pid)
            if len(kids) == 2 and _count(store) > 0:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the children stored nothing")
        os.kill(kids[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    line = err.decode().strip().splitlines()[-1]
    assert proc.returncode == 2  # no verdict: a child died (CannotRun)
    assert "stopped before its samples were stored: killed by signal 9" in line
    run_id = line.split(" of run ")[1].split()[0]
    before = _count(store)
    assert 0 < before < 150 * len(CASES)
    resumed = subprocess.run(
        [str(exe), "batch", "--resume", run_id, "--processes", "2"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming run {run_id}: {before} of {150 * len(CASES)}" in resumed.stderr
    assert "gate: PASS" in resumed.stdout
    rows = _rows(store, run_id)
    assert len(rows) == 150 * len(CASES) == len({(c, s, a) for c, s, a, _ in rows})
    store.close()


def _count(store: Store) -> int:
    try:
        with store.engine.connect() as conn:
            return len(list(conn.execute(select(EvalSample.id))))
    except Exception:  # the tables are not there yet
        return 0


def test_cli_processes_prints_the_same_summary_as_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", f"sqlite:///{tmp_path}/store.db")
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    args = ["batch", "retail_ops", "--agent", "naive", "--samples", "2", "--no-history"]
    assert main(args) == 1
    one = capsys.readouterr().out.splitlines()[1:]  # after the run id
    assert main([*args, "--processes", "2"]) == 1
    two = capsys.readouterr().out.splitlines()[1:]
    assert two == one
    assert one[-1].startswith("gate: FAIL") and "check_failed: 0" not in one


def test_processes_with_celery_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["batch", "retail_ops", "--executor", "celery", "--processes", "2"]) == 2
    assert "--processes applies to --executor local" in capsys.readouterr().err


@pytest.mark.usefixtures("start")
def test_a_child_stopped_by_someone_else_fails_the_wait(store: Store) -> None:
    """SIGTERM from outside (not this process): the child stores what is in flight and exits 0
    without its shard; the wait must not go on for ever."""
    plan = _plan(60)
    run_id = open_run(store, plan)
    sent: list[int] = []

    def progress(new: dict[str, int]) -> None:
        if not sent:
            kids = _children(os.getpid())
            os.kill(kids[0], signal.SIGTERM)
            sent.append(kids[0])

    with pytest.raises(ProcessFailed, match=r"exited with \d+ of its samples not run"):
        run(asyncio.wait_for(run_on_processes(store, run_id, 2, on_progress=progress), 120))
    assert sent and _children(os.getpid()) == []
    assert 0 < len(_rows(store, run_id)) < len(plan.keys)


def test_a_cancelled_stop_kills_the_children_that_ignore_it() -> None:
    """A second Ctrl-C cancels the wait for the children: none may outlive it."""
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    children = [
        processes._Child(
            f"p{i}",
            subprocess.Popen([sys.executable, "-c", stubborn]),
            tempfile.TemporaryFile(),  # noqa: SIM115 (closed at the end)
            [],
        )
        for i in range(2)
    ]
    time.sleep(0.5)  # both have installed their handler

    async def stop_then_cancel() -> None:
        task = asyncio.create_task(processes._stop(children, terminate=True))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(stop_then_cancel())
    assert [c.proc.poll() for c in children] == [-signal.SIGKILL, -signal.SIGKILL]
    for c in children:
        c.stderr.close()


# -- forked children --------------------------------------------------------------------------


def test_a_forked_child_uses_none_of_the_parents_connections(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every connection the parent's engine hands out is handed out in the parent: the children
    open their own, and the parent's store still works after them."""
    monkeypatch.setattr(processes, "fork_safe", lambda: True)
    forked: list[int] = []
    real = processes.fork_child

    def counting(*args: object, **kwargs: object) -> forked_module.ForkedProcess:
        child = real(*args, **kwargs)  # type: ignore[arg-type]
        forked.append(child.pid)
        return child

    monkeypatch.setattr(processes, "fork_child", counting)
    pooled: list[int] = []
    fork = os.fork

    def fork_noting_the_pool() -> int:
        pooled.append(store.engine.pool.checkedin())  # type: ignore[attr-defined]
        return fork()

    monkeypatch.setattr(forked_module.os, "fork", fork_noting_the_pool)
    pids = tmp_path / "pids"

    def note(*_: object) -> None:
        with pids.open("a") as f:
            f.write(f"{os.getpid()}\n")

    run_id = open_run(store, _plan(2))
    store.gate_counts(run_id)  # the parent's pool holds a connection when the children fork
    event.listen(store.engine, "connect", note)
    event.listen(store.engine, "checkout", note)
    assert run(run_on_processes(store, run_id, 2)).complete
    assert len(forked) == 2 and pooled == [0, 0]  # no open connection crossed a fork
    assert set(pids.read_text().split()) == {str(os.getpid())}  # the parent's own use only
    assert len(_rows(store, run_id)) == len(_plan(2).keys)


def test_forked_children_ignore_sigint(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal's Ctrl-C is the parent's to decide on: a child given SIGINT runs on."""
    monkeypatch.setattr(processes, "fork_safe", lambda: True)
    plan = _plan(20)
    run_id = open_run(store, plan)
    sent: list[int] = []

    def progress(new: dict[str, int]) -> None:
        del new
        if not sent:
            sent.extend(_children(os.getpid()))
            for pid in sent:
                os.kill(pid, signal.SIGINT)

    done = run(asyncio.wait_for(run_on_processes(store, run_id, 2, on_progress=progress), 120))
    assert done.complete and len(sent) == 2
    assert len(_rows(store, run_id)) == len(plan.keys)


def test_fork_only_while_this_process_runs_one_thread() -> None:
    started, stop = threading.Event(), threading.Event()

    def wait() -> None:
        started.set()
        stop.wait(30)

    thread = threading.Thread(target=wait)
    thread.start()
    try:
        started.wait(30)
        assert not forked_module.fork_safe()  # a lock it holds would stay held in a child
    finally:
        stop.set()
        thread.join()
    probe = "from agentic_eval.batch.forked import fork_safe; print(fork_safe())"
    alone = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert alone.stdout.strip() == str(sys.platform == "linux")


def test_rows_read_back_while_the_children_run_are_every_row_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent reads the children's rows as they store them; with the rows of an earlier,
    resumed run (one of the same worker name, one of none) they are every row, once."""
    from agentic_eval.batch.readback import ShardRows
    from agentic_eval.batch.run import run_samples

    plan = _plan(30)
    run_id = open_run(store, plan)
    run(run_samples(store, run_id, keys=list(plan.keys)[:40], worker="process-1"))
    run(run_samples(store, run_id, keys=list(plan.keys)[40:60]))
    monkeypatch.setattr(processes, "CATCH_UP_ROWS", 100)
    caught: list[int] = []
    catch_up = ShardRows.catch_up

    def counting(self: ShardRows, s: Store) -> None:
        caught.append(1)
        catch_up(self, s)

    monkeypatch.setattr(ShardRows, "catch_up", counting)
    ran = run(run_on_processes(store, run_id, 2))
    assert ran.complete and ran.read is not None
    runs = ran.read.every_run(store)
    assert ran.read.every_run(store) == runs  # read again: the same, nothing twice
    assert len(caught) > 2  # read while they ran, then what was left
    assert [r.result.model_dump_json() for r in runs] == _results(store, run_id)
    assert [(r.result.case_id, r.result.sample) for r in runs] == sorted(
        (k.case, k.epoch) for k in plan.keys
    )
    finished = finish_plan(store, run_id, [], read=ran.read)
    again = finish_plan(store, run_id, []).scorecard
    assert finished.scorecard == again
