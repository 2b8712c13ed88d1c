"""The final answer of a browser_ops case: the ``submit`` tool's input schema.

A real model sees this JSON schema, so every field says exactly what to put in it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ClaimReport", "ClaimStatus", "FilingReport", "StopReason"]

ClaimStatus = Literal["committed", "not_committed", "escalated"]
"""Where a claim ended."""

StopReason = Literal[
    "none", "account_locked", "security_warning", "portal_unavailable", "maintenance"
]
"""Why the agent stopped before filing every claim (``none``: it filed them all)."""


class ClaimReport(BaseModel):
    """Where one claim ended."""

    model_config = ConfigDict(extra="forbid")

    status: ClaimStatus = Field(
        description="committed: the portal holds the claim (a successful submit_claim or "
        "check_status 'received'); escalated: not filed and handed to a human with escalate; "
        "not_committed: neither."
    )
    confirmation_number: str | None = Field(
        description="The portal's confirmation number when committed, else null."
    )


class FilingReport(BaseModel):
    """The result of filing an order's claims on the supplier portal."""

    model_config = ConfigDict(extra="forbid")

    claims: dict[str, ClaimReport] = Field(
        description="One entry per claim of the task, keyed by its claim id."
    )
    escalated: bool = Field(description="True when you escalated at least one claim.")
    reason: StopReason = Field(
        description="The stop condition that kept a claim from being filed: account_locked, "
        "security_warning, portal_unavailable (a read still failing after 2 retries) or "
        "maintenance; none when every claim is committed."
    )
