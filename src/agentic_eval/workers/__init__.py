"""Distributed batches: a stored run's samples as Celery tasks on a Redis broker, run by
``agentic-eval worker`` processes that write them to the shared store (PostgreSQL).

Nothing here imports Celery (the optional ``celery`` extra) until the executor or a worker is
started: :mod:`agentic_eval.workers.celery_app` holds the app and imports it then.
"""

from agentic_eval.batch.watch import Stalled, missing_keys, wait_for_samples
from agentic_eval.workers.config import (
    BROKER_ENV,
    DEFAULT_QUEUE,
    DEFAULT_VISIBILITY_TIMEOUT,
    MISSING_EXTRA,
    QUEUE_ENV,
    TASK_NAME,
    VISIBILITY_ENV,
    CeleryMissing,
    CelerySettings,
    WorkerError,
    celery_settings,
    executor_settings,
    require_celery,
    require_shared_store,
)
from agentic_eval.workers.failures import SampleFailure
from agentic_eval.workers.submit import (
    SampleFailed,
    Submission,
    WorkersRun,
    enqueue,
    revoke,
    run_on_workers,
)
from agentic_eval.workers.task import execute_sample

__all__ = [
    "BROKER_ENV",
    "DEFAULT_QUEUE",
    "DEFAULT_VISIBILITY_TIMEOUT",
    "MISSING_EXTRA",
    "QUEUE_ENV",
    "TASK_NAME",
    "VISIBILITY_ENV",
    "CeleryMissing",
    "CelerySettings",
    "SampleFailed",
    "SampleFailure",
    "Stalled",
    "Submission",
    "WorkerError",
    "WorkersRun",
    "celery_settings",
    "enqueue",
    "execute_sample",
    "executor_settings",
    "missing_keys",
    "require_celery",
    "require_shared_store",
    "revoke",
    "run_on_workers",
    "wait_for_samples",
]
