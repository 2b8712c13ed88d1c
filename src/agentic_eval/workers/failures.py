"""Samples a worker could not run, told to the submitter through the broker.

A task that raises (the run is not in the worker's database, a case is gone from the suite, the
database stayed unreachable) stores no sample, and with no result backend nothing else would
say so: the submitter would wait for its stall timeout. So the worker pushes one line per such
task onto a Redis list of the run (``agentic-eval:failed:RUN_ID``, kept a week), and the
submitter, polling it beside the store, stops at the first one of its own tasks, naming it.
Agent and provider failures are not these: they are samples with an outcome.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any

from agentic_eval.core.text import one_line, redact

KEEP_SECONDS = 7 * 24 * 3600
_lock = threading.Lock()
_clients: dict[tuple[int, str], Any] = {}


@dataclass(frozen=True)
class SampleFailure:
    """One task that raised instead of storing its sample."""

    task_id: str
    sample: str
    worker: str
    error: str


def failures_key(run_id: str) -> str:
    """The Redis list of the run's failed tasks."""
    return f"agentic-eval:failed:{run_id}"


def _client(broker_url: str) -> Any:
    """One Redis client per process and broker (never carried across fork)."""
    with _lock:
        key = (os.getpid(), broker_url)
        if key not in _clients:
            redis: Any = importlib.import_module("redis")
            _clients[key] = redis.Redis.from_url(broker_url, socket_timeout=10)
        return _clients[key]


def report_failure(broker_url: str, run_id: str, failure: SampleFailure) -> None:
    """Push a failed task onto the run's list (best effort: the worker's log has it too)."""
    line = json.dumps(
        {
            "task_id": failure.task_id,
            "sample": failure.sample,
            "worker": failure.worker,
            "error": one_line(redact(failure.error), 400),
        }
    )
    try:
        client = _client(broker_url)
        client.rpush(failures_key(run_id), line)
        client.expire(failures_key(run_id), KEEP_SECONDS)
    except Exception:  # the broker is gone too: the submitter's stall timeout still tells
        return


def clear_failures(broker_url: str, run_id: str) -> None:
    """Forget the run's failed tasks (a new submission of its missing samples)."""
    _client(broker_url).delete(failures_key(run_id))


def first_failure(broker_url: str, run_id: str, task_ids: frozenset[str]) -> SampleFailure | None:
    """The first failure of one of ``task_ids`` on the run's list, if any."""
    raw: list[bytes] = _client(broker_url).lrange(failures_key(run_id), 0, -1)
    for item in raw:
        try:
            data = json.loads(item)
            found = SampleFailure(
                str(data["task_id"]), str(data["sample"]), str(data["worker"]), str(data["error"])
            )
        except (ValueError, KeyError, TypeError):
            continue
        if found.task_id in task_ids:
            return found
    return None
