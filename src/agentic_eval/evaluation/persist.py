"""Turn sample runs into store rows, and keep them flowing to the store in small batches."""

from __future__ import annotations

import hashlib
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
    templates: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The ``eval_sample`` columns of one sample run: its case, epoch (``sample``) and attempt
    (the rejection round) each in its own column; ``stamp``: a corpus sample's source job and
    that job's first human verdict.

    The transcript itself is stored in the row when no file holds it (``transcript_ref`` None),
    so every run keeps its transcripts, live runs included. With ``templates``, it is stored
    without its request template, which is added there (by sha256) for
    :meth:`~agentic_eval.store.db.Store.add_samples` to keep once
    (:mod:`agentic_eval.store.sample_writes`).
    """
    r = run.result
    keep = run.transcript is not None and transcript_ref is None
    text, template, at = None, None, None
    if keep:
        parts = run.parts() if templates is not None and run.parts is not None else None
        if parts is not None and templates is not None and parts.request != b"null":
            head = parts.head.decode("utf-8")
            text, at = head + parts.tail.decode("utf-8"), len(head)
            template = _template_key(parts.request, templates)
        else:
            text = run.transcript_text()
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
        "transcript": text,
        "reproduced": run.reproduced,
        "source_job_id": None if stamp is None else stamp.source_job_id,
        "case_verdict": None if stamp is None else stamp.case_verdict,
        "request_template": template,
        "request_at": at,
    }


_TEMPLATES: dict[int, tuple[bytes, str, str]] = {}
"""Request templates seen (by the identity of their bytes: the loop's request key builder
makes them once per suite and set of tools, so every sample shares one object), each with its
sha256 and text; the entry holds the bytes, so their id cannot be reused while it is there."""


def _template_key(request: bytes, templates: dict[str, str]) -> str:
    """The sha256 of a request template's canonical JSON, the template added to ``templates``."""
    hit = _TEMPLATES.get(id(request))
    if hit is None or hit[0] is not request:
        if len(_TEMPLATES) >= 64:
            _TEMPLATES.clear()
        hit = (request, hashlib.sha256(request).hexdigest(), request.decode("utf-8"))
        _TEMPLATES[id(request)] = hit
    templates[hit[1]] = hit[2]
    return hit[1]


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
        self.templates: dict[str, str] = {}
        """The request templates the queued rows' transcripts were stored without (by
        sha256), sent with every batch until one is written (then the store holds them)."""
        self.stored: set[str] = set()
        """Templates written with an earlier batch."""
        self.since = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        """Queue a row; flush when the batch is full or old."""
        self.rows.append(row)
        if len(self.rows) >= self.max_rows or time.monotonic() - self.since >= self.max_age:
            self.flush()

    def take(self) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """Hand the queued rows out unwritten, with the templates they need that this buffer
        has not written (for a caller that writes them itself: a worker's group commit)."""
        rows, self.rows = self.rows, []
        return rows, {k: v for k, v in self.templates.items() if k not in self.stored}

    def flush(self) -> None:
        """Write the queued rows."""
        if self.rows:
            rows, self.rows = self.rows, []
            new = {k: v for k, v in self.templates.items() if k not in self.stored}
            self.store.add_samples(self.run_id, rows, new)
            self.stored.update(new)
        self.since = time.monotonic()
