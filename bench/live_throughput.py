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

Run: ``python bench/live_throughput.py`` (about two minutes on 2 cores).
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=6, help="samples per case")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
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
                turns = [c["turns"] for c in run["scorecard"]["cases"]]
                ideal = ideal_seconds(turns, concurrency, latency)
                totals = run["scorecard"]["totals"]
                extra = (seconds - ideal) * 1000 / sum(turns) * concurrency
                ratio = f"{seconds / ideal:>6.2f}" if ideal else f"{'-':>6}"
                print(
                    f"{concurrency:>11} {sum(turns):>6} {seconds:>9.2f} {ideal:>8.2f} {ratio} "
                    f"{extra:>14.1f} {cpu:>13.2f} {fake_cpu} {totals['passed']:>7} "
                    f"{totals['transient']:>10}"
                )
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("extra ms/turn: (actual - ideal) / turns x concurrency, the time a slot spends on a")
    print("turn beyond the provider's latency (harness, SDK, HTTP, the fake). client cpu s: the")
    print("run's CPU time in this process (one event loop: the bound at high concurrency);")
    print("fake cpu s: the fake-provider process's, over the same run.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
