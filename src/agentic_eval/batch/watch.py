"""Watch the store until every planned sample of a run is stored, whoever runs them.

Samples run in other processes (the local executor's ``--processes``, Celery workers) reach
the submitting process only as rows: :func:`wait_for_samples` polls the store with a cheap
count query, reports what was newly stored, moves the run's heartbeat, and gives up when
nothing new arrives for the stall timeout. The counts and the gate are read back from the store
afterwards, never from what the processes return.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping

from agentic_eval.batch.plan import RunPlan, SampleKey
from agentic_eval.batch.run import BatchError, plan_of
from agentic_eval.evaluation.session import HEARTBEAT_SECONDS
from agentic_eval.store.db import Store

OUTCOMES: tuple[str, ...] = ("passed", "check_failed", "error", "transient")


class Stalled(BatchError):
    """No sample was stored for the stall timeout while some are still missing."""

    def __init__(
        self, run_id: str, missing: int, planned: int, seconds: float, waiting_on: str, resume: str
    ):
        self.run_id, self.missing, self.planned = run_id, missing, planned
        super().__init__(
            f"no sample of run {run_id} was stored for {seconds:g} s: {missing} of {planned} "
            f"planned samples are missing ({waiting_on}); {resume}"
        )


def missing_keys(store: Store, run_id: str) -> tuple[RunPlan, list[SampleKey]]:
    """The run's plan and its planned samples that the store does not hold, in plan order.

    Raises:
        BatchError: No such run, or no valid plan on it.
    """
    run = store.run(run_id)
    if run is None:
        raise BatchError(f"no run {run_id} in the store")
    plan = plan_of(run)
    held = _held(store, run_id)
    return plan, [k for k in plan.keys if _key(k) not in held]


def _stored(counts: Mapping[str, int]) -> int:
    return sum(counts.get(k, 0) for k in OUTCOMES)


def _key(key: SampleKey) -> tuple[str, int, int]:
    return key.case, key.epoch, key.attempt


def _held(store: Store, run_id: str) -> set[tuple[str, int, int]]:
    """The (case, epoch, attempt) of every stored sample of the run, as run_samples sees them."""
    return store.stored_keys(run_id, None)


def _complete(store: Store, run_id: str, plan: RunPlan) -> bool:
    held = _held(store, run_id)
    return all(_key(k) in held for k in plan.keys)


MIN_POLL_SECONDS = 0.02


def next_poll(poll_seconds: float, left: int, stored: int, elapsed: float) -> float:
    """Seconds to the next poll: ``poll_seconds``, or sooner when the samples ``left`` should
    all be stored before then at the rate seen so far (``stored`` in ``elapsed`` seconds), so a
    short batch's end is seen when it happens, not up to a poll later. A tail that takes longer
    lowers the rate, and the polls slow down again."""
    if stored <= 0 or elapsed <= 0:
        return poll_seconds
    return min(poll_seconds, max(MIN_POLL_SECONDS, left * elapsed / stored))


async def wait_for_samples(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stall_timeout: float | None = None,
    poll_seconds: float = 0.25,
    waiting_on: str = "",
    resume: str = "",
    check: Callable[[], None] | None = None,
) -> tuple[bool, int]:
    """Poll the store until every planned sample of the run is stored (True) or
    ``should_stop()`` says so (False); returns that and how many samples were stored meanwhile.
    ``on_progress`` gets the samples newly stored since its last call, by outcome; ``check``
    is called at every poll, and may raise to end the wait.

    Raises:
        BatchError: No such run, or no valid plan on it.
        Stalled: No new sample for ``stall_timeout`` seconds while some are missing.
    """
    plan, _ = missing_keys(store, run_id)
    seen = dict.fromkeys(OUTCOMES, 0)
    seen.update({k: v for k, v in store.gate_counts(run_id, judged=False).items() if k in seen})
    start = _stored(seen)
    began = last_change = last_beat = time.monotonic()
    while True:
        counts = store.gate_counts(run_id, judged=False)
        new = {k: counts.get(k, 0) - seen[k] for k in OUTCOMES}
        now = time.monotonic()
        if any(new.values()):
            seen = {k: counts.get(k, 0) for k in OUTCOMES}
            last_change = now
            if on_progress is not None:
                on_progress(new)
        stored = _stored(seen)
        if stored >= len(plan.keys) and _complete(store, run_id, plan):
            return True, stored - start
        if should_stop is not None and should_stop():
            return False, stored - start
        if check is not None:
            check()
        if stall_timeout is not None and now - last_change > stall_timeout:
            missing = len(missing_keys(store, run_id)[1])
            raise Stalled(
                run_id, missing, len(plan.keys), stall_timeout, waiting_on,
                resume or f"agentic-eval batch --resume {run_id} runs them",
            )  # fmt: skip
        if now - last_beat >= HEARTBEAT_SECONDS:  # the submitter is alive: not abandoned
            with contextlib.suppress(Exception):
                store.heartbeat(run_id)
            last_beat = now
        await asyncio.sleep(
            next_poll(poll_seconds, len(plan.keys) - stored, stored - start, now - began)
        )
