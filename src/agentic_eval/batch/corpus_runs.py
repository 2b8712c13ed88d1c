"""``replay_corpus``: would the agent have passed on the jobs a human already decided?

The corpus (every step an operator decided, on jobs people worked, newest job first, judged by
its first decision) as one batch run: each case rebuilt as its first attempt saw it, each sample
stamped with its source job and that job's verdict, the gate read from the store over the
``approved`` cases only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch.plan import GateMode
from agentic_eval.batch.planning import corpus_plan
from agentic_eval.batch.run import BatchSummary, run_agent_batch
from agentic_eval.core.settings import RunParameters
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.store.db import Store


async def replay_corpus(
    store: Store,
    spec: BackendSpec,
    parameters: RunParameters | None = None,
    *,
    template: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    origins: Collection[str] | None = None,
    samples: int = 1,
    concurrency: int = 1,
    gate: GateMode = "rate",
    processes: int = 1,
    on_case: Callable[[CaseRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> BatchSummary:
    """Replay the corpus the filters select ``samples`` times on the backend ``spec``; the
    summary's gate judges the approved cases, its ``verdicts`` count the samples of each.

    Args:
        store: Where the jobs are, and where the run goes.
        spec: The agent: scripted or live.
        parameters: Limits, approval mode and gate thresholds (defaults when None).
        template: Only jobs of this workflow template.
        since: Only jobs created at or after this moment.
        until: Only jobs created before this moment.
        limit: At most this many cases, newest job first.
        origins: Job origins (default real and imported: the jobs people worked).
        samples: Samples (epochs) of each case.
        concurrency: Samples in flight at once.
        gate: ``rate`` or ``upper-bound``.
        processes: Child processes to run the samples in (1: this process).
        on_case: Called with each sample as it finishes (in this process).
        should_stop: Polled before each sample starts; True stops the run (resumable).

    Raises:
        BatchError: An empty selection, or one this installation cannot replay (see
            :func:`~agentic_eval.batch.planning.corpus_plan`).
    """
    plan = corpus_plan(
        store, spec, parameters or RunParameters(), template=template, since=since,
        until=until, limit=limit, origins=origins, samples=samples, concurrency=concurrency,
        gate=gate,
    )  # fmt: skip
    return await run_agent_batch(
        store, plan, on_case=on_case, should_stop=should_stop, processes=processes
    )
