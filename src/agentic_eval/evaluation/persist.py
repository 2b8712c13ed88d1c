"""Turn sample runs into store rows, and keep them flowing to the store in small batches."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.store.db import Store


@dataclass(frozen=True)
class CorpusStamp:
    """What a corpus sample is stamped with: the real job it replayed and the first human
    verdict on that job's step (only ``approved`` samples are judged)."""

    source_job_id: str
    case_verdict: Literal["approved", "rejected"]


def sample_row(
    run: CaseRun,
    transcript_ref: str | None,
    worker: str | None = None,
    stamp: CorpusStamp | None = None,
) -> dict[str, Any]:
    """The ``eval_sample`` columns of one sample run: its case, epoch (``sample``) and attempt
    (the rejection round) each in its own column; ``stamp``: a corpus sample's source job and
    that job's first human verdict.

    The transcript itself is stored in the row when no file holds it (``transcript_ref`` None),
    so every run keeps its transcripts, live runs included.
    """
    r = run.result
    keep = run.transcript is not None and transcript_ref is None
    return {
        "case_id": r.case_id,
        "sample": r.sample,
        "attempt": run.attempt,
        "worker_id": worker,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "outcome": r.outcome.kind,
        "failure_reason": r.outcome.reason,
        "failure_where": r.outcome.where,
        # each check's own serialiser, without model_dump's per-call argument handling
        "checks": [type(c).__pydantic_serializer__.to_python(c, mode="json") for c in r.checks],
        "hard_gate_failed": r.hard_gate_failed,
        "unapproved_attempts": r.unapproved_attempts,
        "unapproved_executions": r.unapproved_executions,
        "turns": r.turns,
        "tool_calls": r.tool_calls,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "duration_ms": round(run.duration_ms, 3),
        "transcript_ref": transcript_ref,
        "transcript": run.transcript_text() if keep else None,
        "reproduced": run.reproduced,
        "source_job_id": None if stamp is None else stamp.source_job_id,
        "case_verdict": None if stamp is None else stamp.case_verdict,
    }


class SampleBuffer:
    """Writes sample rows in small batches: at most ``max_rows`` rows or ``max_age`` seconds old.

    A row per transaction costs more than a whole replayed case, so rows are batched. The
    caller flushes in ``finally`` and on SIGINT/SIGTERM, so those lose nothing; a SIGKILL (or a
    power cut) loses at most the samples judged in the last ``max_age`` seconds, whose
    transcripts a recording run has already written.
    """

    def __init__(self, store: Store, run_id: str, max_rows: int = 200, max_age: float = 0.5):
        self.store, self.run_id = store, run_id
        self.max_rows, self.max_age = max_rows, max_age
        self.rows: list[dict[str, Any]] = []
        self.since = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        """Queue a row; flush when the batch is full or old."""
        self.rows.append(row)
        if len(self.rows) >= self.max_rows or time.monotonic() - self.since >= self.max_age:
            self.flush()

    def flush(self) -> None:
        """Write the queued rows."""
        if self.rows:
            rows, self.rows = self.rows, []
            self.store.add_samples(self.run_id, rows)
        self.since = time.monotonic()
