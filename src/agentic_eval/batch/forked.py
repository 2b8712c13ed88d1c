"""Child processes forked from the parent: the local ``--processes`` executor's fast start.

A fresh interpreter (``python -m agentic_eval.batch.child``) spends about half a second on its
imports (pydantic, SQLAlchemy, the domain) and on reading the run's plan before its first
sample; the parent has all of that in memory already, so on Linux a child is forked from it
instead, when that is safe: the parent runs one thread (a lock another thread held at the fork
would stay held in the child for ever), and it holds no database connection across the fork (its
store's pool is emptied first; the child also drops the inherited pool without closing anything,
SQLAlchemy's documented pattern, and opens connections of its own from the job's URL).

What the child inherits is put right before it runs anything: its own process group (the
terminal's Ctrl-C reaches the parent only), SIGINT and SIGTERM blocked across the fork until its
own handlers are installed, no Python signal handler or asyncio wakeup descriptor of the parent's
(a signal to the child must not wake the parent's event loop), stdin and stdout on ``/dev/null``,
stderr on the file the parent reads its error from, and no read end of any report pipe (so a
child whose parent died gets EPIPE rather than filling a pipe no one reads). It never returns
into the parent's stack: :func:`~agentic_eval.batch.child.run_forked` ends with ``os._exit``.
Elsewhere (macOS, other threads running) the parent starts a fresh interpreter as before.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentic_eval.store.db import Store

COMM = "agentic-batch"
"""A forked child's process name (``ps -o comm``; its command line is its parent's)."""

_BLOCKED = {signal.SIGINT, signal.SIGTERM}


def fork_safe() -> bool:
    """Whether a child may be forked from this process: on Linux, with no thread but this one
    (counted by the kernel, so threads started outside Python count too)."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    try:
        threads = sum(1 for _ in Path("/proc/self/task").iterdir())
    except OSError:
        return False
    return threads == 1 and threading.active_count() == 1


class ForkedProcess:
    """A forked child, with the part of :class:`subprocess.Popen`'s interface the parent uses."""

    def __init__(self, pid: int) -> None:
        """Watch the child ``pid`` (this process's own)."""
        self.pid = pid
        self.returncode: int | None = None
        """Its exit status once reaped; minus the signal that killed it, as ``Popen`` has it."""

    def poll(self) -> int | None:
        """Its exit status if it has ended (reaping it), else None."""
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self) -> int:
        """Wait for it to end; its exit status."""
        while self.returncode is None:
            self._reap(0)
        return self.returncode

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped by someone else: its status is lost (Popen says 0)
            self.returncode = 0
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` unless it has been reaped (its pid may be someone else's by now)."""
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM: it stores the samples in flight and exits)."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """Kill it (SIGKILL)."""
        self.send_signal(signal.SIGKILL)


def fork_child(
    job: dict[str, Any], stderr: int, store: Store, close: Iterable[int]
) -> ForkedProcess:
    """Fork a child that runs ``job`` (:func:`~agentic_eval.batch.child.run_forked`) with its
    stderr on the descriptor ``stderr``, after emptying ``store``'s pool; the child closes the
    descriptors ``close`` (the report pipes' read ends) first."""
    store.engine.dispose()  # no connection of this process is open across the fork
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
        with contextlib.suppress(Exception):
            stream.flush()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    if pid == 0:  # the child: never returns
        try:
            asked = _settle(stderr, store, close)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                os.write(2, f"agentic-eval: error: cannot start: {exc}\n".encode())
            os._exit(1)
        from agentic_eval.batch.child import run_forked

        run_forked(job, asked)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    with contextlib.suppress(OSError):  # the child does it too: whichever comes first
        os.setpgid(pid, pid)
    return ForkedProcess(pid)


def _settle(stderr: int, store: Store, close: Iterable[int]) -> dict[str, bool]:
    """In the child, before it runs anything: what it inherited put right (see the module);
    the stop flag its SIGTERM handler sets."""
    from agentic_eval.batch.child import install_signals

    os.setpgid(0, 0)
    signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        handler = signal.getsignal(sig)
        if callable(handler):
            signal.signal(sig, signal.SIG_DFL)
    asked = install_signals()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(stderr, 2)
    os.close(null)
    for fd in close:
        with contextlib.suppress(OSError):
            os.close(fd)
    store.engine.dispose(close=False)  # the inherited pool dropped, nothing in it closed
    gc.freeze()  # the parent's heap: never scanned here (nor its pages copied by the GC)
    with contextlib.suppress(OSError):
        Path("/proc/self/comm").write_text(COMM)
    return asked
