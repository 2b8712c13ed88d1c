"""A case: one task of a suite, with the expectations its checks compare against.

Domains build cases from their answer keys; a workflow scenario or a corpus job builds the same
shape, so the loop, the checks and the store never need to know where a task came from.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from agentic_eval.core.defaults import MAX_TURNS
from agentic_eval.core.file_shapes import CASE_ID_PATTERN
from agentic_eval.core.task import render_task

CASE_ID = re.compile(CASE_ID_PATTERN)
"""Case ids name files (one transcript per case), so they are restricted to safe characters."""


class CaseSpec(BaseModel):
    """One case, as committed in a domain's case file.

    Strict: a case file is edited by hand, and ``"max_turns": true`` or ``"hard_gate": "no"``
    is a mistake to name, not a 1 or a True to guess."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: str = Field(description="Unique case id within the suite (letters, digits, '.', '_', '-').")
    kind: str = Field(description="Task family; selects the output schema and the checks.")
    instruction: str = Field(description="What the agent is asked to do, in prose.")
    inputs: dict[str, Any] = Field(description="Structured inputs, shown to the agent in the task.")
    expected: dict[str, Any] = Field(description="Expected values, computed by the answer key.")
    approvals: dict[str, bool] = Field(
        default_factory=dict,
        description="The approver's decisions, keyed 'action:target' (absent: denied).",
    )
    hard_gate: bool = Field(default=False, description="Whether the case exercises a hard gate.")
    max_turns: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TURNS,
        description="The case's own turn budget: the task needs that many model turns, whatever "
        "the run's (absent: the run's, which is the domain's unless --max-turns gives one).",
    )

    @model_serializer(mode="wrap")
    def _drop_absent_budget(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("max_turns", 0) is None:
            del data["max_turns"]
        return data

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not CASE_ID.match(value):
            raise ValueError(
                f"case id {value!r} must be 1-128 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        return value

    def task(self) -> str:
        """The task text given to the agent: instruction plus inputs as a JSON block."""
        return render_task(self.instruction, self.inputs)
