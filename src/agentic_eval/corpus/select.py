"""Which jobs the corpus replays: every step a human decided, judged by its first decision.

A corpus case is one step of one job with at least one operator decision, from a job whose origin
says a human made the decisions (``HUMAN_ORIGINS``: never the jobs an eval seeded or a workflow
batch drove, unless asked for). Its verdict is the *first* decision on the step: later attempts
were shaped by the feedback of earlier ones, so only the first saw what a fresh agent sees. A
first decision of ``rejected`` carries its reason (fed back on replay, not judged); ``approved``
carries none and is judged.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agentic_eval.workflow.records import HUMAN_ORIGINS, Decision, Job, JobOrigin
from agentic_eval.workflow.service import Workflow

CaseVerdict = Literal["approved", "rejected"]


@dataclass(frozen=True)
class CorpusCase:
    """One human-decided step of a job, as the corpus replays it."""

    job: Job
    step_key: str
    first_claimed_at: datetime
    """When the step was first claimed: what the replay serves is as of this moment."""
    decision: Decision
    """The first decision on the step."""

    @property
    def verdict(self) -> CaseVerdict:
        """The first decision's verdict: ``approved`` cases are judged, ``rejected`` ones not."""
        return "approved" if self.decision.decision == "approve" else "rejected"

    @property
    def feedback(self) -> tuple[str, ...]:
        """What the replay feeds back: a first rejection's reason, nothing for an approval."""
        return (self.decision.reason,) if self.verdict == "rejected" else ()


def corpus_cases(
    wf: Workflow,
    *,
    template: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    origins: Collection[JobOrigin] = HUMAN_ORIGINS,
) -> list[CorpusCase]:
    """The corpus: each decided step of each job of these origins, newest job first (steps in
    template order), judged by its first decision.

    Args:
        template: only jobs of this template.
        since: only jobs created at or after this moment.
        until: only jobs created before this moment.
        limit: at most this many cases (the newest).
        origins: default ``HUMAN_ORIGINS`` (real and imported jobs).

    Raises:
        ValueError: ``limit`` below 1, or ``since`` not before ``until``.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if since is not None and until is not None and since >= until:
        raise ValueError(f"since ({since.isoformat()}) must be before until ({until.isoformat()})")
    cases: list[CorpusCase] = []
    for job in wf.jobs(template_key=template, decided=True, origins=origins):
        if (since is not None and job.created_at < since) or (
            until is not None and job.created_at >= until
        ):
            continue
        firsts: dict[str, Decision] = {}
        for decision in wf.decisions(job.id):  # oldest first
            firsts.setdefault(decision.step_key, decision)
        for step in wf.steps(job.id):
            decision = firsts.get(step.key)
            claim = wf.first_claim(job.id, step.key) if decision is not None else None
            if decision is None or claim is None:
                continue
            cases.append(CorpusCase(job, step.key, claim.claimed_at, decision))
            if limit is not None and len(cases) >= limit:
                return cases
    return cases
