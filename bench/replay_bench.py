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
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentic_eval import Call, CaseSpec, CheckResult, Domain, Submit, ToolRegistry
from agentic_eval.backends import AgentTask, RecordingBackend, ReplayBackend, ScriptedBackend
from agentic_eval.evaluation import RunSettings
from agentic_eval.evaluation.session import run_session
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

    def output_model(self, case: CaseSpec) -> type[BaseModel]:
        return Answer

    def check_output(self, case: CaseSpec, output: BaseModel, env: Any) -> list[CheckResult]:
        assert isinstance(output, Answer)
        ok = output.answer == case.expected["answer"]
        return [CheckResult(name="answer", passed=ok)]

    def check_trace(self, case: CaseSpec, trace: Any, env: Any) -> list[CheckResult]:
        return []


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
    store = Store(f"sqlite:///{work / f'bench-{n}.db'}")
    store.migrate()
    rec_root = work / f"rec-{n}"
    recorder = RecordingBackend(ScriptedBackend("bench", agent), rec_root)
    t0 = time.perf_counter()
    recorded = await run_session(domain, cases, recorder, settings, "scripted", store=store)
    record_s = time.perf_counter() - t0
    assert recorded.run.scorecard.totals.passed == n, recorded.run.scorecard.totals
    t0 = time.perf_counter()
    replay = ReplayBackend(rec_root / "bench" / "bench")
    replayed = await run_session(domain, cases, replay, settings, "replay", store=store)
    replay_s = time.perf_counter() - t0
    assert replayed.reproduced, replayed.problem
    floor_s = floor(cases, work / f"floor-{n}.jsonl")
    store.close()
    return {"record": record_s, "replay": replay_s, "floor": floor_s}


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
        f"{'overhead ms/case':>17} {'ratio':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="agentic-eval-bench-") as tmp:
        for n in args.cases:
            r = asyncio.run(measure(n, Path(tmp)))
            per = {k: v * 1000 / n for k, v in r.items()}
            overhead = per["replay"] - per["floor"]
            print(
                f"{n:>6} {per['record']:>15.3f} {per['replay']:>15.3f} {per['floor']:>14.4f} "
                f"{overhead:>17.3f} {per['replay'] / per['floor']:>7.0f}x"
            )
    print(f"agentic-eval --version start-up: {version_startup() * 1000:.0f} ms (median of 7)")
    print("targets: replay overhead <= 0.5 ms/case; --version < 300 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
