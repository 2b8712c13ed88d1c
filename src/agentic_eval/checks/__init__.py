"""Checks: the plug point for invariants, and the gates every suite can reuse."""

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
from agentic_eval.checks.gates import APPROVAL_GATE, approval_gate

__all__ = [
    "APPROVAL_GATE",
    "Check",
    "CheckContext",
    "CheckCrash",
    "CheckReturn",
    "FunctionCheck",
    "Trace",
    "approval_gate",
    "check",
    "run_checks",
]
