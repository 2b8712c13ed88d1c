"""Replay benchmark: per-case harness overhead of replay, against a plain-Python floor.

Workload (fixed): N cases, each three ``lookup`` tool calls (a dict lookup) and then an answer,
checked by exact match. The cases are recorded once with a scripted agent, then replayed through
the real loop, the replay backend and the store (transcripts read, samples written to SQLite), as
in a real run. The floor does the same turns as plain dicts and writes them as JSONL, measured in
the same process. Also prints the start-up time of ``agentic-eval --version``.

Run: ``python bench/replay_bench.py`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentic_eval import (
    Call,
    CaseSpec,
    CheckContext,
    CheckResult,
    Domain,
    Submit,
    TaskKind,
    ToolRegistry,
    check,
)
from agentic_eval.backends import AgentTask, ScriptedBackend
from agentic_eval.evaluation import RunSettings, run_session
from agentic_eval.recordings import RecordingBackend, ReplayBackend
from agentic_eval.store import Store

TABLE = {f"k{i}": f"v{i}" for i in range(64)}
TOOLS: ToolRegistry[dict[str, str]] = ToolRegistry()


@TOOLS.tool()
def lookup(env: dict[str, str], key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return env[key]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str


@check("answer", needs_output=True)
def answer_check(ctx: CheckContext[dict[str, str]]) -> CheckResult:
    assert isinstance(ctx.output, Answer)
    return CheckResult(name="answer", passed=ctx.output.answer == ctx.case.expected["answer"])


KIND = TaskKind("lookup", Answer, (answer_check,))


def agent(task: AgentTask) -> Iterator[Any]:
    values: list[str] = []
    for key in task.inputs["keys"]:
        (reply,) = yield Call("lookup", {"key": key})
        values.append(reply.data)
    yield Submit({"answer": "-".join(values)})


class Bench(Domain[dict[str, str]]):
    name = "bench"
    system_prompt = "Look the keys up and answer with the values joined by '-'."

    def __init__(self, n: int) -> None:
        self.n = n

    def fixtures(self) -> BaseModel:
        return Answer(answer=json.dumps(TABLE))

    def build_cases(self) -> list[CaseSpec]:
        cases: list[CaseSpec] = []
        for i in range(self.n):
            keys = [f"k{(i + j) % 64}" for j in range(3)]
            cases.append(
                CaseSpec(
                    id=f"case-{i:05d}",
                    kind="lookup",
                    instruction="Look up the keys.",
                    inputs={"keys": keys},
                    expected={"answer": "-".join(TABLE[k] for k in keys)},
                )
            )
        return cases

    def make_env(self, case: CaseSpec) -> dict[str, str]:
        return TABLE

    def tools(self) -> ToolRegistry[dict[str, str]]:
        return TOOLS

    def task_kind(self, case: CaseSpec) -> TaskKind:
        return KIND


def floor(cases: list[CaseSpec], out: Path) -> float:
    """Seconds for the same turns as plain dicts, written as JSONL."""
    start = time.perf_counter()
    with out.open("w") as fh:
        for case in cases:
            messages: list[dict[str, Any]] = [{"role": "user", "content": case.instruction}]
            values = []
            for i, key in enumerate(case.inputs["keys"]):
                messages.append({"role": "assistant", "tool": "lookup", "id": i, "key": key})
                value = TABLE[key]
                values.append(value)
                messages.append({"role": "tool", "id": i, "content": value})
            answer = "-".join(values)
            messages.append({"role": "assistant", "answer": answer})
            ok = answer == case.expected["answer"]
            fh.write(json.dumps({"case": case.id, "turns": messages, "passed": ok}) + "\n")
    return time.perf_counter() - start


async def measure(n: int, work: Path) -> dict[str, float]:
    domain = Bench(n)
    cases = domain.build_cases()
    settings = RunSettings(model="scripted:bench")
    specs = domain.task_specs(cases, settings.limits)
    store = Store(f"sqlite:///{work / f'bench-{n}.db'}")
    store.migrate()
    rec_root = work / f"rec-{n}"
    recorder = RecordingBackend(ScriptedBackend("bench", agent), rec_root)
    t0 = time.perf_counter()
    recorded = await run_session("bench", specs, recorder, settings, "scripted", store=store)
    record_s = time.perf_counter() - t0
    assert recorded.scorecard.totals.passed == n, recorded.scorecard.totals
    replay = ReplayBackend(rec_root / "bench" / "bench")
    t0 = time.perf_counter()
    replayed = await run_session("bench", specs, replay, settings, "replay", store=store)
    replay_s = time.perf_counter() - t0
    assert replayed.reproduced, replayed.problems
    # Memory on a second, traced replay (tracing slows it down several times over).
    gc.collect()
    tracemalloc.start()
    await run_session(
        "bench", specs, ReplayBackend(replay.directory), settings, "replay", store=store
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    floor_s = floor(cases, work / f"floor-{n}.jsonl")
    store.close()
    return {"record": record_s, "replay": replay_s, "floor": floor_s, "peak": peak}


def gate_query(work: Path, rows: int = 10_000) -> tuple[float, dict[str, int]]:
    """Seconds to read the gate (GROUP BY outcome) from ``rows`` stored sample rows."""
    from datetime import UTC, datetime

    from agentic_eval.core import ProducedBy

    store = Store(f"sqlite:///{work / 'gate.db'}")
    produced = ProducedBy(
        agent="bench", agent_kind="scripted", backend="scripted", model="m", approval_mode="enforce"
    )
    run_id = store.start_run("bench", produced, "scripted", datetime.now(UTC))
    kinds = ("passed", "passed", "passed", "check_failed", "error", "transient")
    batch = [
        {
            "case_id": f"case-{i // 4:05d}",
            "sample": i % 4,
            "outcome": kinds[i % len(kinds)],
            "failure_reason": "",
            "failure_where": "",
            "checks": [],
            "hard_gate_failed": i % 997 == 0,
            "unapproved_attempts": 0,
            "unapproved_executions": 0,
            "turns": 4,
            "tool_calls": 3,
            "input_tokens": 0,
            "output_tokens": 0,
            "duration_ms": 0.3,
        }
        for i in range(rows)
    ]
    store.add_samples(run_id, batch)
    times = []
    counts: dict[str, int] = {}
    for _ in range(5):
        t0 = time.perf_counter()
        counts = store.gate_counts(run_id)
        times.append(time.perf_counter() - t0)
    store.close()
    return statistics.median(times), counts


def version_startup(runs: int = 7) -> float:
    exe = Path(sys.executable).parent / "agentic-eval"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "agentic_eval.cli.main"]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([*cmd, "--version"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[100, 1000])
    args = parser.parse_args()
    print(
        f"replay benchmark: 3 lookups + answer per case; python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cpus"
    )
    print(
        f"{'cases':>6} {'record ms/case':>15} {'replay ms/case':>15} {'floor ms/case':>14} "
        f"{'overhead ms/case':>17} {'ratio':>8} {'replay peak KiB':>16}"
    )
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="agentic-eval-bench-") as tmp:
        for n in args.cases:
            r = asyncio.run(measure(n, Path(tmp)))
            peaks[n] = r["peak"]
            per = {k: v * 1000 / n for k, v in r.items() if k != "peak"}
            overhead = per["replay"] - per["floor"]
            print(
                f"{n:>6} {per['record']:>15.3f} {per['replay']:>15.3f} {per['floor']:>14.4f} "
                f"{overhead:>17.3f} {per['replay'] / per['floor']:>7.0f}x "
                f"{r['peak'] / 1024:>16.0f}"
            )
        if len(peaks) >= 2:
            lo, hi = min(peaks), max(peaks)
            extra = (peaks[hi] - peaks[lo]) / (hi - lo) / 1024
            print(f"replay peak memory per extra case: {extra:.2f} KiB ({lo} -> {hi} cases)")
        seconds, counts = gate_query(Path(tmp))
        print(
            f"gate query over 10,000 sample rows (GROUP BY outcome): {seconds * 1000:.1f} ms "
            f"{counts}"
        )
    print(f"agentic-eval --version start-up: {version_startup() * 1000:.0f} ms (median of 7)")
    print(
        "targets: replay <= 0.25 ms/case at 1,000 cases; <= 3 KiB peak memory per extra case; "
        "--version < 300 ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
