"""Live throughput benchmark: a live batch against the fake provider, at several concurrencies.

Workload (fixed): ``agentic-eval run retail_ops --provider openai`` (the whole live path: the
openai SDK, the wire format, the loop, tools, checks, the store), 34 cases x 6 samples = 204
samples of 3 to 6 turns (about 3.7), against ``agentic-eval fake-provider --latency-ms 100``
in its own process, answering as the domain's reference agent. Every turn waits exactly
100 ms at the provider, so the ideal time of a batch is computed from the turns it took: the
samples, in order, each started as soon as one of the ``concurrency`` slots is free, each
taking turns x 100 ms and nothing else. The ratio actual / ideal is what the harness, the SDK
and the fake add; measured in the same run, beside a scripted run of the same batch (no HTTP,
no latency: the harness's own time).

The same live batch then runs on two ``agentic-eval worker`` processes (``--pool threads
--concurrency 32`` each: 64 samples in flight in all) through ``batch --executor celery``, when
``AGENTIC_EVAL_DATABASE_URL`` names a PostgreSQL database and ``AGENTIC_EVAL_BROKER_URL`` a Redis
broker (skipped otherwise); its actual time is the run's own, from its ``eval_run`` row (opened
to closed), its turns are read from its sample rows.

The same live batch also runs on the local executor's two child processes (``batch --processes 2
--concurrency 32``), its time again the run's own, the children's start-up included.

Run: ``python bench/live_throughput.py`` (about two minutes on 2 cores; ``--no-celery`` skips
the workers).
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from agentic_eval.cli.main import main as cli_main

DOMAIN = "retail_ops"


def ideal_seconds(turns: list[int], concurrency: int, latency: float) -> float:
    """Makespan of the samples, in order, on ``concurrency`` slots, each turns x latency."""
    slots = [0.0] * min(concurrency, len(turns))
    for n in turns:
        start = heapq.heappop(slots)
        heapq.heappush(slots, start + n * latency)
    return max(slots, default=0.0)


def run_batch(args: list[str]) -> tuple[float, float, dict[str, Any]]:
    """Wall seconds, CPU seconds of this process and the JSON document of one in-process
    ``agentic-eval run``."""
    out = io.StringIO()
    started, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli_main(["run", DOMAIN, *args, "--json", "--no-history"])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    (run,) = json.loads(out.getvalue())["runs"]
    return seconds, cpu, run


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of another process so far; None where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    """``agentic-eval fake-provider`` in its own process, and its OpenAI base URL."""
    cmd = [sys.executable, "-m", "agentic_eval", "fake-provider", "--port", "0",
           "--latency-ms", f"{latency_ms:g}", "--responder", DOMAIN]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"OpenAI base URL: +(\S+)", line)
        if found:
            return proc, found.group(1)
    raise SystemExit(f"fake-provider exited with {proc.wait()} before printing its URL")


def start_workers(
    env: dict[str, str], threads: int, count: int, logs: Path
) -> list[subprocess.Popen[bytes]]:
    """``count`` thread-pool workers on the queue of ``env``, each ready when returned (their
    logs in files: a pipe nobody reads would block them)."""
    procs: list[subprocess.Popen[bytes]] = []
    for i in range(count):
        name = f"bench-{i}@%h"
        cmd = [sys.executable, "-m", "agentic_eval", "worker", "--pool", "threads",
               "--concurrency", str(threads), "--name", name]  # fmt: skip
        with (logs / f"worker-{i}.log").open("wb") as log:
            procs.append(
                subprocess.Popen(
                    cmd,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,
                )
            )
    deadline = time.monotonic() + 60
    for i, proc in enumerate(procs):
        while ": ready (" not in (logs / f"worker-{i}.log").read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"celery worker {i} did not start (exit {proc.poll()})")
            time.sleep(0.1)
    return procs


def celery_batch(env: dict[str, str], args: list[str]) -> str:
    """Run ``batch --executor celery`` in its own process; returns the run id."""
    cmd = [sys.executable, "-m", "agentic_eval", "batch", DOMAIN, *args,
           "--executor", "celery", "--no-history"]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    found = re.search(r"^run: (\S+) \(finished\)$", done.stdout, re.M)
    if found is None:
        raise SystemExit(f"the celery batch failed ({done.returncode}): {done.stderr[-2000:]}")
    return found.group(1)


def in_process_store(tmp: Path) -> str:
    """The store of the runs made in this process: the environment's, or the default file."""
    return (
        os.environ.get("AGENTIC_EVAL_DATABASE_URL")
        or f"sqlite:///{tmp / 'home' / 'agentic-eval.db'}"
    )


def run_rows(url: str, run_id: str) -> tuple[float, list[int], dict[str, int]]:
    """The run's own time (opened to closed), its samples' turns in plan order (the order they
    were sent out in, which the ideal schedule follows; not the order they finished in) and its
    outcomes."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        started, finished, plan = conn.execute(
            text("SELECT started_at, finished_at, plan FROM eval_run WHERE id = :r"),
            {"r": run_id},
        ).one()
        found = conn.execute(
            text("SELECT case_id, sample, attempt, turns, outcome FROM eval_sample "
                 "WHERE run_id = :r"),
            {"r": run_id},
        ).all()  # fmt: skip
    engine.dispose()
    if isinstance(plan, str):  # SQLite's JSON as text
        plan = json.loads(plan)
    order = {(k["case"], k["epoch"], k.get("attempt", 1)): i for i, k in enumerate(plan["keys"])}
    by_key = sorted(found, key=lambda r: order[(r[0], r[1], r[2])])
    rows = [(turns, outcome) for *_, turns, outcome in by_key]
    outcomes: dict[str, int] = {}
    for _, outcome in rows:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    if isinstance(started, str):  # SQLite's text timestamps
        from datetime import datetime

        started, finished = datetime.fromisoformat(started), datetime.fromisoformat(finished)
    return (finished - started).total_seconds(), [t for t, _ in rows], outcomes


def celery_row(
    url: str, samples: list[str], latency: float, threads: int, logs: Path, fake_pid: int
) -> str:
    """The live batch on two thread-pool workers (``threads`` each), as one table row."""
    database = os.environ.get("AGENTIC_EVAL_DATABASE_URL", "")
    if not database.startswith("postgres") or not os.environ.get("AGENTIC_EVAL_BROKER_URL"):
        return (
            "two celery workers: skipped (set AGENTIC_EVAL_DATABASE_URL to a PostgreSQL URL and "
            "AGENTIC_EVAL_BROKER_URL to a Redis one)"
        )
    env = {**os.environ, "AGENTIC_EVAL_QUEUE": f"bench-{uuid.uuid4().hex[:8]}"}
    procs = start_workers(env, threads, 2, logs)
    try:
        live = ["--provider", "openai", "--base-url", url, "--model", "fake", "--retries", "0"]
        celery_batch(env, [*live, "--cases", "match-001"])  # the SDK imported in each worker
        before = [process_cpu(p.pid) for p in procs]
        fake_before = process_cpu(fake_pid)
        run_id = celery_batch(env, [*live, *samples])
        fake_after = process_cpu(fake_pid)
        after = [process_cpu(p.pid) for p in procs]
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
            proc.wait(timeout=30)
    spent = [a - b for a, b in zip(after, before, strict=True) if a is not None and b is not None]
    cpu = f"{sum(spent):>13.2f}" if len(spent) == len(procs) else f"{'-':>13}"
    return two_process_row(
        f"celery 2x{threads}", run_rows(database, run_id), 2 * threads, latency, cpu,
        (fake_before, fake_after),
    )  # fmt: skip


def two_process_row(
    label: str,
    measured: tuple[float, list[int], dict[str, int]],
    slots: int,
    latency: float,
    cpu: str,
    fake_cpu: tuple[float | None, float | None],
) -> str:
    """One table row of a run made by other processes (its time and turns from its rows)."""
    seconds, turns, outcomes = measured
    ideal = ideal_seconds(turns, slots, latency)
    before, after = fake_cpu
    fake = f"{after - before:>11.2f}" if before is not None and after is not None else f"{'-':>11}"
    extra = (seconds - ideal) * 1000 / sum(turns) * slots
    return (
        f"{label:>11} {sum(turns):>6} {seconds:>9.2f} {ideal:>8.2f} "
        f"{seconds / ideal:>6.2f} {extra:>14.1f} {cpu} {fake} {outcomes.get('passed', 0):>7} "
        f"{outcomes.get('transient', 0):>10}"
    )


def processes_row(
    url: str, samples: list[str], latency: float, threads: int, tmp: Path, fake_pid: int
) -> str:
    """The live batch on the local executor's two child processes (``threads`` in flight in
    each), as one table row; its time is the run's own (opened to closed, the children's start
    included), from its ``eval_run`` row in a SQLite store of its own."""
    database = f"sqlite:///{tmp / 'processes.db'}"
    env = {**os.environ, "AGENTIC_EVAL_DATABASE_URL": database}
    live = ["--provider", "openai", "--base-url", url, "--model", "fake", "--retries", "0"]
    cmd = [sys.executable, "-m", "agentic_eval", "batch", DOMAIN, *live, *samples,
           "--concurrency", str(threads), "--processes", "2", "--no-history"]  # fmt: skip
    fake_before = process_cpu(fake_pid)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    fake_after = process_cpu(fake_pid)
    found = re.search(r"^run: (\S+) \(finished\)$", done.stdout, re.M)
    if found is None:
        raise SystemExit(f"the --processes batch failed ({done.returncode}): {done.stderr[-2000:]}")
    return two_process_row(
        f"procs 2x{threads}", run_rows(database, found.group(1)), 2 * threads, latency,
        f"{'-':>13}", (fake_before, fake_after),
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=6, help="samples per case")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--celery-threads", type=int, default=32, help="per worker (2 workers)")
    parser.add_argument("--no-celery", action="store_true", help="skip the two Celery workers")
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    samples = ["--samples", str(args.samples)]
    with tempfile.TemporaryDirectory(prefix="agentic-eval-live-bench-") as tmp:
        os.environ["AGENTIC_EVAL_HOME"] = str(Path(tmp) / "home")
        os.chdir(tmp)
        run_batch(["--backend", "scripted", *samples])  # migrate the store, warm imports
        floor_s, _, floor_run = run_batch(["--backend", "scripted", *samples])
        n = len(floor_run["scorecard"]["cases"])
        print(
            f"live throughput: {DOMAIN}, {n} samples, openai backend -> fake-provider "
            f"(own process) at {args.latency_ms:g} ms per response; python "
            f"{sys.version.split()[0]}, {os.cpu_count()} cpus"
        )
        print(f"scripted, no HTTP (the harness alone): {floor_s:.2f} s")
        print(
            f"{'concurrency':>11} {'turns':>6} {'actual s':>9} {'ideal s':>8} {'ratio':>6} "
            f"{'extra ms/turn':>14} {'client cpu s':>13} {'fake cpu s':>11} {'passed':>7} "
            f"{'transient':>10}"
        )
        proc, url = serve(args.latency_ms)
        try:
            live = ["--provider", "openai", "--base-url", url, "--model", "fake"]
            run_batch([*live, "--cases", "match-001"])  # import the SDK, open the store
            for concurrency in args.concurrency:
                fake_before = process_cpu(proc.pid)
                seconds, cpu, run = run_batch(
                    [*live, *samples, "--concurrency", str(concurrency), "--retries", "0"]
                )
                fake_after = process_cpu(proc.pid)
                fake_cpu = (
                    f"{fake_after - fake_before:>11.2f}"
                    if fake_before is not None and fake_after is not None
                    else f"{'-':>11}"
                )
                # in plan order, as they were started (the scorecard lists them by case id)
                _, turns, _ = run_rows(in_process_store(Path(tmp)), run["run_id"])
                ideal = ideal_seconds(turns, concurrency, latency)
                totals = run["scorecard"]["totals"]
                extra = (seconds - ideal) * 1000 / sum(turns) * concurrency
                ratio = f"{seconds / ideal:>6.2f}" if ideal else f"{'-':>6}"
                print(
                    f"{concurrency:>11} {sum(turns):>6} {seconds:>9.2f} {ideal:>8.2f} {ratio} "
                    f"{extra:>14.1f} {cpu:>13.2f} {fake_cpu} {totals['passed']:>7} "
                    f"{totals['transient']:>10}"
                )
            print(processes_row(url, samples, latency, args.celery_threads, Path(tmp), proc.pid))
            if not args.no_celery:
                print(celery_row(url, samples, latency, args.celery_threads, Path(tmp), proc.pid))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("extra ms/turn: (actual - ideal) / turns x concurrency, the time a slot spends on a")
    print("turn beyond the provider's latency (harness, SDK, HTTP, the fake). client cpu s: the")
    print("run's CPU time in this process (one event loop: the bound at high concurrency);")
    print("fake cpu s: the fake-provider process's, over the same run. celery 2xN: two worker")
    print("processes of N threads each; client cpu s is theirs, actual s the run's own time.")
    print("procs 2xN: batch --processes 2 --concurrency N (two child processes of the local")
    print("executor); actual s is the run's own time, the children's start-up included.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
