"""``agentic-eval worker``: a Celery worker running batch samples (a thin wrapper)."""

from __future__ import annotations

import os
import socket

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.core.text import one_line


@click.command("worker")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Samples at once: pool processes (prefork) or threads.",
)
@click.option(
    "--name",
    default=None,
    help="The worker's node name, stored on every sample it writes (eval_sample.worker_id); "
    "default agentic-eval-PID@HOST.",
)
@click.option(
    "--loglevel",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
)
@click.option(
    "--pool",
    type=click.Choice(["prefork", "threads", "solo"]),
    default="prefork",
    show_default=True,
    help="prefork: one process per slot (scripted and replay samples, CPU-bound); threads: one "
    "process, many threads (live samples, which wait on the provider); solo: one at a time in "
    "this process.",
)
def worker(concurrency: int, name: str | None, loglevel: str, pool: str) -> int:
    """Run batch samples sent by `batch --executor celery`, until stopped.

    \b
    Each task names a stored run and one sample: the worker rebuilds the run from the plan
    stored on it, runs the sample (unless the store holds it already) and writes it to the
    shared store. A task is acknowledged only once its sample is stored, so a sample whose
    worker dies is run again by another; none is counted twice.
    \b
    Environment (the same for the submitting command and every worker):
      AGENTIC_EVAL_BROKER_URL          the Redis broker, e.g. redis://127.0.0.1:6379/0
      AGENTIC_EVAL_DATABASE_URL        the shared PostgreSQL store, e.g.
                                       postgresql+psycopg://user@db-host:5432/evals
      AGENTIC_EVAL_QUEUE               the queue (default agentic-eval)
      AGENTIC_EVAL_VISIBILITY_TIMEOUT  seconds before an unacknowledged task goes to another
                                       worker (default 3600; keep it above the longest sample)
    Live samples read their provider keys (ANTHROPIC_API_KEY, OPENAI_API_KEY) from the
    worker's environment. Stop with Ctrl-C (SIGINT/SIGTERM: finish the samples in flight).
    \b
    Example:
      export AGENTIC_EVAL_BROKER_URL=redis://127.0.0.1:6379/0
      export AGENTIC_EVAL_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/evals
      agentic-eval worker --concurrency 2
    """
    from agentic_eval.workers import WorkerError, executor_settings

    try:
        executor_settings()
    except WorkerError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    from agentic_eval.store.db import StoreError
    from agentic_eval.workers.celery_app import start_worker

    node = name or f"agentic-eval-{os.getpid()}@{socket.gethostname()}"
    try:
        return start_worker(
            concurrency=concurrency, name=node, loglevel=loglevel.upper(), pool=pool
        )
    except StoreError as exc:  # checked before the worker takes a task
        raise CannotRun(one_line(str(exc))) from None
