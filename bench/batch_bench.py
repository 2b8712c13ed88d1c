"""Batch benchmark: scripted samples per second through the batch layer, and the gate from the
database over many sample rows, on SQLite and (when it is reachable) PostgreSQL.

1. ``run_agent_batch`` of retail_ops' 34 cases x N epochs with the scripted reference agent, on the
   local executor, in this process and in ``--processes`` child processes: samples per second,
   each sample a row written through the store sink, the gate read back from the rows. The plain
   loop (``run_tasks`` of the same specs with no store, one process) is the floor, measured in
   the same run, so each figure shows as a ratio to it.
2. The gate from the database over 100,000 sample rows: the counting queries alone
   (``gate_counts`` + ``hard_gates_failed``), and the whole summary the batch command prints
   (pass^k and the flaky cases counted per case in the store, the missing samples).

Run: ``python bench/batch_bench.py [--epochs 300] [--rows 100000] [--processes 2]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import RunPlan, SampleKey, open_run, run_agent_batch, summary
from agentic_eval.core.aio import run
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains import get_domain
from agentic_eval.evaluation.runner import run_tasks
from agentic_eval.store import Store

PG_ADMIN = "host=127.0.0.1 user=postgres dbname=test"


def _plan(epochs: int) -> RunPlan:
    cases = [c.id for c in get_domain("retail_ops").load_cases()]
    return RunPlan(
        suite="retail_ops",
        keys=tuple(SampleKey(case=c, epoch=e) for c in cases for e in range(epochs)),
        backend=BackendSpec(kind="scripted", agent="reference"),
        model="scripted:reference",
        parameters=RunParameters(),
    )


def _floor(plan: RunPlan) -> float:
    domain = get_domain("retail_ops")
    specs = domain.task_specs(domain.load_cases(), plan.limits(), len(plan.keys) // 34)
    backend = ScriptedBackend("reference", domain.agents()["reference"])
    started = time.perf_counter()
    run(run_tasks(specs, backend, plan.settings()))
    return time.perf_counter() - started


def _batch(store: Store, plan: RunPlan, processes: int = 1) -> float:
    started = time.perf_counter()
    s = run(run_agent_batch(store, plan, processes=processes))
    elapsed = time.perf_counter() - started
    assert s.samples == len(plan.keys) and s.gate.verdict == "PASS", s.gate
    return elapsed


def _rows(store: Store, n: int) -> str:
    """A run with ``n`` synthetic sample rows (5% check_failed, 1% transient)."""
    plan = _plan(1)
    run_id = open_run(store, plan)
    now = datetime.now(UTC)
    batch: list[dict[str, Any]] = []
    for i in range(n):
        outcome = "check_failed" if i % 20 == 0 else "transient" if i % 100 == 1 else "passed"
        failed = outcome == "check_failed"
        batch.append(
            {
                "case_id": f"case-{i % 500:03d}", "sample": i // 500, "attempt": 1,
                "worker_id": None, "started_at": now, "finished_at": now, "outcome": outcome,
                "failure_reason": "", "failure_where": "",
                "checks": [{"name": "g", "passed": not failed, "hard_gate": True}],
                "hard_gate_failed": failed, "unapproved_attempts": 0,
                "unapproved_executions": 0, "turns": 3, "tool_calls": 3, "input_tokens": 0,
                "output_tokens": 0, "duration_ms": 1.0, "transcript_ref": None,
                "transcript": None, "reproduced": None, "source_job_id": None,
                "case_verdict": None,
            }
        )  # fmt: skip
        if len(batch) == 5000:
            store.add_samples(run_id, batch)
            batch = []
    store.add_samples(run_id, batch)
    return run_id


def _gate_times(store: Store, run_id: str) -> tuple[float, float]:
    started = time.perf_counter()
    store.gate_counts(run_id)
    store.hard_gates_failed(run_id)
    queries = time.perf_counter() - started
    started = time.perf_counter()
    summary(store, run_id)
    return queries, time.perf_counter() - started


def _pg_url() -> str | None:
    try:
        import psycopg

        name = "agentic_eval_batch_bench"
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    except Exception:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=300, help="epochs of the 34 cases")
    parser.add_argument("--rows", type=int, default=100_000, help="sample rows for the gate")
    parser.add_argument("--processes", type=int, default=2, help="child processes (0: skip)")
    args = parser.parse_args()
    plan = _plan(args.epochs)
    n = len(plan.keys)
    floor = _floor(plan)
    print(f"scripted samples: {n} (34 cases x {args.epochs} epochs)")
    print(f"  plain loop, no store (floor):   {n / floor:8.0f} samples/s  ({floor:.2f} s)")
    stores: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        stores.append(("SQLite", f"sqlite:///{Path(tmp) / 'bench.db'}"))
        pg = _pg_url()
        if pg is not None:
            stores.append(("PostgreSQL", pg))
        for name, url in stores:
            store = Store(url)
            store.migrate()
            elapsed = _batch(store, plan)
            print(
                f"  batch on {name + ':':11}        {n / elapsed:8.0f} samples/s  ({elapsed:.2f} s,"
                f" {floor / elapsed:.2f}x the floor's rate)"
            )
            if args.processes > 1:
                elapsed = _batch(store, plan, args.processes)
                print(
                    f"  batch on {name}, {args.processes} processes: {n / elapsed:5.0f} samples/s"
                    f"  ({elapsed:.2f} s, {floor / elapsed:.2f}x the floor's rate)"
                )
            run_id = _rows(store, args.rows)
            queries, whole = _gate_times(store, run_id)
            print(
                f"  gate from {name} over {args.rows:,} rows: queries {queries * 1000:.0f} ms, "
                f"whole summary (with pass^k) {whole * 1000:.0f} ms"
            )
            store.close()
    if pg is None:
        print("  PostgreSQL: not reachable on 127.0.0.1:5432, skipped")


if __name__ == "__main__":
    main()
