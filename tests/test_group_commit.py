"""Grouped store calls of a thread-pool worker (`workers/group_commit.py`): every write is
committed before its call returns, calls handed over during a group go together in the next,
a failed group of writes is written again one by one so each task gets its own error, a request
template is sent once per process, and each read gets its own answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import pytest

from agentic_eval.batch.plan import SampleKey
from agentic_eval.store.db import Store, StoreError
from agentic_eval.workers.group_commit import Grouped, Rows, StoreCalls


class _Store:
    """Records each call; slow, so that hand-overs pile up during one."""

    def __init__(self, seconds: float = 0.05, refuse: str | None = None) -> None:
        self.seconds, self.refuse = seconds, refuse
        self.calls: list[tuple[str, list[str], list[str]]] = []
        self.reads: list[tuple[str, list[tuple[str, int, int]]]] = []
        self.committed: set[tuple[str, str]] = set()
        self.beats: list[tuple[str, bool]] = []
        self.lock = threading.Lock()

    def add_samples(
        self,
        run_id: str,
        rows: list[dict[str, Any]],
        templates: Mapping[str, str],
        *,
        heartbeat: bool = True,
    ) -> None:
        time.sleep(self.seconds)
        self.beats.append((run_id, heartbeat))
        names = [r["case_id"] for r in rows]
        if self.refuse in names:
            raise StoreError(f"cannot write samples: {self.refuse} refused")
        with self.lock:
            self.calls.append((run_id, names, sorted(templates)))
            self.committed.update((run_id, n) for n in names)

    def stored_keys(
        self, run_id: str, keys: Iterable[tuple[str, int, int]] | None
    ) -> set[tuple[str, int, int]]:
        time.sleep(self.seconds)
        if self.refuse == run_id:
            raise StoreError("cannot read the stored samples")
        asked = list(keys or [])
        with self.lock:
            self.reads.append((run_id, asked))
            return {k for k in asked if (run_id, k[0]) in self.committed}


def _calls(store: _Store) -> StoreCalls:
    return StoreCalls(cast(Store, store))


def _in_threads(names: list[str], one: Callable[[str], object]) -> dict[str, object]:
    """``one(name)`` on a thread per name: what each returned, or the StoreError it raised."""
    seen: dict[str, object] = {}

    def run(name: str) -> None:
        try:
            seen[name] = one(name)
        except StoreError as exc:
            seen[name] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return seen


def _write_all(calls: StoreCalls, store: _Store, names: list[str]) -> dict[str, object]:
    def one(name: str) -> bool:
        calls.write(Rows("run-1", [{"case_id": name}], {"tpl": "T"}))
        return ("run-1", name) in store.committed  # True: stored before the return

    return _in_threads(names, one)


def test_every_row_is_committed_before_its_write_returns_and_groups_form_under_load() -> None:
    store = _Store()
    calls = _calls(store)
    names = [f"c{i}" for i in range(40)]
    assert _write_all(calls, store, names) == dict.fromkeys(names, True)
    assert sorted(n for _, rows, _ in store.calls for n in rows) == sorted(names)
    assert 1 < calls.writes.groups < len(names)  # grouped, and not all in one
    assert [templates for _, _, templates in store.calls].count(["tpl"]) == 1


def test_a_lone_write_is_made_at_once() -> None:
    store = _Store(seconds=0)
    _calls(store).write(Rows("run-1", [{"case_id": "only"}], {}))
    assert store.calls == [("run-1", ["only"], [])]


def test_a_failed_group_gives_each_task_its_own_error() -> None:
    store = _Store(refuse="c3")
    calls = _calls(store)
    names = [f"c{i}" for i in range(12)]
    seen = _write_all(calls, store, names)
    assert isinstance(seen.pop("c3"), StoreError)
    assert seen == dict.fromkeys([n for n in names if n != "c3"], True)
    assert ("run-1", "c3") not in store.committed


def test_rows_of_two_runs_go_in_transactions_of_their_own() -> None:
    store = _Store()
    calls = _calls(store)
    names = [f"c{i}" for i in range(10)]
    _in_threads(names, lambda n: calls.write(Rows(f"run-{int(n[1:]) % 2}", [{"case_id": n}], {})))
    for run_id, rows, _ in store.calls:
        assert {int(n[1:]) % 2 for n in rows} == {int(run_id[-1])}
    assert sorted(n for _, rows, _ in store.calls for n in rows) == sorted(names)


def test_an_empty_write_makes_no_call() -> None:
    store = _Store()
    _calls(store).write(Rows("run-1", [], {"tpl": "T"}))
    assert store.calls == []


def test_each_read_gets_its_own_answer_in_one_query_per_run() -> None:
    store = _Store()
    store.committed = {("run-0", "c0"), ("run-1", "c1"), ("run-0", "c4")}
    calls = _calls(store)
    names = [f"c{i}" for i in range(12)]
    seen = _in_threads(
        names, lambda n: calls.stored(f"run-{int(n[1:]) % 2}", SampleKey(case=n, epoch=0))
    )
    assert seen == {n: n in ("c0", "c1", "c4") for n in names}
    assert len(store.reads) < len(names)
    assert all(len({k for k, *_ in keys}) == len(keys) for _, keys in store.reads)


def test_a_failed_read_is_the_error_of_its_run_only() -> None:
    store = _Store(refuse="run-bad")
    calls = _calls(store)
    seen = _in_threads(
        ["a", "b", "c"],
        lambda n: calls.stored("run-bad" if n == "b" else "run-ok", SampleKey(case=n)),
    )
    assert isinstance(seen.pop("b"), StoreError)
    assert seen == {"a": False, "c": False}


@pytest.mark.parametrize("bad", [KeyError("x"), RuntimeError("boom")])
def test_a_failure_of_the_group_itself_reaches_each_task_and_the_thread_lives_on(
    bad: Exception,
) -> None:
    failing = [True]

    def make(items: list[int]) -> list[int | BaseException]:
        if failing[0]:
            raise bad
        return [i * 2 for i in items]

    grouped: Grouped[int, int] = Grouped("test", make)
    with pytest.raises(type(bad)):
        grouped.call(1)
    failing[0] = False
    assert grouped.call(21) == 42


def test_the_heartbeat_moves_with_the_first_write_of_a_run_then_every_few_seconds() -> None:
    from agentic_eval.workers import group_commit

    clock = [1000.0]
    store = _Store(seconds=0)
    calls = StoreCalls(cast(Store, store), clock=lambda: clock[0])
    for run_id, advance in [("a", 0), ("a", 1), ("b", 0), ("a", group_commit.BEAT_SECONDS)]:
        clock[0] += advance
        calls.write(Rows(run_id, [{"case_id": "x"}], {}))
    assert store.beats == [("a", True), ("a", False), ("b", True), ("a", True)]


def test_a_buffer_hands_its_rows_out_unwritten_with_the_templates_it_has_not_written() -> None:
    from agentic_eval.evaluation.persist import SampleBuffer

    store = _Store(seconds=0)
    buffer = SampleBuffer(cast(Store, store), "run-1", max_rows=10, max_age=3600)
    buffer.templates.update({"old": "O", "new": "N"})
    buffer.stored.add("old")
    buffer.rows.append({"case_id": "a"})
    assert buffer.take() == ([{"case_id": "a"}], {"new": "N"})
    assert buffer.rows == [] and store.calls == []
