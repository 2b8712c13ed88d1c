"""Batch cost in instructions per scripted sample, counted by valgrind's callgrind: repeatable on
a shared, noisy machine where ``batch_bench.py``'s wall-clock figures are not.

For each mode it runs retail_ops' 34 cases x E epochs in a fresh process under
``valgrind --tool=callgrind`` for two values of E; the difference divided by the difference in
samples is the per-sample cost (start-up and imports cancel out; the total for the larger E
keeps them). Modes: ``floor`` (the plain loop, ``run_tasks`` with no store), ``sqlite``
(``run_agent_batch`` on a SQLite file: the store sink, and finishing the run from its rows) and
``sqlite2`` (the same with ``processes=2``, counted in the parent and both children). To
compare with another commit, run the same script with that commit's package first on the path
(``git worktree add /tmp/base <commit>``, then ``PYTHONPATH=/tmp/base/src python
bench/batch_instructions.py``).

Run: ``python bench/batch_instructions.py [--epochs 2 6] [--modes floor sqlite sqlite2]`` (needs
valgrind; a few minutes).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


FLUSH_BY_COUNT = """\
# The store sink flushes every 200 rows or every 0.5 s: a real run (1,000 samples/s) flushes by
# count, one slowed ~50x under callgrind would flush by age every few samples, counting commits
# a real run does not make (and varying with the machine's load). By count only, in every
# process of the run (a child started as a fresh interpreter imports this first).
from agentic_eval.evaluation import persist

persist.SampleBuffer.__init__.__defaults__ = (200, float("inf"))
"""


def _child(mode: str, epochs: int, work: Path) -> None:
    sys.path.insert(0, str(HERE))
    from agentic_eval.store import Store
    from batch_bench import _batch, _floor, _plan

    plan = _plan(epochs)
    exec(FLUSH_BY_COUNT)  # as sitecustomize does in a child interpreter
    if mode == "floor":
        _floor(plan)
        return
    store = Store(f"sqlite:///{work / f'{mode}-{epochs}.db'}")
    store.migrate()
    _batch(store, plan, processes=2 if mode == "sqlite2" else 1)
    store.close()


def _instructions(mode: str, epochs: int, work: Path) -> int:
    """Instructions counted in every process of the run (``sqlite2``: the parent and its two
    children, forked or fresh interpreters)."""
    out = work / f"callgrind-{mode}-{epochs}.%p.out"
    # A fixed hash seed: string hashing sets dict and set layouts, which move the count by a
    # few per cent from one process to the next.
    site = work / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(FLUSH_BY_COUNT)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": path}
    me = [sys.executable, __file__, "--child", mode, str(epochs), str(work)]
    # A forked child starts with its parent's counts: zeroed in the child as it starts (only a
    # forked child runs PyOS_AfterFork_Child; a fresh interpreter starts from nothing).
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--trace-children=yes",
         "--zero-before=PyOS_AfterFork_Child", f"--callgrind-out-file={out}", *me],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    total = 0
    for each in work.glob(f"callgrind-{mode}-{epochs}.*.out"):
        found = re.search(r"^summary:\s*(\d+)", each.read_text(), re.MULTILINE)
        assert found is not None, f"no summary line in {each}"
        total += int(found[1])
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, nargs=2, default=[2, 6], help="two epoch counts")
    parser.add_argument(
        "--modes", nargs="+", default=["floor", "sqlite"], help="floor, sqlite, sqlite2"
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), Path(args.child[2]))
        return
    low, high = args.epochs
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            a = _instructions(mode, low, Path(tmp))
            b = _instructions(mode, high, Path(tmp))
            per = (b - a) / (34 * (high - low))
            print(
                f"{mode}: {per / 1e6:.3f} M instructions per sample ({low} -> {high} epochs); "
                f"{b / 1e9:.3f} G in all for {34 * high} samples"
            )


if __name__ == "__main__":
    main()
