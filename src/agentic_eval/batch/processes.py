"""The local executor on several processes: one event loop cannot keep a 2-core machine busy.

:func:`run_on_processes` splits the run's missing samples into ``processes`` shards (round
robin over the plan, so every shard gets a share of each case) and starts one child process per
shard: ``python -m agentic_eval.batch.child``, a fresh interpreter (nothing of this process's
connections, event loop or threads is carried over, and the caller's main module is not
imported again) that opens the same store, rebuilds the run from its stored plan and runs its
shard with :func:`~agentic_eval.batch.run.run_samples`, as a Celery worker does. This process only
watches the store (:func:`~agentic_eval.batch.watch.wait_for_samples`): the counts and the gate
are read back from the rows, so a sample a child stored counts, and a child that died loses
only what it had not stored (``--resume`` runs that).

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
from dataclasses import dataclass
from typing import IO

from agentic_eval.batch.plan import SampleKey
from agentic_eval.batch.run import BatchError
from agentic_eval.batch.watch import missing_keys, wait_for_samples
from agentic_eval.core.text import one_line
from agentic_eval.store.db import Store

JOIN_SECONDS = 30.0
"""How long a stopped child may take to store its samples in flight before it is killed."""


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


def shards(keys: list[SampleKey], n: int) -> list[list[SampleKey]]:
    """``keys`` dealt round robin into at most ``n`` non-empty shards, each in plan order."""
    dealt: list[list[SampleKey]] = [keys[i::n] for i in range(n)]
    return [s for s in dealt if s]


@dataclass
class _Child:
    name: str
    proc: subprocess.Popen[bytes]
    stderr: IO[bytes]
    shard: list[SampleKey]
    done: bool = False
    """Ended with its whole shard stored (so it is not asked again)."""

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
        said = [ln for ln in lines if ln.startswith(_ERROR)]
        if said:  # its own one-line error, whatever the interpreter printed after it
            return said[-1].removeprefix(_ERROR)
        if code < 0:
            return f"killed by signal {-code}"
        last = [ln for ln in lines if ln.strip()]
        return f"exited with status {code}" + (f": {one_line(last[-1])}" if last else "")


_ERROR = "agentic-eval: error: "


def _start(store: Store, run_id: str, shard: list[SampleKey], name: str) -> _Child:
    job = {"url": store.url, "run_id": run_id, "worker": name, "parent": os.getpid(),
           "keys": [k.model_dump(mode="json") for k in shard]}  # fmt: skip
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by run_on_processes)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentic_eval.batch.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            process_group=0,  # the terminal's Ctrl-C reaches this process only: it decides
        )
    except BaseException:
        stderr.close()
        raise
    child = _Child(name, proc, stderr, shard)
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except BrokenPipeError:  # it died before reading its job: ended() says why
        pass
    return child


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
    is not closed: :func:`agentic_eval.batch.close_run` reads its gate.

    Raises:
        BatchError: No such run, or no valid plan on it.
        ProcessFailed: A child ended before its shard was stored (its error, or its signal);
            the samples stored so far stay, ``--resume`` runs the rest.
    """
    if processes < 1:
        raise BatchError(f"processes must be at least 1, not {processes}")
    _, keys = missing_keys(store, run_id)
    if not keys:
        return ProcessesRun(True, 0, 0)
    children: list[_Child] = []

    def check() -> None:
        for child in children:
            why = child.ended(store, run_id)
            if why is not None:
                raise ProcessFailed(
                    f"{child.name} of run {run_id} stopped before its samples were stored: "
                    f"{why} (agentic-eval batch --resume {run_id} runs what is missing)"
                )

    complete, stored = False, 0
    try:
        for i, shard in enumerate(shards(keys, processes), start=1):
            children.append(_start(store, run_id, shard, f"{worker_prefix}-{i}"))
        complete, stored = await wait_for_samples(
            store, run_id, on_progress=on_progress, should_stop=should_stop,
            poll_seconds=poll_seconds, check=check,
        )  # fmt: skip
        if complete:  # each exits once its shard is stored; one slow to exit is not a failure
            await _stop(children, terminate=False)
    finally:
        await _stop(children, terminate=True)
        for child in children:
            child.stderr.close()
    return ProcessesRun(complete, stored, len(children))


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
