"""tau-bench as a peer benchmark: its retail and airline environments read from a checkout the
user points at (nothing of tau-bench is in this package: its data, tasks, policy and tool schemas
are read from the checkout; its tools are re-implemented here).

    from agentic_eval.domains.taubench import TauBenchDomain
    retail = TauBenchDomain("/path/to/tau-bench")      # in an eval file: agentic-eval run it
    airline = TauBenchDomain("/path/to/tau-bench", "airline")

or ``agentic-eval import tau-bench /path/to/tau-bench --into evals/ [--env retail|airline]``.
"""

from __future__ import annotations

from agentic_eval.domains.taubench.checkout import GoldAction, TauBenchError, TauTask
from agentic_eval.domains.taubench.database import TauDatabase, consistent_hash, to_hashable
from agentic_eval.domains.taubench.domain import TauBenchDomain
from agentic_eval.domains.taubench.importing import (
    EVAL_FILE,
    domains,
    eval_file_name,
    write_eval_file,
)
from agentic_eval.domains.taubench.judging import TAU_REWARD, Reward, reward

__all__ = [
    "EVAL_FILE",
    "TAU_REWARD",
    "GoldAction",
    "Reward",
    "TauBenchDomain",
    "TauBenchError",
    "TauDatabase",
    "TauTask",
    "consistent_hash",
    "domains",
    "eval_file_name",
    "reward",
    "to_hashable",
    "write_eval_file",
]
