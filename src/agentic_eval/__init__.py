"""agentic-eval: deterministic, keyless, replayable evaluation of LLM agents.

The names a user needs are importable from here; they load lazily so that ``agentic-eval
--version`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agentic_eval._version import __version__

if TYPE_CHECKING:
    from agentic_eval.agent import ApprovalRequirement, Limits, ToolError, ToolRegistry
    from agentic_eval.backends import Call, ModelBackend, ScriptedBackend, Submit, ToolReply
    from agentic_eval.core import CheckResult, Scorecard, Transcript
    from agentic_eval.domains import CaseSpec, Domain, Trace, register_domain
    from agentic_eval.evaluation import RunSettings, run_case, run_domain

_EXPORTS = {
    "ApprovalRequirement": "agentic_eval.agent",
    "Limits": "agentic_eval.agent",
    "ToolError": "agentic_eval.agent",
    "ToolRegistry": "agentic_eval.agent",
    "Call": "agentic_eval.backends",
    "ModelBackend": "agentic_eval.backends",
    "ScriptedBackend": "agentic_eval.backends",
    "Submit": "agentic_eval.backends",
    "ToolReply": "agentic_eval.backends",
    "CheckResult": "agentic_eval.core",
    "Scorecard": "agentic_eval.core",
    "Transcript": "agentic_eval.core",
    "CaseSpec": "agentic_eval.domains",
    "Domain": "agentic_eval.domains",
    "Trace": "agentic_eval.domains",
    "register_domain": "agentic_eval.domains",
    "RunSettings": "agentic_eval.evaluation",
    "run_case": "agentic_eval.evaluation",
    "run_domain": "agentic_eval.evaluation",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentic_eval' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "ApprovalRequirement",
    "Call",
    "CaseSpec",
    "CheckResult",
    "Domain",
    "Limits",
    "ModelBackend",
    "RunSettings",
    "Scorecard",
    "ScriptedBackend",
    "Submit",
    "ToolError",
    "ToolRegistry",
    "ToolReply",
    "Trace",
    "Transcript",
    "__version__",
    "register_domain",
    "run_case",
    "run_domain",
]
