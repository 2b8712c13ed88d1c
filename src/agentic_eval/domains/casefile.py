"""A domain's committed case file: every case its answer key computes, and the fixtures' hash.

Read through :meth:`~agentic_eval.domains.base.Domain.load_cases`; ``list`` and ``show`` read it
as JSON data (:mod:`.catalog`), and this model only when the data is not as it was written.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.base import CASE_FILE_SCHEMA_VERSION


class CaseFile(BaseModel):
    """A domain's committed case file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(default=CASE_FILE_SCHEMA_VERSION, description="Format.")
    domain: str = Field(description="Domain name.")
    fixtures_sha256: str = Field(
        description="sha256 of the canonical fixtures the cases came from."
    )
    cases: tuple[CaseSpec, ...] = Field(description="Every case, in order.")
    external_fixtures: str | None = Field(
        default=None,
        description="sha256 of the real fixtures the cases came from (never committed).",
    )

    @model_serializer(mode="wrap")
    def _drop_absent_mark(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("external_fixtures") is None:
            data.pop("external_fixtures", None)
        return data
