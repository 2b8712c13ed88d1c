"""Run parameters: everything besides the backend that a run's requests and verdicts depend on.

They are recorded in every transcript's provenance and on the run row, so replay, a worker or a
resumed run rebuilds exactly the same run. Defaults live here and nowhere else.
"""

from __future__ import annotations

from pydantic import Field

from agentic_eval.core.defaults import (
    DEFAULT_MAX_FAILURE_RATE as DEFAULT_MAX_FAILURE_RATE,
)
from agentic_eval.core.defaults import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from agentic_eval.core.defaults import DEFAULT_MAX_TRANSIENT as DEFAULT_MAX_TRANSIENT
from agentic_eval.core.defaults import DEFAULT_MAX_TURNS as DEFAULT_MAX_TURNS
from agentic_eval.core.defaults import DEFAULT_TEMPERATURE as DEFAULT_TEMPERATURE
from agentic_eval.core.defaults import MAX_REJECTIONS as MAX_REJECTIONS
from agentic_eval.core.defaults import MAX_TURNS
from agentic_eval.core.messages import Frozen
from agentic_eval.core.results import ApprovalMode


class RunParameters(Frozen):
    """The recorded parameters of a run (all bounded; NaN and infinities are refused)."""

    approval_mode: ApprovalMode = Field(default="enforce", description="Approval checkpoint mode.")
    temperature: float = Field(
        default=DEFAULT_TEMPERATURE, ge=0, le=2, allow_inf_nan=False, description="Sampling."
    )
    max_turns: int = Field(
        default=DEFAULT_MAX_TURNS, ge=1, le=MAX_TURNS, description="Model turns."
    )
    max_tokens: int = Field(
        default=DEFAULT_MAX_TOKENS, ge=16, le=200_000, description="Output tokens per call."
    )
    max_total_tokens: int | None = Field(
        default=None, ge=1, description="Input plus output tokens over a run (None: unbounded)."
    )
    max_failure_rate: float = Field(
        default=DEFAULT_MAX_FAILURE_RATE, ge=0, le=1, allow_inf_nan=False, description="Gate."
    )
    max_transient: float = Field(
        default=DEFAULT_MAX_TRANSIENT, ge=0, le=1, allow_inf_nan=False, description="Gate."
    )
