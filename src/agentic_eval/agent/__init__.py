"""The agent loop, the tool registry and the runtime approval checkpoint.

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.agent.approval import (
        ApprovalCheckpoint,
        ApprovalDecider,
        ApprovalDecision,
        ApprovalRequest,
        Approver,
    )
    from agentic_eval.agent.loop import AgentRun, Limits, run_agent
    from agentic_eval.agent.tools import (
        ApprovalRequirement,
        Tool,
        ToolArgumentError,
        ToolError,
        ToolRegistry,
        make_tool,
    )

_WHERE: dict[str, tuple[str, str]] = {
    "ApprovalCheckpoint": ("agentic_eval.agent.approval", "ApprovalCheckpoint"),
    "ApprovalDecider": ("agentic_eval.agent.approval", "ApprovalDecider"),
    "ApprovalDecision": ("agentic_eval.agent.approval", "ApprovalDecision"),
    "ApprovalRequest": ("agentic_eval.agent.approval", "ApprovalRequest"),
    "Approver": ("agentic_eval.agent.approval", "Approver"),
    "AgentRun": ("agentic_eval.agent.loop", "AgentRun"),
    "Limits": ("agentic_eval.agent.loop", "Limits"),
    "run_agent": ("agentic_eval.agent.loop", "run_agent"),
    "ApprovalRequirement": ("agentic_eval.agent.tools", "ApprovalRequirement"),
    "Tool": ("agentic_eval.agent.tools", "Tool"),
    "ToolArgumentError": ("agentic_eval.agent.tools", "ToolArgumentError"),
    "ToolError": ("agentic_eval.agent.tools", "ToolError"),
    "ToolRegistry": ("agentic_eval.agent.tools", "ToolRegistry"),
    "make_tool": ("agentic_eval.agent.tools", "make_tool"),
}

__all__ = [
    "AgentRun",
    "ApprovalCheckpoint",
    "ApprovalDecider",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalRequirement",
    "Approver",
    "Limits",
    "Tool",
    "ToolArgumentError",
    "ToolError",
    "ToolRegistry",
    "make_tool",
    "run_agent",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
