"""The Celery app: one task, ``agentic_eval.run_sample(run_id, key_json)``, on a Redis broker.

Celery is the optional ``celery`` extra: it is imported here, inside :func:`celery_app`, and only
when the celery executor or ``agentic-eval worker`` is chosen.

Delivery is Celery's own, set so that no sample is lost:

- ``task_acks_late``: a task is acknowledged after it ran (its sample stored), not when it was
  received, so a task whose worker dies is delivered again;
- ``task_reject_on_worker_lost``: a task whose pool process was killed is requeued instead of
  acknowledged as failed;
- ``worker_prefetch_multiplier = 1``: a worker holds one unacknowledged task per pool process,
  so a lost worker strands as few as possible and a fast one is not starved;
- the Redis ``visibility_timeout`` (``AGENTIC_EVAL_VISIBILITY_TIMEOUT``): a task not
  acknowledged within it is handed to another worker (a worker lost without a word).

A task that raises stores no sample: it is retried while the store is unreachable, and otherwise
told to the submitter (:mod:`agentic_eval.workers.failures`), which stops naming it.

and the store's insert is idempotent on (run, case, sample), with a task skipping a sample the
store holds: a task delivered twice never counts twice. There is no result backend: results
live in the store.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
from typing import Any

from agentic_eval.batch import SampleKey
from agentic_eval.core.text import one_line, redact, safe_url
from agentic_eval.store.db import URL_ENV, StoreError
from agentic_eval.workers.config import (
    TASK_NAME,
    CeleryMissing,
    CelerySettings,
    WorkerError,
    celery_settings,
)
from agentic_eval.workers.failures import SampleFailure, report_failure
from agentic_eval.workers.task import close_process_store, execute_sample, preload

STORE_RETRIES = 3
"""Times a task whose store was unreachable is retried (after 2, 4, 8 s) before it fails."""


def celery_app(settings: CelerySettings | None = None) -> Any:
    """The app for these settings (default: from the environment), made once per process.

    Raises:
        CeleryMissing: The celery extra is not installed.
        WorkerError: The broker is not configured.
    """
    return _app(settings or celery_settings())


@functools.cache
def _app(settings: CelerySettings) -> Any:
    try:  # celery ships no type information: its objects are Any here
        celery: Any = importlib.import_module("celery")
        signals: Any = importlib.import_module("celery.signals")
    except ImportError:
        raise CeleryMissing() from None
    app: Any = celery.Celery("agentic_eval", set_as_current=False)
    app.conf.update(
        broker_url=settings.broker_url,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": settings.visibility_timeout},
        task_default_queue=settings.queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # a late-acked task cannot be acknowledged over a lost connection: it is delivered
        # again, so stop it rather than finish it twice (Celery 6's default)
        worker_cancel_long_running_tasks_on_connection_loss=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        worker_send_task_events=False,
    )

    def run_sample(task: Any, run_id: str, key_json: str) -> int:
        """Run one planned sample of a stored run (skipped when already stored)."""
        worker = str(task.request.hostname or "") or None
        try:
            return execute_sample(run_id, key_json, worker)
        except StoreError as exc:  # the database may be back in a moment
            if task.request.retries < STORE_RETRIES:
                raise task.retry(exc=exc, countdown=2 ** (task.request.retries + 1)) from None
            _failed(settings, task, run_id, key_json, exc)
            raise
        except Exception as exc:
            _failed(settings, task, run_id, key_json, exc)
            raise

    app.task(name=TASK_NAME, bind=True)(run_sample)

    def on_shutdown(**_: Any) -> None:
        close_process_store()

    signals.worker_process_shutdown.connect(on_shutdown, weak=False)
    return app


def _failed(
    settings: CelerySettings, task: Any, run_id: str, key_json: str, exc: Exception
) -> None:
    """Tell the submitter that this task stored no sample (see :mod:`.failures`)."""
    try:
        sample = SampleKey.model_validate_json(key_json).name()
    except ValueError:
        sample = key_json[:200]
    failure = SampleFailure(
        str(task.request.id), sample, str(task.request.hostname or "?"), f"{exc}"
    )
    report_failure(settings.broker_url, run_id, failure)


class _QuietRevokes(logging.Filter):
    """Celery warns, for every revoked task, that it cannot mark it revoked in a result
    backend; there is none by design (results live in the store)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "as revoked in backend" not in record.getMessage()


def start_worker(*, concurrency: int, name: str, loglevel: str, pool: str) -> int:
    """Run a Celery worker on the app's queue until it is shut down; returns its exit code.

    Raises:
        CeleryMissing: The celery extra is not installed.
        WorkerError: The broker is not configured.
    """
    settings = celery_settings()
    app = celery_app(settings)
    preload()
    logging.getLogger("celery.worker.control").addFilter(_QuietRevokes())
    signals: Any = importlib.import_module("celery.signals")

    def ready(sender: Any = None, **_: Any) -> None:  # at every log level (Celery: INFO)
        store = safe_url(os.environ.get(URL_ENV, ""))
        node = getattr(sender, "hostname", None) or name  # with %h and friends expanded
        sys.stderr.write(
            f"agentic-eval worker {node}: ready ({pool} pool x{concurrency}, queue "
            f"{settings.queue!r}, store {store})\n"
        )
        sys.stderr.flush()

    signals.worker_ready.connect(ready, weak=False)
    worker: Any = app.Worker(
        hostname=name,
        pool_cls=pool,
        concurrency=concurrency,
        loglevel=loglevel,
        queues=[settings.queue],
        without_gossip=True,  # no worker-to-worker chatter: nothing here uses it
        without_mingle=True,
        without_heartbeat=True,
    )
    worker.start()
    return int(worker.exitcode or 0)


def check_broker(settings: CelerySettings | None = None, timeout: float = 5.0) -> None:
    """Connect to the broker once, before a run is opened on it.

    Raises:
        CeleryMissing: The celery extra is not installed.
        WorkerError: The broker is not configured, or cannot be reached.
    """
    settings = settings or celery_settings()
    app = celery_app(settings)
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as exc:  # kombu's OperationalError and what the transport raised
        raise WorkerError(
            f"cannot reach the broker {safe_url(settings.broker_url)}: {one_line(redact(str(exc)))}"
        ) from None
