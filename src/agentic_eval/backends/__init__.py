"""Model backends: live providers, scripted agents, record (wraps any) and replay.

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
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

_WHERE: dict[str, tuple[str, str]] = {
    "AuthenticationFailed": ("agentic_eval.backends.base", "AuthenticationFailed"),
    "BackendError": ("agentic_eval.backends.base", "BackendError"),
    "BackendInfo": ("agentic_eval.backends.base", "BackendInfo"),
    "CallContext": ("agentic_eval.backends.base", "CallContext"),
    "ModelBackend": ("agentic_eval.backends.base", "ModelBackend"),
    "ProviderRequestError": ("agentic_eval.backends.base", "ProviderRequestError"),
    "ReplayDivergence": ("agentic_eval.backends.base", "ReplayDivergence"),
    "RetryPolicy": ("agentic_eval.backends.base", "RetryPolicy"),
    "Review": ("agentic_eval.backends.base", "Review"),
    "TransientBackendError": ("agentic_eval.backends.base", "TransientBackendError"),
    "AgentTask": ("agentic_eval.backends.scripted", "AgentTask"),
    "Call": ("agentic_eval.backends.scripted", "Call"),
    "ScriptedAgent": ("agentic_eval.backends.scripted", "ScriptedAgent"),
    "ScriptedBackend": ("agentic_eval.backends.scripted", "ScriptedBackend"),
    "Submit": ("agentic_eval.backends.scripted", "Submit"),
    "ToolReply": ("agentic_eval.backends.scripted", "ToolReply"),
    "respond": ("agentic_eval.backends.scripted", "respond"),
    "BackendSpec": ("agentic_eval.backends.spec", "BackendSpec"),
    "live_backend_from_spec": ("agentic_eval.backends.spec", "live_backend_from_spec"),
    "providers": ("agentic_eval.backends.spec", "providers"),
    "register_provider": ("agentic_eval.backends.spec", "register_provider"),
}

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


__getattr__ = lazy_exports(__name__, _WHERE, globals())
