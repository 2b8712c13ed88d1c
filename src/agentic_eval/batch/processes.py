"""The local executor on several processes: one event loop cannot keep a 2-core machine busy.

:func:`run_on_processes` splits the run's missing samples into ``processes`` shards (round
robin over the plan, so every shard gets a share of each case) and starts one child process per
shard. On Linux, while this process runs one thread, a child is forked from it
(:mod:`agentic_eval.batch.forked`: everything imported is there already, and nothing of this
process's connections, event loop or signal handling is used by the child); elsewhere it is
``python -m agentic_eval.batch.child``, a fresh interpreter (the caller's main module is not
imported again). Either way the child opens the same store, rebuilds the run from its stored plan
and runs its shard with :func:`~agentic_eval.batch.run.run_samples`, as a Celery worker does.
Each child says on a pipe of its own what every batch of rows it committed held (by outcome):
that is the progress this process shows, so it does not count the run's rows at every poll
(that cost this process as much CPU as a sixth of a child's). Every :data:`CATCH_UP_ROWS` rows
they report, this process checkpoints a SQLite store's log (the children leave that to it) and
reads their new rows back (what finishing the run needs). When a child ends, the store says
whether its whole shard is there; the counts and the gate are read back from the rows, so a
child that died loses only what it had not stored
(``--resume`` runs that).

Stopping: the children run in a process group of their own, so the terminal's Ctrl-C reaches
this process only (and they ignore SIGINT besides); this process decides. When asked to stop, it
sends each child SIGTERM, upon which the child starts no new sample, stores those in flight and
exits; a second Ctrl-C kills them. A child whose parent is gone (this process killed) stops the
same way. A child that ends without its shard stored, whatever its exit status, fails the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from agentic_eval.batch.child import ERROR
from agentic_eval.batch.forked import fork_child, fork_safe
from agentic_eval.batch.plan import SampleKey
from agentic_eval.batch.readback import ShardRows
from agentic_eval.batch.run import BatchError
from agentic_eval.batch.watch import OUTCOMES, missing_keys
from agentic_eval.core.text import one_line
from agentic_eval.evaluation.session import HEARTBEAT_SECONDS, frozen_heap
from agentic_eval.store.db import Store
from agentic_eval.store.wal import checkpoint

JOIN_SECONDS = 30.0
"""How long a stopped child may take to store its samples in flight before it is killed."""

CATCH_UP_ROWS = 1000
"""Rows the children store between two catch-ups of this process: a checkpoint of a SQLite
store's log (:mod:`agentic_eval.store.wal`; about what SQLite's own 1,000-page threshold lets
through), then their new rows read back (:class:`~agentic_eval.batch.readback.ShardRows`)."""


class ProcessFailed(BatchError):
    """A child process ended before its shard was stored."""


@dataclass(frozen=True)
class ProcessesRun:
    """How waiting for the child processes ended."""

    complete: bool
    """Every planned sample is stored (False: stopped by ``should_stop``)."""
    stored: int
    """Samples stored while this call waited."""
    processes: int
    """Child processes started (0: nothing was missing)."""
    read: ShardRows | None = None
    """The children's rows read back as they stored them (for finishing the run)."""


def shards(keys: list[SampleKey], n: int) -> list[list[SampleKey]]:
    """``keys`` dealt round robin into at most ``n`` non-empty shards, each in plan order."""
    dealt: list[list[SampleKey]] = [keys[i::n] for i in range(n)]
    return [s for s in dealt if s]


class _Process(Protocol):
    """A child process as this module uses it (``subprocess.Popen``, or a forked child)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


@dataclass
class _Child:
    name: str
    proc: _Process
    stderr: IO[bytes]
    shard: list[SampleKey]
    done: bool = False
    """Ended with its whole shard stored (so it is not asked again)."""
    reports: int | None = None
    """The read end of the pipe on which the child reports each batch of rows it stored."""
    partial: bytes = field(default=b"")
    """The start of a report line not read whole yet."""

    def stored(self) -> dict[str, int]:
        """The samples the child reported stored since the last call, by outcome."""
        new = dict.fromkeys(OUTCOMES, 0)
        if self.reports is None:
            return new
        chunks = [self.partial]
        while True:
            try:
                chunk = os.read(self.reports, 65536)
            except BlockingIOError:
                break
            if not chunk:  # the child closed it (it ended)
                os.close(self.reports)
                self.reports = None
                break
            chunks.append(chunk)
        *lines, self.partial = b"".join(chunks).split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                for outcome, n in json.loads(line).items():
                    if outcome in new:
                        new[outcome] += int(n)
        return new

    def close(self) -> None:
        """Close what this process holds of the child (its stderr file, its report pipe)."""
        self.stderr.close()
        if self.reports is not None:
            os.close(self.reports)
            self.reports = None

    def ended(self, store: Store, run_id: str) -> str | None:
        """Why the child ended without its shard, or None while it runs or when it ended with
        its whole shard stored (a child stopped by someone else's SIGTERM exits 0 without it)."""
        code = self.proc.poll()
        if code is None or self.done:
            return None
        if code == 0:
            asked = [(k.case, k.epoch, k.attempt) for k in self.shard]
            missing = len(set(asked) - store.stored_keys(run_id, asked))
            self.done = not missing
            return f"exited with {missing} of its samples not run" if missing else None
        self.stderr.seek(0)
        lines = self.stderr.read().decode(errors="replace").splitlines()
        said = [ln for ln in lines if ln.startswith(ERROR)]
        if said:  # its own one-line error, whatever the interpreter printed after it
            return said[-1].removeprefix(ERROR)
        if code < 0:
            return f"killed by signal {-code}"
        last = [ln for ln in lines if ln.strip()]
        return f"exited with status {code}" + (f": {one_line(last[-1])}" if last else "")


def _start(
    store: Store, run_id: str, shard: list[SampleKey], name: str, started: list[_Child]
) -> _Child:
    read, write = os.pipe()
    # each key as model_dump(mode="json") writes it, built directly (a sixth of the time)
    keys = [{"case": k.case, "epoch": k.epoch, "attempt": k.attempt} for k in shard]
    job: dict[str, Any] = {
        "url": store.url, "run_id": run_id, "worker": name, "parent": os.getpid(),
        "report_fd": write, "migrated": True,  # the run is open: its store is migrated
        "keys": keys,
    }  # fmt: skip
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by run_on_processes)
    try:
        if fork_safe():  # the job in memory; the other children's report pipes are not its own
            reads = [read, *(c.reports for c in started if c.reports is not None)]
            proc: _Process = fork_child(job, stderr.fileno(), store, reads)
        else:
            proc = _spawn(job, stderr, write)
    except BaseException:
        stderr.close()
        os.close(read)
        raise
    finally:
        os.close(write)  # the child's now: the pipe ends when the child does
    os.set_blocking(read, False)
    return _Child(name, proc, stderr, shard, reports=read)


def _spawn(job: dict[str, Any], stderr: IO[bytes], report: int) -> subprocess.Popen[bytes]:
    """``python -m agentic_eval.batch.child``, its job on stdin."""
    # the job from a file, not a pipe: a job larger than a pipe holds would keep this process
    # waiting for the child's imports before it could start the next child
    with tempfile.TemporaryFile() as stdin:
        stdin.write(json.dumps(job).encode())
        stdin.seek(0)
        return subprocess.Popen(
            [sys.executable, "-m", "agentic_eval.batch.child"],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            pass_fds=(report,),
            process_group=0,  # the terminal's Ctrl-C reaches this process only: it decides
        )


async def run_on_processes(
    store: Store,
    run_id: str,
    processes: int,
    *,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    poll_seconds: float = 0.1,
    worker_prefix: str = "process",
) -> ProcessesRun:
    """Run the run's missing samples in ``processes`` child processes and wait until they are
    all stored (or ``should_stop()``: the children are told to stop and waited for). The run
    is not closed: :func:`agentic_eval.batch.close_run` reads its gate. This process wakes
    when a child reports or ends, and at least every ``poll_seconds``.

    Raises:
        BatchError: No such run, or no valid plan on it.
        ProcessFailed: A child ended before its shard was stored (its error, or its signal);
            the samples stored so far stay, ``--resume`` runs the rest.
    """
    if processes < 1:
        raise BatchError(f"processes must be at least 1, not {processes}")
    with frozen_heap():  # the plan's keys read again: no full collection of this whole heap
        _, keys = missing_keys(store, run_id)
    if not keys:
        return ProcessesRun(True, 0, 0)
    children: list[_Child] = []
    complete = False
    dealt = shards(keys, processes)
    read = ShardRows(run_id, [f"{worker_prefix}-{i}" for i in range(1, len(dealt) + 1)])
    try:
        for i, shard in enumerate(dealt, start=1):
            children.append(_start(store, run_id, shard, f"{worker_prefix}-{i}", children))
        complete = await _wait(store, children, read, on_progress, should_stop, poll_seconds)
        if complete:  # each exits once its shard is stored; one slow to exit is not a failure
            await _stop(children, terminate=False)
    finally:
        await _stop(children, terminate=True)
        for child in children:
            child.close()
    stored = len(keys) if complete else len(keys) - len(missing_keys(store, run_id)[1])
    return ProcessesRun(complete, stored, len(children), read)


async def _wait(
    store: Store,
    children: list[_Child],
    read: ShardRows,
    on_progress: Callable[[dict[str, int]], None] | None,
    should_stop: Callable[[], bool] | None,
    poll_seconds: float,
) -> bool:
    """Wait until every child has ended with its shard stored (True) or ``should_stop()``
    says so (False), passing on what they report storing and reading their rows back into
    ``read`` as they come (what finishing the run would otherwise read after them).

    Raises:
        ProcessFailed: A child ended before its shard was stored.
    """
    run_id = read.run_id
    last_beat = time.monotonic()
    unread = 0
    while True:
        new = dict.fromkeys(OUTCOMES, 0)
        for child in children:
            for outcome, n in child.stored().items():
                new[outcome] += n
        if on_progress is not None and any(new.values()):
            on_progress(new)
        unread += sum(new.values())
        if unread >= CATCH_UP_ROWS:
            unread = 0
            with contextlib.suppress(Exception):  # a later one, or the finish's, catches up
                checkpoint(store.engine)  # the children leave SQLite's checkpoints to this one
            with contextlib.suppress(Exception):  # the same: the finish reads what is left
                read.catch_up(store)
        for child in children:
            why = child.ended(store, run_id)
            if why is not None:
                raise ProcessFailed(
                    f"{child.name} of run {run_id} stopped before its samples were stored: "
                    f"{why} (agentic-eval batch --resume {run_id} runs what is missing)"
                )
        if all(child.done for child in children):
            return True
        if should_stop is not None and should_stop():
            return False
        now = time.monotonic()
        if now - last_beat >= HEARTBEAT_SECONDS:  # the submitter is alive: not abandoned
            with contextlib.suppress(Exception):
                store.heartbeat(run_id)
            last_beat = now
        # a child whose pipe closed is ending: look again shortly (it is reaped in moments)
        ending = any(c.reports is None and not c.done for c in children)
        await _reported([c.reports for c in children], 0.005 if ending else poll_seconds)


async def _reported(fds: list[int | None], timeout: float) -> None:
    """Wait until one of the report pipes has something to read (a report, or its end: the
    child exited), or ``timeout`` seconds: a child that ends is seen when it ends, not at the
    next poll."""
    loop = asyncio.get_running_loop()
    woke: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not woke.done():
            woke.set_result(None)

    watched = [fd for fd in fds if fd is not None]
    for fd in watched:
        loop.add_reader(fd, wake)
    try:
        await asyncio.wait_for(woke, timeout)
    except TimeoutError:
        pass
    finally:
        for fd in watched:
            loop.remove_reader(fd)


async def _stop(children: list[_Child], *, terminate: bool) -> None:
    """Wait for every child to end, first asking those running to stop when ``terminate``
    (SIGTERM: it stores what is in flight); kill one that does not end in
    :data:`JOIN_SECONDS`, and every one still running if this wait is itself cancelled (a
    second Ctrl-C): no child outlives the call."""
    try:
        for child in children:
            if terminate and child.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.proc.terminate()
        deadline = time.monotonic() + JOIN_SECONDS
        for child in children:
            while child.proc.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
    finally:
        for child in children:
            if child.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.proc.kill()
                child.proc.wait()
