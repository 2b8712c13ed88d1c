"""Build view models from history entries, diffs and transcripts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from agentic_eval.core.scorecard import CaseResult
from agentic_eval.history.diff import CaseChange, RunDiff, explained_by_checks
from agentic_eval.history.entry import HistoryEntry, SampleFacts, describe_producer
from agentic_eval.history.files import StoredEntry
from agentic_eval.report.views import (
    CaseView,
    ChangeView,
    CheckView,
    DiffView,
    FlipView,
    PointView,
    RunSummaryView,
    RunsView,
    RunView,
    SuiteReport,
    TranscriptView,
)

TranscriptLookup = Callable[[HistoryEntry, str, int], TranscriptView]
"""Finds a sample's transcript for a run: (entry, case id, sample) -> view."""


def _iso(entry: HistoryEntry) -> str:
    return entry.started_at.isoformat().replace("+00:00", "Z")


def _json(value: Any) -> Any:
    return to_jsonable_python(value)


def summary_view(stored: StoredEntry) -> RunSummaryView:
    """A run in one line."""
    e = stored.entry
    s, t = e.scorecard, e.scorecard.totals
    return RunSummaryView(
        run_id=e.run_id,
        suite=e.suite,
        started_at=_iso(e),
        status=e.status,
        producer=describe_producer(e.producer),
        producer_kind=e.producer.kind,
        agent=e.producer.agent,
        model=e.producer.model,
        approval_mode=s.produced_by.approval_mode,
        passed=t.passed,
        samples=t.cases,
        transient=t.transient,
        hard_gate_failures=t.hard_gate_failures,
        unapproved_attempts=t.unapproved_attempts,
        unapproved_executions=t.unapproved_executions,
        verdict=e.gate.verdict,
        gate_reason=e.gate.reason,
        pass_rate=e.pass_rate,
        reproduced=None if e.replay is None else e.replay.reproduced,
        replay_problems=() if e.replay is None else e.replay.problems,
        duration_seconds=round((e.finished_at - e.started_at).total_seconds(), 6),
        file=stored.path.as_posix(),
        expected_to_fail=e.producer.kind == "scripted" and _shipped_to_fail(e),
    )


def _shipped_to_fail(e: HistoryEntry) -> bool:
    from agentic_eval.domains.registry import expected_to_fail

    spec = e.config.backend
    agent = spec.agent if spec is not None and spec.agent else e.producer.agent
    return expected_to_fail(e.suite, agent)


def case_view(r: CaseResult, facts: SampleFacts | None = None) -> CaseView:
    """One sample, with its failed checks (and its time, and for a replay whether it was
    reproduced, when the entry kept them)."""
    return CaseView(
        case_id=r.case_id,
        sample=r.sample,
        outcome=r.outcome.kind,
        reason=r.outcome.reason,
        hard_gate_failed=r.hard_gate_failed,
        failed_checks=tuple(
            CheckView(
                name=c.name,
                hard_gate=c.hard_gate,
                message=c.message,
                expected=_json(c.expected),
                actual=_json(c.actual),
            )
            for c in r.checks
            if not c.passed
        ),
        turns=r.turns,
        tool_calls=r.tool_calls,
        seconds=facts.seconds if facts is not None else 0.0,
        reproduced=facts.reproduced if facts is not None else None,
        problem=facts.problem if facts is not None else "",
        detail=facts.detail if facts is not None else "",
    )


def run_view(stored: StoredEntry) -> RunView:
    """A run with every sample."""
    facts = {(f.case_id, f.sample): f for f in stored.entry.sample_facts}
    return RunView(
        summary=summary_view(stored),
        cases=tuple(
            case_view(c, facts.get((c.case_id, c.sample))) for c in stored.entry.scorecard.cases
        ),
    )


def runs_view(runs: Sequence[StoredEntry]) -> RunsView:
    """The runs of one ``run`` command."""
    return RunsView(runs=tuple(run_view(s) for s in runs))


def _held(value: bool | None) -> str:
    return "not run" if value is None else ("held" if value else "failed")


def change_view(c: CaseChange) -> ChangeView:
    """One case of a diff. When no check explains the change (checks did not run on a side, or
    the outcome is an error), the note gives the outcomes' reasons."""
    notes: list[str] = []
    if c.expectation_changed:
        notes.append("the case's expectations changed (answer key)")
    same = c.before is not None and c.after is not None and c.before.outcome == c.after.outcome
    if not (c.kind == "still_failing" and same and not c.flips):
        for side, r in (("base", c.before), ("head", c.after)):
            if r is not None and r.outcome.kind != "passed" and not explained_by_checks(r):
                notes.append(f"{side}: {r.outcome.kind}: {r.outcome.reason}")
    return ChangeView(
        case_id=c.case_id,
        sample=c.sample,
        kind=c.kind,
        before=c.before.outcome.kind if c.before else "-",
        after=c.after.outcome.kind if c.after else "-",
        flips=tuple(
            FlipView(
                name=f.name,
                hard_gate=f.hard_gate,
                before=_held(f.before),
                after=_held(f.after),
                why=f.why,
            )
            for f in c.flips
        ),
        note="; ".join(notes),
    )


def diff_view(diff: RunDiff, base: StoredEntry, head: StoredEntry) -> DiffView:
    """A diff, ready to show."""
    return DiffView(
        suite=diff.head.suite,
        base=summary_view(base),
        head=summary_view(head),
        counts={str(k): n for k, n in diff.counts().items()},
        changes=tuple(change_view(c) for c in diff.cases if c.kind != "unchanged"),
        causes=diff.causes,
        replay=diff.replay,
    )


def point_view(stored: StoredEntry, baseline: str | Collection[str] | None = None) -> PointView:
    """A run in the history; ``baseline``: the baseline run id(s) to mark."""
    e = stored.entry
    return PointView(
        run_id=e.run_id,
        started_at=_iso(e),
        producer=describe_producer(e.producer),
        producer_kind=e.producer.kind,
        passed=e.passed,
        samples=e.samples,
        pass_rate=e.pass_rate,
        hard_gate_failures=e.scorecard.totals.hard_gate_failures,
        verdict=e.gate.verdict,
        status=e.status,
        baseline=e.run_id == baseline
        if isinstance(baseline, str) or baseline is None
        else e.run_id in baseline,
        reproduced=None if e.replay is None else e.replay.reproduced,
    )


def suite_report(
    suite: str,
    history: Sequence[StoredEntry],
    *,
    head: StoredEntry | None,
    diff: tuple[RunDiff, StoredEntry] | None = None,
    note: str = "",
    baseline: str | None = None,
    transcripts: TranscriptLookup | None = None,
    series: str = "",
) -> SuiteReport:
    """One suite of a report.

    Args:
        suite: Suite name.
        history: The suite's history, oldest first.
        head: The run the report is about (usually the newest).
        diff: The diff of ``head`` against a base run, and the base's stored entry.
        note: Why there is no diff.
        baseline: The series' baseline run id, if any (marked in the history).
        transcripts: Finds transcripts of the head run's failed samples (None: none shown).
        series: The series' label (:func:`agentic_eval.history.series_label`).
    """
    found: list[TranscriptView] = []
    if head is not None and transcripts is not None:
        for c in head.entry.scorecard.cases:
            if c.outcome.kind != "passed" or c.hard_gate_failed:
                found.append(transcripts(head.entry, c.case_id, c.sample))
    return SuiteReport(
        suite=suite,
        history=tuple(point_view(s, baseline) for s in history),
        head=run_view(head) if head is not None else None,
        diff=diff_view(diff[0], diff[1], head) if diff is not None and head is not None else None,
        note=note,
        transcripts=tuple(found),
        series=series,
    )
