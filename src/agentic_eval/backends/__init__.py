"""Model backends: live providers, scripted agents, record (wraps any) and replay."""

from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    BackendInfo,
    CallContext,
    ModelBackend,
    ProviderRequestError,
    ReplayDivergence,
    RetryPolicy,
    TransientBackendError,
)
from agentic_eval.backends.factory import PROVIDERS, Provider, live_backend
from agentic_eval.backends.record import RecordingBackend
from agentic_eval.backends.recordings import RecordingError
from agentic_eval.backends.replay import ReplayBackend
from agentic_eval.backends.scripted import (
    AgentTask,
    Call,
    ScriptedAgent,
    ScriptedBackend,
    Submit,
    ToolReply,
    respond,
)

__all__ = [
    "PROVIDERS",
    "AgentTask",
    "AuthenticationFailed",
    "BackendError",
    "BackendInfo",
    "Call",
    "CallContext",
    "ModelBackend",
    "Provider",
    "ProviderRequestError",
    "RecordingBackend",
    "RecordingError",
    "ReplayBackend",
    "ReplayDivergence",
    "RetryPolicy",
    "ScriptedAgent",
    "ScriptedBackend",
    "Submit",
    "ToolReply",
    "TransientBackendError",
    "live_backend",
    "respond",
]
