"""What one Celery task does, free of Celery: run one planned sample of a stored run.

The run is rebuilt from the plan stored on its ``eval_run`` row (as :func:`run_samples` does),
so a task carries only the run id and the sample key. A sample the store already holds is not run
again, and a second insert of one is skipped by the store: a task delivered twice (a worker
lost after storing its sample, a ``--resume`` re-enqueueing what was still queued) never counts
a sample twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import os
import threading

from agentic_eval.backends.base import ModelBackend
from agentic_eval.batch import SampleKey
from agentic_eval.batch.run import (
    StoredPlan,
    check_planned,
    execute_samples,
    plan_backend,
    stored_plan,
)
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.sinks import StoreSink
from agentic_eval.store.db import Store
from agentic_eval.workers.group_commit import Rows, process_calls

_lock = threading.Lock()
_store: tuple[int, Store] | None = None
_loop: tuple[int, asyncio.AbstractEventLoop] | None = None


def process_store() -> Store:
    """One store (one connection pool) per worker process, made in that process: a pool is
    never carried across ``fork`` (the prefork pool's children each make their own), and the
    threads of a thread pool share their process's."""
    global _store
    with _lock:
        if _store is None or _store[0] != os.getpid():
            store = Store()
            store.migrate()
            _store = (os.getpid(), store)
        return _store[1]


PROVIDER_SDKS = ("openai", "anthropic")
"""Imported by a worker at start, where installed: the first live sample of every run would
otherwise pay for the import (about a second of CPU for openai's types) while its peers wait."""


def preload() -> None:
    """Ready the worker's main process before its pool starts: the domain registry (entry
    points; a thread pool's threads would otherwise race on the first load, one of them seeing
    the registry empty), each domain's parts (its tools, agents and checks), the store (a
    worker that cannot reach it says so at start, not at its first task) and the provider SDKs
    that are installed. Prefork children inherit the modules and make a store of their own.

    Raises:
        StoreError: The store cannot be reached or migrated.
    """
    from agentic_eval.domains.registry import all_domains

    for domain in all_domains().values():
        parts = getattr(domain, "parts", None)  # a packaged domain imports its parts lazily
        if callable(parts):
            with contextlib.suppress(Exception):  # a broken domain fails the tasks that need it
                parts()
    process_store()
    for name in PROVIDER_SDKS:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)


def close_process_store() -> None:
    """Dispose of this process's store, if it made one."""
    global _store
    with _lock:
        if _store is not None and _store[0] == os.getpid():
            _store[1].close()
        _store = None


def execute_sample(run_id: str, key_json: str, worker: str | None) -> int:
    """Run the sample ``key_json`` (a :class:`SampleKey` as JSON) of run ``run_id`` unless the
    store holds it already; returns how many samples ran (0 or 1).

    The store is read and written here, on the task's own thread; only the sample itself runs
    on the process's event loop (:func:`process_loop`), which the samples of every thread
    share: a database round trip on the loop would hold up every sample in flight.

    Raises:
        BatchError: No such run or plan, or the run did not plan this sample.
        StoreError: The store cannot be read or written.
    """
    key = SampleKey.model_validate_json(key_json)
    store = process_store()
    stored = _stored_plan(store, run_id)
    check_planned(stored, [key])
    calls = process_calls(store)  # asked and written with the other task threads' samples
    if calls.stored(run_id, key):
        return 0
    coro = _run_on_loop(store, stored, [key])
    runs, backend = asyncio.run_coroutine_threadsafe(coro, process_loop()).result()
    sink = StoreSink(store, run_id, backend, stored.plan.suite, worker, stored.stamps)
    for case_run in runs:
        sink.sample(case_run)
    calls.write(Rows(run_id, *sink.take()))  # committed before the ack
    return len(runs)


KEEP_RUNS = 4
"""Runs whose plan and backend a worker process keeps (the most recent ones): building a
backend (a live SDK client loads its TLS certificates) costs more than a scripted sample, and
reading a plan of many keys more than a sample."""

_plans: dict[str, StoredPlan] = {}
"""The plans of the runs this process served lately, by run id (guarded by ``_lock``)."""


def _stored_plan(store: Store, run_id: str) -> StoredPlan:
    with _lock:
        hit = _plans.get(run_id)
    if hit is not None:
        return hit
    stored = stored_plan(store, run_id)  # a read of the store: outside the lock
    with _lock:
        _plans[run_id] = stored
        while len(_plans) > KEEP_RUNS:
            _plans.pop(next(iter(_plans)))
    return stored


_backends: dict[str, ModelBackend] = {}
"""The backends of the runs this process served lately, by run id; used on the event loop
only."""


async def _run_on_loop(
    store: Store, stored: StoredPlan, todo: list[SampleKey]
) -> tuple[list[CaseRun], ModelBackend]:
    """Run ``todo`` on the run's backend (built once per run), collecting the finished samples
    for the caller's thread to store."""
    backend = _backends.get(stored.run_id)
    if backend is None:
        backend = plan_backend(stored.plan)
        _backends[stored.run_id] = backend
        while len(_backends) > KEEP_RUNS:  # the oldest run's: its batch is likely over
            await _backends.pop(next(iter(_backends))).aclose()
    runs: list[CaseRun] = []
    await execute_samples(store, stored, todo, backend, runs.append)
    return runs, backend


def process_loop() -> asyncio.AbstractEventLoop:
    """One event loop per worker process, on a thread of its own: the samples of a thread pool
    run on it side by side, as the local executor's do on its one loop (an event loop per
    task and thread costs more CPU than the sample, and live clients could not be shared)."""
    global _loop
    with _lock:
        if _loop is None or _loop[0] != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="agentic-eval-samples", daemon=True
            ).start()
            _loop = (os.getpid(), loop)
        return _loop[1]
