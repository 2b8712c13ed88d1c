"""A run is a stored plan: what to run, the exact sample keys, the backend, the run parameters.

A :class:`RunPlan` is versioned and serialisable; it is stored on the run's ``eval_run`` row when
the run is opened (:func:`agentic_eval.batch.run.open_run`), so anything that can reach the store
(the submitting command, ``--resume``, a worker) rebuilds the same run from it alone: the
parameters in the plan are the one source of the run's limits and gate thresholds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from agentic_eval.agent.loop import Limits
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.core.messages import Frozen
from agentic_eval.core.settings import RunParameters
from agentic_eval.evaluation.settings import RunSettings

PLAN_SCHEMA_VERSION = 1
GateMode = Literal["rate", "upper-bound"]


class SampleKey(Frozen):
    """One sample of a run: a case (or scenario), its epoch (the N of a batch) and its attempt
    (the rejection round of a workflow step; 1 for a domain case). The two never share a field."""

    case: str = Field(min_length=1, description="Case id (or scenario name).")
    epoch: int = Field(default=0, ge=0, description="Epoch: the sample index of a batch.")
    attempt: int = Field(default=1, ge=1, description="Attempt: the rejection round (from 1).")

    def name(self) -> str:
        """``case``, ``case@epoch`` (and ``#attempt`` past the first), as the CLI shows it."""
        text = self.case if self.epoch == 0 else f"{self.case}@{self.epoch}"
        return text if self.attempt == 1 else f"{text}#{self.attempt}"


class CorpusEntry(Frozen):
    """One human-decided step of a real job, as a corpus plan replays it."""

    case: str = Field(min_length=1, description="The sample key's case: job.<job id>.<step>.")
    job_id: str = Field(min_length=1, description="The real job (stamped on every sample).")
    step: str = Field(min_length=1, description="The step key.")
    verdict: Literal["approved", "rejected"] = Field(
        description="The first human decision: approved cases are judged, rejected ones run "
        "with the reason as feedback and not judged."
    )
    decision_id: str = Field(min_length=1, description="That decision (``corpus show``).")


class CorpusSelection(Frozen):
    """What a corpus plan selected, and the cases it found (newest job first)."""

    template: str | None = Field(default=None, description="Only jobs of this template.")
    since: datetime | None = Field(default=None, description="Jobs created at or after.")
    until: datetime | None = Field(default=None, description="Jobs created before.")
    limit: int | None = Field(default=None, ge=1, description="At most this many cases.")
    origins: tuple[str, ...] = Field(description="The job origins selected.")
    entries: tuple[CorpusEntry, ...] = Field(min_length=1, description="The cases, in order.")


class WorkflowDrive(Frozen):
    """What a workflow plan drives: whole jobs from a fixture, decided by an operator policy."""

    fixture: str = Field(min_length=1, description="The job fixture each job starts from.")
    operator: str = Field(
        default="policy-operator",
        min_length=1,
        description="The operator user the policy's decisions are attributed to.",
    )
    max_attempts: int = Field(
        default=3, ge=1, le=20, description="Attempts at one step before the job is given up."
    )


class RunPlan(Frozen):
    """Everything a run is, before it runs."""

    schema_version: Literal[1] = Field(default=PLAN_SCHEMA_VERSION, description="Format.")
    kind: Literal["suite", "scenario", "corpus", "workflow"] = Field(
        default="suite",
        description="suite: a domain's cases; scenario: one workflow scenario, each epoch in a "
        "freshly seeded job; corpus: human-decided steps of real jobs, each rebuilt as its "
        "first attempt saw it; workflow: whole jobs driven from a fixture, an operator "
        "policy deciding every step.",
    )
    suite: str = Field(min_length=1, description="The suite: a domain, or the scenario's workflow.")
    scenario: str | None = Field(default=None, description="The scenario, for kind scenario.")
    keys: tuple[SampleKey, ...] = Field(min_length=1, description="Every sample, in order.")
    backend: BackendSpec = Field(description="What answers (replay, scripted, live; recorded?).")
    model: str = Field(description="The model name sent in requests.")
    parameters: RunParameters = Field(description="Limits, approval mode, temperature, gate.")
    concurrency: int = Field(default=1, ge=1, le=256, description="Samples in flight at once.")
    gate: GateMode = Field(
        default="rate",
        description="rate: the failure rate against the threshold; upper-bound: the one-sided "
        "95% Clopper-Pearson upper bound on it.",
    )
    full: bool = Field(default=True, description="Whether the keys cover every case.")
    corpus: CorpusSelection | None = Field(
        default=None, description="The corpus selection, for kind corpus."
    )
    drive: WorkflowDrive | None = Field(
        default=None, description="The jobs to drive, for kind workflow."
    )

    @model_validator(mode="after")
    def _distinct_keys(self) -> RunPlan:
        if (self.kind == "scenario") != (self.scenario is not None):
            raise ValueError("a scenario plan names its scenario, and only a scenario plan does")
        if self.scenario is not None and any(k.case != self.scenario for k in self.keys):
            raise ValueError(f"every sample of a scenario plan is of {self.scenario!r}")
        if (self.kind == "corpus") != (self.corpus is not None):
            raise ValueError("a corpus plan carries its selection, and only a corpus plan does")
        if (self.kind == "workflow") != (self.drive is not None):
            raise ValueError("a workflow plan says what it drives, and only a workflow plan does")
        if self.drive is not None and any(k.case != self.drive.fixture for k in self.keys):
            raise ValueError(f"every sample of a workflow plan is a job of {self.drive.fixture!r}")
        if self.corpus is not None:
            cases = {e.case for e in self.corpus.entries}
            if len(cases) != len(self.corpus.entries):
                raise ValueError("a corpus plan lists each case once")
            stray = next((k for k in self.keys if k.case not in cases), None)
            if stray is not None:
                raise ValueError(f"sample {stray.name()} is not a case of the corpus selection")
        if any(k.attempt != 1 for k in self.keys):
            raise ValueError(
                "a plan's samples are first attempts: later attempts follow from an operator's "
                "rejection of an earlier one, not from a plan"
            )
        seen: set[SampleKey] = set()
        for key in self.keys:
            if key in seen:
                raise ValueError(f"sample {key.name()} is planned twice")
            seen.add(key)
        return self

    def settings(self) -> RunSettings:
        """The run settings the plan fixes."""
        return RunSettings.from_parameters(self.model, self.parameters)

    def entries(self) -> dict[str, CorpusEntry]:
        """A corpus plan's cases by sample case id (empty for any other plan)."""
        return {} if self.corpus is None else {e.case: e for e in self.corpus.entries}

    def limits(self) -> Limits:
        """The per-sample limits the plan fixes."""
        return self.settings().limits
