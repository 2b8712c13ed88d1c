"""What a Celery executor and its workers are configured by: environment variables only, so
the submitting command and every worker on every machine read the same settings.

``AGENTIC_EVAL_BROKER_URL``
    The Redis broker, e.g. ``redis://127.0.0.1:6379/0`` (required).
``AGENTIC_EVAL_DATABASE_URL``
    The shared store every worker writes samples to, a PostgreSQL URL (required: the default
    SQLite file is one machine's, and concurrent writers on it are not reliable).
``AGENTIC_EVAL_QUEUE``
    The queue the tasks go to and the workers consume (default ``agentic-eval``).
``AGENTIC_EVAL_VISIBILITY_TIMEOUT``
    Seconds a task may stay unacknowledged before Redis hands it to another worker (default
    3600). Tasks are acknowledged after their sample is stored, so it must exceed the longest
    sample; a sample whose worker died without a word comes back after it (``--resume``
    re-enqueues such a sample at once).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

from agentic_eval.store.db import URL_ENV

BROKER_ENV = "AGENTIC_EVAL_BROKER_URL"
QUEUE_ENV = "AGENTIC_EVAL_QUEUE"
VISIBILITY_ENV = "AGENTIC_EVAL_VISIBILITY_TIMEOUT"
DEFAULT_QUEUE = "agentic-eval"
DEFAULT_VISIBILITY_TIMEOUT = 3600
TASK_NAME = "agentic_eval.run_sample"
MISSING_EXTRA = "the celery executor needs the celery extra: pip install 'agentic-eval[celery]'"


class WorkerError(Exception):
    """The Celery executor cannot run (one line): a missing extra or setting, or a stall."""


class CeleryMissing(WorkerError):
    """Celery (the ``celery`` extra) is not installed."""

    def __init__(self) -> None:
        super().__init__(MISSING_EXTRA)


@dataclass(frozen=True)
class CelerySettings:
    """The broker, the queue and the visibility timeout, read from the environment."""

    broker_url: str
    queue: str
    visibility_timeout: int


def celery_settings() -> CelerySettings:
    """The settings from the environment.

    Raises:
        WorkerError: ``AGENTIC_EVAL_BROKER_URL`` is unset, or a setting is malformed.
    """
    broker = os.environ.get(BROKER_ENV, "").strip()
    if not broker:
        raise WorkerError(
            f"the celery executor needs a broker: set {BROKER_ENV} (e.g. redis://127.0.0.1:6379/0)"
        )
    queue = os.environ.get(QUEUE_ENV, "").strip() or DEFAULT_QUEUE
    raw = os.environ.get(VISIBILITY_ENV, "").strip()
    try:
        timeout = int(raw) if raw else DEFAULT_VISIBILITY_TIMEOUT
    except ValueError:
        timeout = 0
    if timeout < 1:
        raise WorkerError(f"{VISIBILITY_ENV} must be a whole number of seconds >= 1, not {raw!r}")
    return CelerySettings(broker, queue, timeout)


def require_shared_store() -> str:
    """The shared store's URL, from ``AGENTIC_EVAL_DATABASE_URL``.

    Raises:
        WorkerError: It is unset, or names a SQLite file.
    """
    url = os.environ.get(URL_ENV, "").strip()
    if not url:
        raise WorkerError(
            f"the celery executor and its workers need a shared database: set {URL_ENV} to a "
            "PostgreSQL URL (the default SQLite file cannot be shared by workers)"
        )
    if url.startswith("sqlite"):
        raise WorkerError(
            f"the celery executor and its workers need a shared database: {URL_ENV} names a "
            "SQLite file, which workers in other processes and machines cannot share reliably; "
            "use PostgreSQL"
        )
    return url


def require_celery() -> None:
    """Check that Celery can be imported (without configuring anything).

    Raises:
        CeleryMissing: It cannot.
    """
    try:
        importlib.import_module("celery")
    except ImportError:
        raise CeleryMissing() from None


def executor_settings() -> CelerySettings:
    """What the celery executor and ``agentic-eval worker`` need before they start: the extra,
    a shared store and a broker; returns the settings.

    Raises:
        CeleryMissing: The celery extra is not installed.
        WorkerError: No shared store or no broker is configured.
    """
    require_celery()
    require_shared_store()
    return celery_settings()
