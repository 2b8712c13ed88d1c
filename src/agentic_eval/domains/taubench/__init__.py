"""tau-bench as a peer benchmark: its retail environment read from a checkout the user points at
(nothing of tau-bench is in this package: its data, tasks, policy and tool schemas are read from
the checkout; its tools are re-implemented here).

    from agentic_eval.domains.taubench import TauBenchDomain
    retail = TauBenchDomain("/path/to/tau-bench")      # in an eval file: agentic-eval run it

or ``agentic-eval import tau-bench /path/to/tau-bench --into evals/``.
"""

from __future__ import annotations

from agentic_eval.domains.taubench.checkout import GoldAction, TauBenchError, TauTask
from agentic_eval.domains.taubench.database import TauDatabase, consistent_hash, to_hashable
from agentic_eval.domains.taubench.domain import TauBenchDomain
from agentic_eval.domains.taubench.importing import EVAL_FILE, domains, write_eval_file
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
    "reward",
    "to_hashable",
    "write_eval_file",
]
