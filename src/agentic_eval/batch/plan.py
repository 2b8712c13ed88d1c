"""A run is a stored plan: what to run, the exact sample keys, the backend, the run parameters.

A :class:`RunPlan` is versioned and serialisable; it is stored on the run's ``eval_run`` row when
the run is opened (:func:`agentic_eval.batch.run.open_run`), so anything that can reach the store
(the submitting command, ``--resume``, a worker) rebuilds the same run from it alone: the
parameters in the plan are the one source of the run's limits and gate thresholds.
"""

from __future__ import annotations

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


class RunPlan(Frozen):
    """Everything a run is, before it runs."""

    schema_version: Literal[1] = Field(default=PLAN_SCHEMA_VERSION, description="Format.")
    kind: Literal["suite", "scenario"] = Field(
        default="suite",
        description="suite: a domain's cases; scenario: one workflow scenario, each epoch in a "
        "freshly seeded job (the corpus next).",
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

    @model_validator(mode="after")
    def _distinct_keys(self) -> RunPlan:
        if (self.kind == "scenario") != (self.scenario is not None):
            raise ValueError("a scenario plan names its scenario, and only a scenario plan does")
        if self.scenario is not None and any(k.case != self.scenario for k in self.keys):
            raise ValueError(f"every sample of a scenario plan is of {self.scenario!r}")
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

    def limits(self) -> Limits:
        """The per-sample limits the plan fixes."""
        return self.settings().limits
