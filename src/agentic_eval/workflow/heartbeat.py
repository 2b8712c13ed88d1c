"""Claims are leases: how long one lasts, who holds it, and the thread that keeps it renewed.

A claim's lease runs for :func:`lease_seconds` from its claim and from every renewal. While a
:class:`~agentic_eval.workflow.Workflow` holds a claim (from ``claim_step`` until the attempt is
finished, interrupted or lost), a :class:`Heartbeat` daemon thread renews it every third of the
lease, so a claim outlives its process by at most one lease: a process that stops (SIGKILL, a
crash, a lost machine) stops renewing, and the next operation that meets the claim after expiry
releases it. A thread rather than an asyncio task: an agent that blocks the event loop (a local
model computing in-process, a slow synchronous tool) still renews its claim.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from collections.abc import Callable, Iterable

from agentic_eval.workflow.errors import WorkflowError

LEASE_ENV = "AGENTIC_EVAL_CLAIM_LEASE"
"""Environment variable: the claim lease in seconds (a number > 0)."""
DEFAULT_LEASE_SECONDS = 120.0
"""How long a claim survives its holder's last renewal by default."""
MAX_LEASE_SECONDS = 7 * 24 * 3600.0
"""The longest lease (a week): longer would outlive any process and overflow date arithmetic."""
MIN_LEASE_SECONDS = 0.1
"""The shortest lease a caller may pass (tests); renewals come every third of it."""
MIN_ENV_LEASE_SECONDS = 1.0
"""The shortest lease ``$AGENTIC_EVAL_CLAIM_LEASE`` may set: below it a busy machine could miss
a renewal and lose a live claim."""

Renew = Callable[[tuple[str, ...]], Iterable[str]]
"""Renews the leases of these claim ids; returns the ids that are no longer live (lost)."""


def lease_seconds(value: float | None = None) -> float:
    """The lease length: ``value`` if given, else ``$AGENTIC_EVAL_CLAIM_LEASE``, else 120 s.

    Raises:
        WorkflowError: the value is not a finite number of seconds above 0.
    """
    where = "the claim lease"
    if value is None:
        raw = os.environ.get(LEASE_ENV, "").strip()
        if not raw:
            return DEFAULT_LEASE_SECONDS
        where = f"{LEASE_ENV}={raw!r}"
        try:
            value = float(raw)
        except ValueError:
            raise WorkflowError(f"{where} is not a number of seconds") from None
    low = MIN_ENV_LEASE_SECONDS if where != "the claim lease" else MIN_LEASE_SECONDS
    if not math.isfinite(value) or not low <= value <= MAX_LEASE_SECONDS:
        raise WorkflowError(
            f"{where} must be a number of seconds from {low:g} to {MAX_LEASE_SECONDS:g} "
            f"(a week), not {value}"
        )
    return float(value)


class Heartbeat:
    """The claims one workflow object holds, renewed from a daemon thread every ``interval``.

    The thread starts with the first held claim and ends when none is left (or when the workflow
    object is gone: it holds only a weak reference to ``renew``'s owner). A renewal that fails
    (the database is unreachable for a moment) is kept in :attr:`errors` and retried at the next
    beat; the lease is long enough for a few misses.
    """

    def __init__(self, renew: Renew, interval: float, *, beat: bool = True) -> None:
        self._renew = weakref.WeakMethod(renew)
        self.interval = interval
        self.beat = beat
        """False: the claims are only tracked (for an interruption), never renewed."""
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost: list[str] = []
        """Claim ids found released by someone else while held (their lease had expired)."""
        self.errors: list[str] = []
        """Renewals that failed, newest last (at most 20 kept)."""
        self.beats = 0
        """How many renewals have been made (for tests and diagnostics)."""

    def held(self) -> tuple[str, ...]:
        """The claim ids being renewed, in no particular order."""
        with self._lock:
            return tuple(self._held)

    def hold(self, claim_id: str) -> None:
        """Renew ``claim_id`` from now on (starting the thread if it is not running)."""
        with self._lock:
            self._held.add(claim_id)
            if self._thread is None and self.beat:
                self._thread = threading.Thread(
                    target=self._run, name="agentic-eval claim heartbeat", daemon=True
                )
                self._thread.start()

    def drop(self, *claim_ids: str) -> None:
        """Stop renewing these claims (finished, released, or lost)."""
        with self._lock:
            self._held.difference_update(claim_ids)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop renewing every claim and end the thread, waiting up to ``timeout`` seconds for
        a renewal in flight (the claims stay as they are: they expire one lease later)."""
        with self._lock:
            self._held.clear()
            thread = self._thread
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            with self._lock:
                self._wake.clear()  # woken by stop(): still renew what was held again since
                ids = tuple(self._held)
                renew = self._renew()
                if not ids or renew is None:
                    self._thread = None
                    return
            try:
                gone = set(renew(ids))
            except Exception as exc:  # never let a beat kill the thread: retry at the next
                self.errors = [*self.errors[-19:], f"{type(exc).__name__}: {exc}"]
                continue
            finally:
                del renew
            self.beats += 1
            if gone:
                with self._lock:
                    gone &= self._held  # not those finished while this beat ran
                    self._held.difference_update(gone)
                self.lost.extend(sorted(gone))
