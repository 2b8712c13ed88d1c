"""Model requests and responses: what the agent loop sends to a backend and what comes back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentic_eval.core.canonical import sha256_of
from agentic_eval.core.messages import ContentBlock, Frozen, Message, ToolUseBlock

StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


class ToolSpec(Frozen):
    """A tool as the model sees it."""

    name: str = Field(description="Tool name.")
    description: str = Field(description="What the tool does, for the model.")
    input_schema: dict[str, Any] = Field(description="JSON schema of the arguments.")


class ModelRequest(Frozen):
    """Everything one model call depends on. Its canonical hash is the request key."""

    model: str = Field(description="Model name as given to the backend.")
    system: str = Field(description="System prompt.")
    messages: tuple[Message, ...] = Field(description="The conversation so far.")
    tools: tuple[ToolSpec, ...] = Field(description="Tools offered.")
    max_tokens: int = Field(description="Upper bound on output tokens for this call.")
    temperature: float = Field(default=0.0, description="Sampling temperature.")

    def key(self) -> str:
        """The canonical request key: sha256 of the canonical JSON of this request."""
        return sha256_of(self)


class Usage(Frozen):
    """Token counts reported by the provider (zero for scripted agents)."""

    input_tokens: int = Field(default=0, description="Prompt tokens.")
    output_tokens: int = Field(default=0, description="Completion tokens.")


class ModelResponse(Frozen):
    """One model turn."""

    content: tuple[ContentBlock, ...] = Field(description="Text and tool calls, in order.")
    stop_reason: StopReason = Field(description="Why the model stopped.")
    usage: Usage = Field(default_factory=Usage, description="Token usage.")
    model: str = Field(default="", description="Model name the provider reports.")

    def message(self) -> Message:
        """This response as an assistant message for the conversation."""
        return Message(role="assistant", content=self.content)

    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this response, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


_TOOLS_JSON: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], bytes]] = {}


def _tools_json(tools: tuple[ToolSpec, ...]) -> bytes:
    """Canonical JSON of a tool list, memoised on the specs' identity (they are built once per
    domain and offered in every case; the memo holds them, so their ids cannot be reused)."""
    from agentic_eval.core.canonical import canonical_bytes

    ident = tuple(id(t) for t in tools)
    hit = _TOOLS_JSON.get(ident)
    if hit is not None:
        return hit[1]
    text = canonical_bytes([t.model_dump(mode="json") for t in tools])
    if len(_TOOLS_JSON) > 256:
        _TOOLS_JSON.clear()
    _TOOLS_JSON[ident] = (tools, text)
    return text


class RequestKeyBuilder:
    """Computes :meth:`ModelRequest.key` for a growing conversation without re-serialising it.

    The canonical JSON of a request is its sorted keys in order: ``max_tokens``, ``messages``,
    ``model``, ``system``, ``temperature``, ``tools``. The fixed parts are serialised once and each
    message once, as it is appended; the key is then the sha256 of their concatenation, which
    equals ``ModelRequest.key()`` exactly (a test holds the two together).
    """

    def __init__(
        self,
        model: str,
        system: str,
        tools: list[ToolSpec] | tuple[ToolSpec, ...],
        max_tokens: int,
        temperature: float,
    ) -> None:
        from agentic_eval.core.canonical import canonical_bytes

        self._head = b'{"max_tokens":' + canonical_bytes(max_tokens) + b',"messages":['
        self._tail = (
            b'],"model":'
            + canonical_bytes(model)
            + b',"system":'
            + canonical_bytes(system)
            + b',"temperature":'
            + canonical_bytes(float(temperature))
            + b',"tools":'
            + _tools_json(tuple(tools))
            + b"}"
        )
        self._parts: list[bytes] = []

    def append(self, message: Message) -> None:
        """Add the next message of the conversation."""
        from agentic_eval.core.canonical import canonical_bytes

        self._parts.append(canonical_bytes(message))

    def key(self) -> str:
        """The key of the request with the messages appended so far."""
        import hashlib

        return hashlib.sha256(self._head + b",".join(self._parts) + self._tail).hexdigest()
