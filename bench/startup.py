"""Start-up benchmark: how long ``agentic-eval`` takes to answer ``--help``, ``list`` and
``show``, side by side with ``import pydantic_evals`` and ``import inspect_ai`` measured in the
same run (issue 20: each command under a quarter of ``import pydantic_evals``).

The two peers are installed from PyPI into a throwaway virtualenv cached outside the repository
(``~/.cache/agentic-eval-bench/peers``); nothing of them is imported by agentic-eval. Every
command runs in a fresh process; the rounds alternate the commands so that a busy machine
slows all of them alike, and the figure is the median of the rounds.

Run: ``python bench/startup.py [--rounds 15]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

PEERS = Path.home() / ".cache" / "agentic-eval-bench" / "peers"
PEER_PACKAGES = ("pydantic-evals", "inspect-ai")


def _peers() -> Path:
    """The peers' interpreter (created and installed on first use)."""
    python = PEERS / "bin" / "python"
    marker = PEERS / ".installed"
    if not marker.exists():
        print(f"installing {', '.join(PEER_PACKAGES)} into {PEERS} (once)...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=True).create(PEERS)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=True, timeout=1800
        )
        marker.write_text("ok\n")
    return python


def _seconds(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("agentic-eval"))
    peers = str(_peers())
    home = tempfile.mkdtemp(prefix="agentic-eval-startup-")
    env = {**os.environ, "AGENTIC_EVAL_HOME": home}
    commands: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import pydantic_evals": [peers, "-c", "import pydantic_evals"],
        "import inspect_ai": [peers, "-c", "import inspect_ai"],
        "agentic-eval --version": [exe, "--version"],
        "agentic-eval --help": [exe, "--help"],
        "agentic-eval run --help": [exe, "run", "--help"],
        "agentic-eval batch --help": [exe, "batch", "--help"],
        "agentic-eval report --help": [exe, "report", "--help"],
        "agentic-eval history --help": [exe, "history", "--help"],
        "agentic-eval view --help": [exe, "view", "--help"],
        "agentic-eval list domains": [exe, "list", "domains"],
        "agentic-eval list agents": [exe, "list", "agents"],
        "agentic-eval list cases": [exe, "list", "cases"],
        "agentic-eval list recordings": [exe, "list", "recordings"],
        "agentic-eval show gate-001": [exe, "show", "gate-001", "--agent", "naive"],
    }
    for argv in commands.values():  # warm the file cache and byte-code once
        _seconds(argv, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, argv in commands.items():
            times[name].append(_seconds(argv, env))
    median = {name: statistics.median(t) for name, t in times.items()}
    base = median["import pydantic_evals"]
    print(f"start-up, median of {args.rounds} alternating rounds (same run, same machine):")
    print(f"{'command':>28}  {'median ms':>9}  {'min ms':>7}  {'vs import pydantic_evals':>24}")
    for name, t in times.items():
        print(
            f"{name:>28}  {median[name] * 1000:9.0f}  {min(t) * 1000:7.0f}  "
            f"{median[name] / base:24.2f}"
        )
    worst = max(v for k, v in median.items() if k.startswith("agentic-eval") and "version" not in k)
    print(
        f"slowest agentic-eval command: {worst / base:.2f}x import pydantic_evals (target < 0.25)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
