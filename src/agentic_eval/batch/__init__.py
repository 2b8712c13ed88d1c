"""The ship decision: a run is a stored plan, opened, run (anywhere, resumably) and closed with
its gate read from the store. ``run_agent_batch`` runs a plan N samples at a time;
``replay_corpus`` runs the corpus of human-decided jobs."""

from agentic_eval.batch.backends import build_backend, scripted_agents
from agentic_eval.batch.corpus_runs import replay_corpus
from agentic_eval.batch.plan import (
    PLAN_SCHEMA_VERSION,
    CorpusEntry,
    CorpusSelection,
    GateMode,
    RunPlan,
    SampleKey,
)
from agentic_eval.batch.run import (
    BatchError,
    BatchSummary,
    RunSink,
    StoreSink,
    close_run,
    open_run,
    plan_of,
    run_agent_batch,
    run_samples,
    summary,
)

__all__ = [
    "PLAN_SCHEMA_VERSION",
    "BatchError",
    "BatchSummary",
    "CorpusEntry",
    "CorpusSelection",
    "GateMode",
    "RunPlan",
    "RunSink",
    "SampleKey",
    "StoreSink",
    "build_backend",
    "close_run",
    "open_run",
    "plan_of",
    "replay_corpus",
    "run_agent_batch",
    "run_samples",
    "scripted_agents",
    "summary",
]
