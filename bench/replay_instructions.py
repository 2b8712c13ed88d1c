"""Replay cost in instructions per case, counted by valgrind's callgrind: repeatable on a shared,
noisy machine where wall-clock figures are not.

It records N bench cases (see ``replay_bench.py``), then replays them in a fresh process under
``valgrind --tool=callgrind`` for two sizes; the difference divided by the difference in cases is
the per-case cost (start-up and imports cancel out). To compare with another commit, run the same
script from a checkout of it (``git worktree add /tmp/base <commit>``); for a commit from before
the task-spec API (such as the first release, 9101664), ``_record_or_replay`` must call that
commit's ``run_session(domain, cases, backend, settings, mode, store=store)`` instead.

Run: ``python bench/replay_instructions.py [--cases 100 300]`` (needs valgrind; a few minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


async def _record_or_replay(n: int, rec: Path, db: Path, replay: bool) -> None:
    sys.path.insert(0, str(HERE))
    import replay_bench as rb
    from agentic_eval.backends import ScriptedBackend
    from agentic_eval.evaluation import RunSettings, run_session
    from agentic_eval.recordings import RecordingBackend, ReplayBackend
    from agentic_eval.store import Store

    domain = rb.Bench(n)
    settings = RunSettings(model="scripted:bench")
    specs = domain.task_specs(domain.build_cases(), settings.limits)
    store = Store(f"sqlite:///{db}")
    store.migrate()
    if replay:
        backend = ReplayBackend(rec / "bench" / "bench")
        result = await run_session("bench", specs, backend, settings, "replay", store=store)
        assert result.reproduced, result.problems
    else:
        backend = RecordingBackend(ScriptedBackend("bench", rb.agent), rec)
        await run_session("bench", specs, backend, settings, "scripted", store=store)
    store.close()


def _instructions(n: int, work: Path) -> int:
    rec, db = work / f"rec-{n}", work / f"db-{n}.sqlite"
    me = [sys.executable, __file__, "--child", str(n), str(rec), str(db)]
    # A fixed hash seed: string hashing sets dict and set layouts, which move the count by a
    # few per cent from one process to the next. (The store's flush by age still moves it a
    # little: a slower run flushes more often.)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([*me, "record"], check=True, env=env)
    out = work / f"callgrind-{n}.out"
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *me, "replay"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs=2, default=[100, 300])
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        n, rec, db, what = args.child
        asyncio.run(_record_or_replay(int(n), Path(rec), Path(db), what == "replay"))
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    small, large = sorted(args.cases)
    with tempfile.TemporaryDirectory(prefix="agentic-eval-instr-") as tmp:
        counts = {n: _instructions(n, Path(tmp)) for n in (small, large)}
    per_case = (counts[large] - counts[small]) / (large - small)
    print(
        f"replay under callgrind: {small} cases {counts[small]:,} instructions, "
        f"{large} cases {counts[large]:,}"
    )
    print(f"per replayed case: {per_case / 1e6:.3f} M instructions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
