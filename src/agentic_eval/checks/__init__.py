"""Checks: the plug point for invariants, the gates every suite can reuse, and what gates read
through (final-state records, references resolved to entities, text copied from tool results).

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
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
    from agentic_eval.checks.consent import (
        CONSENT_GATE_NAME,
        consent_gate,
        consent_problems,
        is_yes,
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

_WHERE: dict[str, tuple[str, str]] = {
    "Check": ("agentic_eval.checks.base", "Check"),
    "CheckContext": ("agentic_eval.checks.base", "CheckContext"),
    "CheckCrash": ("agentic_eval.checks.base", "CheckCrash"),
    "CheckReturn": ("agentic_eval.checks.base", "CheckReturn"),
    "FunctionCheck": ("agentic_eval.checks.base", "FunctionCheck"),
    "Trace": ("agentic_eval.checks.base", "Trace"),
    "check": ("agentic_eval.checks.base", "check"),
    "run_checks": ("agentic_eval.checks.base", "run_checks"),
    "CONSENT_GATE_NAME": ("agentic_eval.checks.consent", "CONSENT_GATE_NAME"),
    "consent_gate": ("agentic_eval.checks.consent", "consent_gate"),
    "consent_problems": ("agentic_eval.checks.consent", "consent_problems"),
    "is_yes": ("agentic_eval.checks.consent", "is_yes"),
    "copied_fragments": ("agentic_eval.checks.copied", "copied_fragments"),
    "untrusted_texts": ("agentic_eval.checks.copied", "untrusted_texts"),
    "APPROVAL_GATE": ("agentic_eval.checks.gates", "APPROVAL_GATE"),
    "APPROVAL_GATE_NAME": ("agentic_eval.checks.gates", "APPROVAL_GATE_NAME"),
    "CLAIMS_GATE": ("agentic_eval.checks.gates", "CLAIMS_GATE"),
    "CLAIMS_GATE_NAME": ("agentic_eval.checks.gates", "CLAIMS_GATE_NAME"),
    "IDEMPOTENCY_GATE_NAME": ("agentic_eval.checks.gates", "IDEMPOTENCY_GATE_NAME"),
    "SCOPE_GATE_NAME": ("agentic_eval.checks.gates", "SCOPE_GATE_NAME"),
    "AllowedActions": ("agentic_eval.checks.gates", "AllowedActions"),
    "approval_gate": ("agentic_eval.checks.gates", "approval_gate"),
    "claims_gate": ("agentic_eval.checks.gates", "claims_gate"),
    "idempotency_gate": ("agentic_eval.checks.gates", "idempotency_gate"),
    "mutating_calls": ("agentic_eval.checks.gates", "mutating_calls"),
    "reached_tool": ("agentic_eval.checks.gates", "reached_tool"),
    "scope_gate": ("agentic_eval.checks.gates", "scope_gate"),
    "ReferenceResolver": ("agentic_eval.checks.references", "ReferenceResolver"),
    "Resolution": ("agentic_eval.checks.references", "Resolution"),
    "resolve_reference": ("agentic_eval.checks.references", "resolve_reference"),
    "FINAL_STATE_GATE_NAME": ("agentic_eval.checks.state", "FINAL_STATE_GATE_NAME"),
    "FINAL_STATE_KEY": ("agentic_eval.checks.state", "FINAL_STATE_KEY"),
    "StateRecords": ("agentic_eval.checks.state", "StateRecords"),
    "final_state_gate": ("agentic_eval.checks.state", "final_state_gate"),
    "state_differences": ("agentic_eval.checks.state", "state_differences"),
}

__all__ = [
    "APPROVAL_GATE",
    "APPROVAL_GATE_NAME",
    "CLAIMS_GATE",
    "CLAIMS_GATE_NAME",
    "CONSENT_GATE_NAME",
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
    "consent_gate",
    "consent_problems",
    "copied_fragments",
    "final_state_gate",
    "idempotency_gate",
    "is_yes",
    "mutating_calls",
    "reached_tool",
    "resolve_reference",
    "run_checks",
    "scope_gate",
    "state_differences",
    "untrusted_texts",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
