"""Run settings: the model name plus the recorded run parameters, in one typed value."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentic_eval.agent.loop import Limits
from agentic_eval.core.results import ApprovalMode
from agentic_eval.core.settings import (
    DEFAULT_MAX_FAILURE_RATE,
    DEFAULT_MAX_TRANSIENT,
    DEFAULT_TEMPERATURE,
    RunParameters,
)


@dataclass(frozen=True)
class RunSettings:
    """Everything besides the backend that a run's requests and verdicts depend on."""

    model: str
    approval_mode: ApprovalMode = "enforce"
    limits: Limits = field(default_factory=Limits)
    temperature: float = DEFAULT_TEMPERATURE
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
    max_transient: float = DEFAULT_MAX_TRANSIENT

    def __post_init__(self) -> None:
        self.parameters()  # validates every bound (NaN, negative rates...) at construction

    def parameters(self) -> RunParameters:
        """For provenance; replay reads them back with :meth:`from_parameters`.

        Raises:
            pydantic.ValidationError: When a value is out of bounds.
        """
        return RunParameters(
            approval_mode=self.approval_mode,
            temperature=self.temperature,
            max_turns=self.limits.max_turns,
            max_tokens=self.limits.max_tokens,
            max_total_tokens=self.limits.max_total_tokens,
            max_failure_rate=self.max_failure_rate,
            max_transient=self.max_transient,
        )

    @classmethod
    def from_parameters(cls, model: str, p: RunParameters) -> RunSettings:
        """Settings as recorded in a transcript's provenance."""
        return cls(
            model=model,
            approval_mode=p.approval_mode,
            limits=Limits(
                max_turns=p.max_turns,
                max_tokens=p.max_tokens,
                max_total_tokens=p.max_total_tokens,
            ),
            temperature=p.temperature,
            max_failure_rate=p.max_failure_rate,
            max_transient=p.max_transient,
        )
