"""Checks: the plug point for invariants, the gates every suite can reuse, and what gates read
through (final-state records, references resolved to entities, text copied from tool results)."""

from agentic_eval.checks.base import (
    Check,
    CheckContext,
    CheckCrash,
    CheckReturn,
    FunctionCheck,
    Trace,
    check,
    run_checks,
)
from agentic_eval.checks.copied import copied_fragments, untrusted_texts
from agentic_eval.checks.gates import (
    APPROVAL_GATE,
    APPROVAL_GATE_NAME,
    CLAIMS_GATE,
    CLAIMS_GATE_NAME,
    IDEMPOTENCY_GATE_NAME,
    SCOPE_GATE_NAME,
    AllowedActions,
    approval_gate,
    claims_gate,
    idempotency_gate,
    mutating_calls,
    reached_tool,
    scope_gate,
)
from agentic_eval.checks.references import ReferenceResolver, Resolution, resolve_reference
from agentic_eval.checks.state import (
    FINAL_STATE_GATE_NAME,
    FINAL_STATE_KEY,
    StateRecords,
    final_state_gate,
    state_differences,
)

__all__ = [
    "APPROVAL_GATE",
    "APPROVAL_GATE_NAME",
    "CLAIMS_GATE",
    "CLAIMS_GATE_NAME",
    "FINAL_STATE_GATE_NAME",
    "FINAL_STATE_KEY",
    "IDEMPOTENCY_GATE_NAME",
    "SCOPE_GATE_NAME",
    "AllowedActions",
    "Check",
    "CheckContext",
    "CheckCrash",
    "CheckReturn",
    "FunctionCheck",
    "ReferenceResolver",
    "Resolution",
    "StateRecords",
    "Trace",
    "approval_gate",
    "check",
    "claims_gate",
    "copied_fragments",
    "final_state_gate",
    "idempotency_gate",
    "mutating_calls",
    "reached_tool",
    "resolve_reference",
    "run_checks",
    "scope_gate",
    "state_differences",
    "untrusted_texts",
]
