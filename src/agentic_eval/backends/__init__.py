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
    Review,
    TransientBackendError,
)
from agentic_eval.backends.scripted import (
    AgentTask,
    Call,
    ScriptedAgent,
    ScriptedBackend,
    Submit,
    ToolReply,
    respond,
)
from agentic_eval.backends.spec import (
    BackendSpec,
    live_backend_from_spec,
    providers,
    register_provider,
)

__all__ = [
    "AgentTask",
    "AuthenticationFailed",
    "BackendError",
    "BackendInfo",
    "BackendSpec",
    "Call",
    "CallContext",
    "ModelBackend",
    "ProviderRequestError",
    "ReplayDivergence",
    "RetryPolicy",
    "Review",
    "ScriptedAgent",
    "ScriptedBackend",
    "Submit",
    "ToolReply",
    "TransientBackendError",
    "live_backend_from_spec",
    "providers",
    "register_provider",
    "respond",
]
