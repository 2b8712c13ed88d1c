"""Submit a stored run to Celery workers and wait for its samples, watching the store.

:func:`run_on_workers` enqueues one task per planned sample the store does not hold yet (so
the same call resumes an interrupted run: finished samples are not sent again), then polls the
store with a cheap count query until every planned sample is stored, moving the run's
heartbeat meanwhile. The samples, the counts and the gate are all read back from the store:
what the workers return is not used.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentic_eval.batch import SampleKey
from agentic_eval.batch.watch import missing_keys, wait_for_samples
from agentic_eval.core.text import one_line, redact, safe_url
from agentic_eval.store.db import Store
from agentic_eval.workers.config import TASK_NAME, CelerySettings, WorkerError, celery_settings
from agentic_eval.workers.failures import SampleFailure, clear_failures, first_failure


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
            waiting_on=f"is a worker consuming queue {settings.queue!r}?",
            resume=f"agentic-eval batch --resume {run_id} --executor celery re-enqueues them",
            check=check if mine else None,
        )
    finally:
        if not complete:
            revoke(submission)
    return WorkersRun(submission, complete, stored)
