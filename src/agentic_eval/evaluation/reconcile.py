"""A killed run keeps what it finished: its recorded transcripts become sample rows.

Sample rows reach the store in small batches (:class:`~agentic_eval.evaluation.persist.
SampleBuffer`); a SIGKILL or a power cut loses the rows of the last batch, while a recording run
has already written those samples' transcripts. When such a run is next read (the next run
finds it abandoned), :func:`reconcile_run` adds a row for every transcript the run recorded that
has no row yet, judged exactly as the transcript says. A sample is never counted twice: a
transcript whose (case, epoch) already has a row is left alone (the store keys its rows by
(run, case, epoch); a recorded domain run's samples each have one attempt).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentic_eval.core.transcript import Transcript
from agentic_eval.evaluation.gate import case_result
from agentic_eval.evaluation.persist import sample_row
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.recordings.files import RecordingError, read_transcript
from agentic_eval.recordings.layout import LabelError, agent_dir, transcript_name
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalRun


@dataclass(frozen=True)
class Reconciled:
    """What :func:`reconcile_run` did: rows added, and files it could not read."""

    added: int
    unreadable: tuple[str, ...] = ()
    folder: Path | None = None
    partial_removed: int = 0
    """Half-written temporary files the killed run left in its folder, removed."""


def recorded_folder(run: EvalRun) -> Path | None:
    """The folder a recorded run wrote its transcripts into (None: the run was not recorded)."""
    spec: dict[str, Any] = run.backend_spec or {}
    root = spec.get("recordings")
    if not spec.get("record") or not isinstance(root, str):
        return None
    try:
        return agent_dir(Path(root), run.domain, run.agent)
    except LabelError:
        return None


def reconcile_run(store: Store, run: EvalRun) -> Reconciled:
    """Add a sample row for each transcript ``run`` recorded that has none.

    A transcript counts as the run's when it lies in the run's recording folder, is of the
    run's suite and agent, and was written after the run started.
    """
    folder = recorded_folder(run)
    if folder is None or not folder.is_dir():
        return Reconciled(0, folder=folder)
    have = {(r.case_id, r.sample) for r in store.sample_verdicts([run.id]).get(run.id, [])}
    started = _aware(run.started_at).timestamp()
    rows: list[dict[str, Any]] = []
    unreadable: list[str] = []
    for path in sorted(folder.glob("*.json")):
        if path.name == "scorecard.json":
            continue
        try:
            if path.stat().st_mtime < started:
                continue
            t = read_transcript(path)
        except (OSError, RecordingError) as exc:
            unreadable.append(f"{path.name}: {exc}")
            continue
        if (
            t.domain != run.domain
            or t.provenance.agent != run.agent
            or path.name != transcript_name(t.case_id, t.sample, t.attempt)
            or (t.case_id, t.sample) in have
        ):
            continue
        have.add((t.case_id, t.sample))
        rows.append(_row(t, str(path)))
    if rows:
        store.add_samples(run.id, rows)
    removed = 0
    for partial in folder.glob(".*.tmp"):  # a transcript the killed writer never finished
        with contextlib.suppress(OSError):
            if partial.stat().st_mtime >= started:
                partial.unlink()
                removed += 1
    return Reconciled(len(rows), tuple(unreadable), folder, removed)


def _row(t: Transcript, ref: str) -> dict[str, Any]:
    """The sample row of a recorded transcript, as ``run_session`` would have written it (no
    timing survives a kill: it started and finished when the file was written)."""
    written = datetime.fromtimestamp(Path(ref).stat().st_mtime, UTC)
    tokens = [turn.response.usage for turn in t.turns]
    run = CaseRun(
        None,
        case_result(t),
        written,
        written,
        0.0,
        sum(u.input_tokens for u in tokens),
        sum(u.output_tokens for u in tokens),
        None,
        attempt=t.attempt,
    )
    return sample_row(run, ref)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
