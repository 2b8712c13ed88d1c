"""The agent loop, the tool registry and the runtime approval checkpoint."""

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
