"""Grouped store calls: the reads and writes of a worker's task threads made together.

A thread-pool worker runs many samples at once. Each task asks the store whether its sample is
stored already (a task may be delivered twice) and, once the sample ran, writes its row, and
may be acknowledged only once that row is committed. A query or a transaction per task (the
row, its request template, the run's heartbeat) costs the worker and the database more than the
sample's own bookkeeping, and the heartbeat updates of all tasks queue on the run's row. Here
each task thread hands its call over and waits for its own answer; one thread per kind of call
and process makes, in one go per run, every call handed over while its previous one was under
way. Under load the groups grow by themselves; a lone call is made at once, with no delay added.

A group of writes that fails is written again one hand-over at a time, so each task learns its
own error, not its neighbour's; a request template is sent once per process, not with every
sample, and the run's heartbeat moved every few seconds, not by every write.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from agentic_eval.batch.plan import SampleKey
from agentic_eval.evaluation.session import HEARTBEAT_SECONDS
from agentic_eval.store.db import Store

BEAT_SECONDS = HEARTBEAT_SECONDS / 4
"""How often a process's writes move a run's heartbeat (a write moving it every time would
make the writes of every worker queue on the run's row); the submitter moves it too, and a
run is taken for abandoned only after :data:`~agentic_eval.store.db.STALE_AFTER`."""

I = TypeVar("I")  # noqa: E741 (the item handed over)
R = TypeVar("R")


@dataclass
class _Handover(Generic[I, R]):
    item: I
    done: threading.Event = field(default_factory=threading.Event)
    result: R | None = None
    error: BaseException | None = None


class Grouped(Generic[I, R]):
    """Makes the calls handed to :meth:`call` by any thread, grouped, on a thread of its own:
    ``make(items)`` answers a group, one result or error per item, in order."""

    def __init__(self, name: str, make: Callable[[list[I]], list[R | BaseException]]) -> None:
        self._make = make
        self._cond = threading.Condition()
        self._queue: list[_Handover[I, R]] = []
        self.groups = 0
        """Groups made (each answering one or more hand-overs)."""
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def call(self, item: I) -> R:
        """``item``'s answer, once its group is made.

        Raises:
            Exception: What ``make`` gave for this item.
        """
        handover: _Handover[I, R] = _Handover(item)
        with self._cond:
            self._queue.append(handover)
            self._cond.notify()
        handover.done.wait()
        if handover.error is not None:
            raise handover.error
        return cast(R, handover.result)  # set when there is no error

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                group, self._queue = self._queue, []
            try:
                answers = self._make([h.item for h in group])
            except BaseException as exc:  # make's own failure: every item's
                answers = [exc] * len(group)
            self.groups += 1
            for handover, answer in zip(group, answers, strict=True):
                if isinstance(answer, BaseException):
                    handover.error = answer
                else:
                    handover.result = answer
                handover.done.set()


@dataclass(frozen=True)
class Rows:
    """Sample rows of a run, with the request templates their transcripts were stored without."""

    run_id: str
    rows: list[dict[str, Any]]
    templates: Mapping[str, str]


class StoreCalls:
    """The grouped store calls of one process's task threads over ``store``."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.monotonic) -> None:
        self.store, self._clock = store, clock
        self._sent: set[str] = set()
        """Request templates committed by this process (the store keeps each once)."""
        self._beats: dict[str, float] = {}
        """When this process's writes last moved each run's heartbeat (monotonic seconds)."""
        self.writes: Grouped[Rows, None] = Grouped("agentic-eval-writes", self._write)
        self.reads: Grouped[tuple[str, SampleKey], bool] = Grouped("agentic-eval-reads", self._read)

    def stored(self, run_id: str, key: SampleKey) -> bool:
        """Whether the store holds sample ``key`` of run ``run_id``.

        Raises:
            StoreError: The store cannot be read.
        """
        return self.reads.call((run_id, key))

    def write(self, rows: Rows) -> None:
        """Commit the rows (each one already stored skipped); returns once they are committed.

        Raises:
            StoreError: The store could not write them (nothing of them is stored).
        """
        if rows.rows:
            self.writes.call(rows)

    def _read(self, asked: list[tuple[str, SampleKey]]) -> list[bool | BaseException]:
        held: dict[str, set[tuple[str, int, int]] | BaseException] = {}
        for run_id in dict.fromkeys(r for r, _ in asked):
            keys = [(k.case, k.epoch, k.attempt) for r, k in asked if r == run_id]
            try:
                held[run_id] = self.store.stored_keys(run_id, keys)
            except Exception as exc:
                held[run_id] = exc
        answers: list[bool | BaseException] = []
        for run_id, k in asked:
            found = held[run_id]
            answers.append(found if isinstance(found, BaseException) else _key(k) in found)
        return answers

    def _write(self, group: list[Rows]) -> list[BaseException | None]:
        answers: dict[int, BaseException | None] = {}
        for run_id in dict.fromkeys(g.run_id for g in group):
            mine = [i for i, g in enumerate(group) if g.run_id == run_id]
            try:
                self._insert(run_id, [group[i] for i in mine])
                answers.update(dict.fromkeys(mine))
            except Exception as exc:
                if len(mine) == 1:
                    answers[mine[0]] = exc
                    continue
                for i in mine:  # each on its own, so each task gets its own error
                    try:
                        self._insert(run_id, [group[i]])
                        answers[i] = None
                    except Exception as one:
                        answers[i] = one
        return [answers[i] for i in range(len(group))]

    def _insert(self, run_id: str, group: Sequence[Rows]) -> None:
        rows = [row for g in group for row in g.rows]
        templates = {
            sha: text for g in group for sha, text in g.templates.items() if sha not in self._sent
        }
        now = self._clock()
        beat = now - self._beats.get(run_id, -BEAT_SECONDS) >= BEAT_SECONDS
        self.store.add_samples(run_id, rows, templates, heartbeat=beat)
        self._sent.update(templates)
        if beat:
            self._beats[run_id] = now


def _key(key: SampleKey) -> tuple[str, int, int]:
    return key.case, key.epoch, key.attempt


_lock = threading.Lock()
_calls: tuple[int, StoreCalls] | None = None


def process_calls(store: Store) -> StoreCalls:
    """This process's grouped calls over ``store`` (made on first use; a forked child makes its
    own: threads do not cross ``fork``)."""
    global _calls
    with _lock:
        if _calls is None or _calls[0] != os.getpid() or _calls[1].store is not store:
            _calls = (os.getpid(), StoreCalls(store))
        return _calls[1]
