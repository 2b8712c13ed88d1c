"""Replay a workflow scenario's recordings in real jobs: every recorded epoch in a freshly
seeded job, then each of its recorded rejection rounds, the operator rejecting each with the
reason its recording was given (``agentic-eval scenarios`` prints what this returns)."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from agentic_eval.core.task import parse_task_inputs
from agentic_eval.evaluation.scenario import StepRun, reject_and_retry, run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.files import RecordingError, read_transcript
from agentic_eval.recordings.layout import TranscriptKey, sample_name, transcript_name
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.workflow.scenarios import AgentScenario
from agentic_eval.workflow.service import Workflow


def _feedback(backend: ReplayBackend, key: TranscriptKey) -> list[Any] | None:
    """The operator feedback in a recording's task, oldest first (None when the recording is
    unreadable or its task carries none)."""
    try:
        transcript = read_transcript(backend.files[key])
        task = transcript.turns[0].appended[0].text() if transcript.turns else ""
    except (RecordingError, IndexError, KeyError):
        return None
    feedback: Any = parse_task_inputs(task).get("feedback")
    return cast(list[Any], feedback) if isinstance(feedback, list) else None


def _round_reason(backend: ReplayBackend, key: TranscriptKey) -> str | None:
    """The rejection reason a recorded attempt was given: the newest feedback in its task."""
    feedback = _feedback(backend, key)
    return str(feedback[-1]) if feedback else None


Replayed = list[tuple[TranscriptKey, StepRun | str]]


async def replay_scenario(
    wf: Workflow, s: AgentScenario, backend: ReplayBackend, settings: RunSettings
) -> Replayed:
    """Each recorded epoch in a freshly seeded job, then each of its recorded rejection rounds
    (attempts past the first) with the reason its recording was given."""
    recorded = [k for k in backend.files if k.case_id == s.name]
    rows: Replayed = []
    for epoch in sorted({k.sample for k in recorded}):
        run = await run_scenario(wf, s, backend, settings, sample=epoch, mode="replay")
        rows.append((TranscriptKey(s.name, epoch, 1), _hint(backend, s, run)))
        later = sorted(k for k in recorded if k.sample == epoch and k.attempt > 1)
        for key in later:
            previous = rows[-1][1]
            reason = _round_reason(backend, key)
            if reason is None or not isinstance(previous, StepRun):
                rows.append((key, "no rejection reason to replay it with"))
                break
            if key.attempt != previous.attempt + 1:
                missing = sample_name(s.name, epoch, previous.attempt + 1)
                rows.append((key, f"the round before it, {missing}, is not recorded"))
                break
            transcript = previous.case.transcript
            if transcript is None or transcript.output is None:
                rows.append((key, f"{label(rows[-1][0])} submitted nothing to reject"))
                break
            run = await reject_and_retry(
                wf, previous, reason, workflow=s.workflow, backend=backend, settings=settings,
                case_id=s.name, extra_checks=s.checks, external_fixtures=s.external_fixtures,
                mode="replay", served=s.served,
            )  # fmt: skip
            rows.append((key, run))
    return rows


def _hint(backend: ReplayBackend, s: AgentScenario, run: StepRun) -> StepRun:
    """A later epoch's first attempt whose recording carries more feedback than the scenario
    seeds was recorded as a rejection round before attempts had a field of their own (then
    ``<name>@N.json`` was round N): say how to rename it."""
    if run.epoch == 0 or run.case.reproduced is not False:
        return run
    feedback = _feedback(backend, TranscriptKey(s.name, run.epoch, 1))
    if feedback is None or len(feedback) <= len(s.rejections):
        return run
    old = transcript_name(s.name, run.epoch)
    new = transcript_name(s.name, 0, run.epoch + 1)
    problem = (  # first: the row is cut at 200 characters
        f"a rejection round recorded before attempts had their own field? rename {old} to "
        f"{new} with sample 0, attempt {run.epoch + 1}: {run.case.problem}"
    )
    return dataclasses.replace(run, case=dataclasses.replace(run.case, problem=problem))


def label(key: TranscriptKey) -> str:
    """``name``, ``name@1`` for a later epoch, `` (rejection round N)`` for attempt N + 1."""
    text = key.case_id if key.sample == 0 else f"{key.case_id}@{key.sample}"
    return text if key.attempt == 1 else f"{text} (rejection round {key.attempt - 1})"
