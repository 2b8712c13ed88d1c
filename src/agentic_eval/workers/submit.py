"""Submit a stored run to Celery workers and wait for its samples, watching the store.

:func:`run_on_workers` enqueues one task per planned sample the store does not hold yet (so
the same call resumes an interrupted run: finished samples are not sent again), then polls the
store with a cheap count query until every planned sample is stored, moving the run's
heartbeat meanwhile. The samples, the counts and the gate are all read back from the store:
what the workers return is not used.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentic_eval.batch import BatchError, RunPlan, SampleKey, plan_of
from agentic_eval.core.text import one_line, redact, safe_url
from agentic_eval.evaluation.session import HEARTBEAT_SECONDS
from agentic_eval.store.db import Store
from agentic_eval.workers.config import TASK_NAME, CelerySettings, WorkerError, celery_settings
from agentic_eval.workers.failures import SampleFailure, clear_failures, first_failure

OUTCOMES: tuple[str, ...] = ("passed", "check_failed", "error", "transient")


class Stalled(WorkerError):
    """No sample was stored for the stall timeout while some are still missing."""

    def __init__(self, run_id: str, missing: int, planned: int, seconds: float, queue: str):
        self.run_id, self.missing, self.planned = run_id, missing, planned
        super().__init__(
            f"no sample of run {run_id} was stored for {seconds:g} s: {missing} of {planned} "
            f"planned samples are missing (is a worker consuming queue {queue!r}?); "
            f"agentic-eval batch --resume {run_id} --executor celery re-enqueues them"
        )


class SampleFailed(WorkerError):
    """A worker could not run one of the submitted samples (it stored none)."""

    def __init__(self, run_id: str, failure: SampleFailure):
        self.run_id, self.failure = run_id, failure
        super().__init__(
            f"worker {failure.worker} could not run sample {failure.sample} of run {run_id}: "
            f"{failure.error} (once that is fixed, agentic-eval batch --resume {run_id} "
            "--executor celery runs what is missing)"
        )


@dataclass(frozen=True)
class Submission:
    """The tasks one call enqueued."""

    run_id: str
    keys: tuple[SampleKey, ...]
    task_ids: tuple[str, ...]


@dataclass(frozen=True)
class WorkersRun:
    """How waiting for the workers ended."""

    submission: Submission
    complete: bool
    """Every planned sample is stored (False: stopped by ``should_stop``)."""
    stored: int
    """Samples stored while this call waited (by any worker)."""


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


def enqueue(
    store: Store, run_id: str, *, settings: CelerySettings | None = None, app: Any = None
) -> Submission:
    """Send one task per planned sample not stored yet, to the configured queue.

    Raises:
        BatchError: No such run, or no valid plan on it.
        CeleryMissing: The celery extra is not installed.
        WorkerError: The broker is not configured, or cannot be reached.
    """
    from agentic_eval.workers.celery_app import celery_app

    settings = settings or celery_settings()
    _, keys = missing_keys(store, run_id)
    app = app if app is not None else celery_app(settings)
    if not keys:
        return Submission(run_id, (), ())
    ids = tuple(f"{run_id}:{k.name()}:{uuid.uuid4().hex[:12]}" for k in keys)
    try:
        clear_failures(settings.broker_url, run_id)  # an earlier submission's
        with app.producer_or_acquire() as producer:
            for key, task_id in zip(keys, ids, strict=True):
                app.send_task(
                    TASK_NAME,
                    args=(run_id, key.model_dump_json()),
                    task_id=task_id,
                    queue=settings.queue,
                    producer=producer,
                )
    except Exception as exc:  # kombu's OperationalError and friends: one line
        raise WorkerError(
            f"cannot enqueue on the broker {safe_url(settings.broker_url)}: "
            f"{one_line(redact(str(exc)))}"
        ) from None
    return Submission(run_id, tuple(keys), ids)


def revoke(submission: Submission, app: Any = None) -> None:
    """Ask the workers to drop this submission's tasks that have not started (those running
    finish, and their samples are stored); best effort: a worker started later does not know."""
    if not submission.task_ids:
        return
    from agentic_eval.workers.celery_app import celery_app

    app = app if app is not None else celery_app()
    with contextlib.suppress(Exception):
        app.control.revoke(list(submission.task_ids))


def _stored(counts: Mapping[str, int]) -> int:
    return sum(counts.get(k, 0) for k in OUTCOMES)


def _key(key: SampleKey) -> tuple[str, int, int]:
    return key.case, key.epoch, key.attempt


def _held(store: Store, run_id: str) -> set[tuple[str, int, int]]:
    """The (case, epoch, attempt) of every stored sample of the run, as run_samples sees them."""
    return {
        (v.case_id, v.sample, v.attempt) for v in store.sample_verdicts([run_id]).get(run_id, [])
    }


def _complete(store: Store, run_id: str, plan: RunPlan) -> bool:
    held = _held(store, run_id)
    return all(_key(k) in held for k in plan.keys)


async def wait_for_samples(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stall_timeout: float | None = None,
    poll_seconds: float = 0.25,
    queue: str = "",
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
    seen.update({k: v for k, v in store.gate_counts(run_id).items() if k in seen})
    start = _stored(seen)
    last_change = last_beat = time.monotonic()
    while True:
        counts = store.gate_counts(run_id)
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
            raise Stalled(run_id, missing, len(plan.keys), stall_timeout, queue)
        if now - last_beat >= HEARTBEAT_SECONDS:  # the submitter is alive: not abandoned
            with contextlib.suppress(Exception):
                store.heartbeat(run_id)
            last_beat = now
        await asyncio.sleep(poll_seconds)


async def run_on_workers(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stall_timeout: float | None = None,
    poll_seconds: float = 0.25,
) -> WorkersRun:
    """Enqueue the run's missing samples on the Celery workers and wait until they are all
    stored; when stopped (``should_stop``, a cancellation, a stall), the tasks not started yet
    are revoked. The run is not closed: :func:`agentic_eval.batch.close_run` reads its gate.

    Raises:
        BatchError: No such run, or no valid plan on it.
        CeleryMissing: The celery extra is not installed.
        WorkerError: The broker is not configured or unreachable.
        Stalled: No new sample for ``stall_timeout`` seconds (``--resume`` re-enqueues).
        SampleFailed: A worker could not run a sample (it raised; it stored none).
    """
    settings = celery_settings()
    submission = enqueue(store, run_id, settings=settings)
    complete = False
    mine = frozenset(submission.task_ids)

    def check() -> None:
        failure = first_failure(settings.broker_url, run_id, mine)
        if failure is not None:
            raise SampleFailed(run_id, failure)

    try:
        complete, stored = await wait_for_samples(
            store,
            run_id,
            on_progress=on_progress,
            should_stop=should_stop,
            stall_timeout=stall_timeout,
            poll_seconds=poll_seconds,
            queue=settings.queue,
            check=check if mine else None,
        )
    finally:
        if not complete:
            revoke(submission)
    return WorkersRun(submission, complete, stored)
