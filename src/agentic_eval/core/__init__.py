"""Core types: messages, requests, transcripts, outcomes, scorecards (all versioned pydantic)."""

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
from agentic_eval.core.scorecard import (
    CaseResult,
    GateSummary,
    ProducedBy,
    Scorecard,
    Totals,
)
from agentic_eval.core.settings import RunParameters
from agentic_eval.core.transcript import (
    Provenance,
    RequestTemplate,
    Transcript,
    Turn,
    Verdict,
)

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
