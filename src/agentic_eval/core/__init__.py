"""Core types: messages, requests, transcripts, outcomes, scorecards (all versioned pydantic).

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.core.canonical import (
        canonical_file_text,
        canonical_json,
        first_difference,
        sha256_of,
    )
    from agentic_eval.core.case import CaseSpec
    from agentic_eval.core.messages import (
        ContentBlock,
        Message,
        TextBlock,
        ToolResultBlock,
        ToolUseBlock,
        user_text,
    )
    from agentic_eval.core.model import ModelRequest, ModelResponse, StopReason, ToolSpec, Usage
    from agentic_eval.core.results import (
        ApprovalMode,
        ApprovalRequested,
        CheckResult,
        MustApproveCall,
        Outcome,
        OutcomeKind,
        PolicyEvent,
        ToolCallRecord,
    )
    from agentic_eval.core.scorecard import CaseResult, GateSummary, ProducedBy, Scorecard, Totals
    from agentic_eval.core.settings import RunParameters
    from agentic_eval.core.transcript import Provenance, RequestTemplate, Transcript, Turn, Verdict

_WHERE: dict[str, tuple[str, str]] = {
    "canonical_file_text": ("agentic_eval.core.canonical", "canonical_file_text"),
    "canonical_json": ("agentic_eval.core.canonical", "canonical_json"),
    "first_difference": ("agentic_eval.core.canonical", "first_difference"),
    "sha256_of": ("agentic_eval.core.canonical", "sha256_of"),
    "CaseSpec": ("agentic_eval.core.case", "CaseSpec"),
    "ContentBlock": ("agentic_eval.core.messages", "ContentBlock"),
    "Message": ("agentic_eval.core.messages", "Message"),
    "TextBlock": ("agentic_eval.core.messages", "TextBlock"),
    "ToolResultBlock": ("agentic_eval.core.messages", "ToolResultBlock"),
    "ToolUseBlock": ("agentic_eval.core.messages", "ToolUseBlock"),
    "user_text": ("agentic_eval.core.messages", "user_text"),
    "ModelRequest": ("agentic_eval.core.model", "ModelRequest"),
    "ModelResponse": ("agentic_eval.core.model", "ModelResponse"),
    "StopReason": ("agentic_eval.core.model", "StopReason"),
    "ToolSpec": ("agentic_eval.core.model", "ToolSpec"),
    "Usage": ("agentic_eval.core.model", "Usage"),
    "ApprovalMode": ("agentic_eval.core.results", "ApprovalMode"),
    "ApprovalRequested": ("agentic_eval.core.results", "ApprovalRequested"),
    "CheckResult": ("agentic_eval.core.results", "CheckResult"),
    "MustApproveCall": ("agentic_eval.core.results", "MustApproveCall"),
    "Outcome": ("agentic_eval.core.results", "Outcome"),
    "OutcomeKind": ("agentic_eval.core.results", "OutcomeKind"),
    "PolicyEvent": ("agentic_eval.core.results", "PolicyEvent"),
    "ToolCallRecord": ("agentic_eval.core.results", "ToolCallRecord"),
    "CaseResult": ("agentic_eval.core.scorecard", "CaseResult"),
    "GateSummary": ("agentic_eval.core.scorecard", "GateSummary"),
    "ProducedBy": ("agentic_eval.core.scorecard", "ProducedBy"),
    "Scorecard": ("agentic_eval.core.scorecard", "Scorecard"),
    "Totals": ("agentic_eval.core.scorecard", "Totals"),
    "RunParameters": ("agentic_eval.core.settings", "RunParameters"),
    "Provenance": ("agentic_eval.core.transcript", "Provenance"),
    "RequestTemplate": ("agentic_eval.core.transcript", "RequestTemplate"),
    "Transcript": ("agentic_eval.core.transcript", "Transcript"),
    "Turn": ("agentic_eval.core.transcript", "Turn"),
    "Verdict": ("agentic_eval.core.transcript", "Verdict"),
}

__all__ = [
    "ApprovalMode",
    "ApprovalRequested",
    "CaseResult",
    "CaseSpec",
    "CheckResult",
    "ContentBlock",
    "GateSummary",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "MustApproveCall",
    "Outcome",
    "OutcomeKind",
    "PolicyEvent",
    "ProducedBy",
    "Provenance",
    "RequestTemplate",
    "RunParameters",
    "Scorecard",
    "StopReason",
    "TextBlock",
    "ToolCallRecord",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Totals",
    "Transcript",
    "Turn",
    "Usage",
    "Verdict",
    "canonical_file_text",
    "canonical_json",
    "first_difference",
    "sha256_of",
    "user_text",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
