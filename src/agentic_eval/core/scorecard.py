"""Case results and scorecards: what a run of a domain produced, in reproducible form."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentic_eval.core.messages import Frozen
from agentic_eval.core.results import ApprovalMode, CheckResult, Outcome, OutcomeKind

SCORECARD_SCHEMA_VERSION = 2

GateVerdict = Literal["PASS", "FAIL", "INCONCLUSIVE"]


class CaseResult(Frozen):
    """One case's result. Deterministic: no timings (those go to the store)."""

    case_id: str = Field(description="Case id.")
    sample: int = Field(default=0, description="Sample index (epoch).")
    outcome: Outcome = Field(description="How it ended.")
    checks: tuple[CheckResult, ...] = Field(description="Check results.")
    hard_gate_failed: bool = Field(description="A hard-gate check failed.")
    unapproved_attempts: int = Field(description="Must-approve calls attempted without approval.")
    unapproved_executions: int = Field(description="Must-approve calls executed without approval.")
    turns: int = Field(description="Model turns used.")
    tool_calls: int = Field(description="Tool calls made.")
    case_verdict: Literal["approved", "rejected"] | None = Field(
        default=None,
        description="A corpus sample: its job's first human verdict; ``rejected`` samples are "
        "run but not judged by the gate. Absent for any other sample.",
    )

    @model_serializer(mode="wrap")
    def _drop_absent_verdict(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("case_verdict") is None:
            data.pop("case_verdict", None)
        return data

    @property
    def judged(self) -> bool:
        """Whether the gate judges it: every sample but a corpus sample a human rejected."""
        return self.case_verdict != "rejected"


class ProducedBy(Frozen):
    """What produced a scorecard's samples: never present a scripted agent as a model."""

    agent: str = Field(description="Agent label.")
    agent_kind: Literal["scripted", "model"] = Field(description="scripted or model.")
    backend: str = Field(description="Backend that produced the responses.")
    model: str = Field(description="Model name ('scripted:<agent>' for scripted agents).")
    approval_mode: ApprovalMode = Field(description="Approval checkpoint mode.")


class Totals(Frozen):
    """Counts by outcome and gate."""

    cases: int = Field(description="Samples.")
    passed: int = Field(description="Outcome passed.")
    check_failed: int = Field(description="Outcome check_failed.")
    error: int = Field(description="Outcome error.")
    transient: int = Field(description="Outcome transient.")
    hard_gate_failures: int = Field(description="Cases with a failed hard gate.")
    unapproved_attempts: int = Field(description="Must-approve calls attempted without approval.")
    unapproved_executions: int = Field(description="Must-approve calls executed without approval.")


class GateSummary(Frozen):
    """The batch gate: judged = samples - transient; rate = (check_failed + error) / judged.

    The verdict is decided on exact fractions of the counts; the float rates are for display.
    """

    judged: int = Field(description="Samples minus transient.")
    failures: int = Field(description="check_failed + error.")
    hard_gate_failures: int = Field(description="Samples with a failed hard gate (any fails).")
    failure_rate: float = Field(description="failures / judged (0 when none judged).")
    max_failure_rate: float = Field(description="Threshold above which the batch fails.")
    transient_rate: float = Field(description="transient / samples.")
    max_transient: float = Field(
        description="Above this transient share the batch is inconclusive."
    )
    hard_gates_failed: dict[str, int] = Field(
        default_factory=dict, description="Samples failing each hard gate, by gate name."
    )
    verdict: GateVerdict = Field(description="PASS, FAIL or INCONCLUSIVE.")
    reason: str = Field(default="", description="Why, in one line, with exact figures.")


class Scorecard(Frozen):
    """A domain run's scorecard. Its canonical JSON is reproduced byte for byte by replay."""

    schema_version: Literal[2] = Field(default=SCORECARD_SCHEMA_VERSION, description="Format.")
    domain: str = Field(description="Domain name.")
    produced_by: ProducedBy = Field(description="What produced the samples.")
    cases: tuple[CaseResult, ...] = Field(
        description="Per-sample results, sorted by case id, then sample."
    )
    totals: Totals = Field(description="Counts.")
    gate: GateSummary = Field(description="Batch gate.")
    external_fixtures: str | None = Field(
        default=None,
        description="sha256 of the real fixtures the run used; absent for committed fixtures.",
    )

    @model_serializer(mode="wrap")
    def _drop_absent_mark(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("external_fixtures") is None:
            data.pop("external_fixtures", None)
        return data


def count(kind: OutcomeKind, cases: tuple[CaseResult, ...]) -> int:
    """How many cases ended with outcome ``kind``."""
    return sum(1 for c in cases if c.outcome.kind == kind)
