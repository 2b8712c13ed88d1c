"""agentic-eval: deterministic, keyless, replayable evaluation of LLM agents.

The names a user needs are importable from here; they load lazily so that ``agentic-eval
--version`` stays fast.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agentic_eval._version import __version__

if TYPE_CHECKING:
    from agentic_eval.agent import (
        ApprovalDecision,
        ApprovalRequest,
        ApprovalRequirement,
        Limits,
        ToolArgumentError,
        ToolError,
        ToolRegistry,
    )
    from agentic_eval.agent.user import STOP, SimulatedUser, UserView
    from agentic_eval.api import (
        AgenticEvalError,
        BatchResult,
        RunResult,
        SampleResult,
        batch,
        run,
    )
    from agentic_eval.backends import (
        AgentTask,
        BackendSpec,
        Call,
        ModelBackend,
        ScriptedBackend,
        Submit,
        ToolReply,
    )
    from agentic_eval.backends.scripted import Say
    from agentic_eval.checks import Check, CheckContext, check
    from agentic_eval.core import CaseSpec, CheckResult, Scorecard, Transcript
    from agentic_eval.domains import Domain, Mutant, Trace, register_domain
    from agentic_eval.domains.onefile import domain
    from agentic_eval.evaluation import RunSettings, run_case, run_session, run_tasks
    from agentic_eval.tasks import TaskKind, TaskSpec

_EXPORTS = {
    "AgenticEvalError": "agentic_eval.api",
    "BatchResult": "agentic_eval.api",
    "RunResult": "agentic_eval.api",
    "SampleResult": "agentic_eval.api",
    "run": "agentic_eval.api",
    "ApprovalDecision": "agentic_eval.agent",
    "ApprovalRequest": "agentic_eval.agent",
    "ApprovalRequirement": "agentic_eval.agent",
    "Limits": "agentic_eval.agent",
    "ToolArgumentError": "agentic_eval.agent",
    "ToolError": "agentic_eval.agent",
    "ToolRegistry": "agentic_eval.agent",
    "STOP": "agentic_eval.agent.user",
    "SimulatedUser": "agentic_eval.agent.user",
    "UserView": "agentic_eval.agent.user",
    "Say": "agentic_eval.backends.scripted",
    "AgentTask": "agentic_eval.backends",
    "BackendSpec": "agentic_eval.backends",
    "Call": "agentic_eval.backends",
    "ModelBackend": "agentic_eval.backends",
    "ScriptedBackend": "agentic_eval.backends",
    "Submit": "agentic_eval.backends",
    "ToolReply": "agentic_eval.backends",
    "Check": "agentic_eval.checks",
    "CheckContext": "agentic_eval.checks",
    "check": "agentic_eval.checks",
    "CaseSpec": "agentic_eval.core",
    "CheckResult": "agentic_eval.core",
    "Scorecard": "agentic_eval.core",
    "Transcript": "agentic_eval.core",
    "Domain": "agentic_eval.domains",
    "Mutant": "agentic_eval.domains",
    "Trace": "agentic_eval.domains",
    "register_domain": "agentic_eval.domains",
    "domain": "agentic_eval.domains.onefile",
    "RunSettings": "agentic_eval.evaluation",
    "run_case": "agentic_eval.evaluation",
    "run_session": "agentic_eval.evaluation",
    "run_tasks": "agentic_eval.evaluation",
    "TaskKind": "agentic_eval.tasks",
    "TaskSpec": "agentic_eval.tasks",
}


class _Package(ModuleType):
    """This package's class: ``agentic_eval.batch`` names both the batch package and the API's
    ``batch()``. Importing the package binds the name to it (the setter lets that happen), and
    reading it loads ``agentic_eval.api``, which makes the package callable as ``batch()``: so
    ``agentic_eval.batch(...)`` runs a batch and ``agentic_eval.batch.RunPlan`` still resolves,
    whatever was imported first."""

    @property
    def batch(self) -> Any:
        import_module("agentic_eval.api")
        return import_module("agentic_eval.batch")

    @batch.setter
    def batch(self, value: Any) -> None:
        del value  # the import system binding the subpackage; the getter returns it anyway


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentic_eval' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "STOP",
    "AgentTask",
    "AgenticEvalError",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalRequirement",
    "BackendSpec",
    "BatchResult",
    "Call",
    "CaseSpec",
    "Check",
    "CheckContext",
    "CheckResult",
    "Domain",
    "Limits",
    "ModelBackend",
    "Mutant",
    "RunResult",
    "RunSettings",
    "SampleResult",
    "Say",
    "Scorecard",
    "ScriptedBackend",
    "SimulatedUser",
    "Submit",
    "TaskKind",
    "TaskSpec",
    "ToolArgumentError",
    "ToolError",
    "ToolRegistry",
    "ToolReply",
    "Trace",
    "Transcript",
    "UserView",
    "__version__",
    "batch",
    "check",
    "domain",
    "register_domain",
    "run",
    "run_case",
    "run_session",
    "run_tasks",
]
