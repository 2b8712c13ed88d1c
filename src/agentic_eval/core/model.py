"""Model requests and responses: what the agent loop sends to a backend and what comes back."""

from __future__ import annotations

import hashlib
from typing import Any, Literal, NamedTuple

from pydantic import Field

from agentic_eval.core.canonical import canonical_bytes, sha256_of, spliced_bytes
from agentic_eval.core.messages import (
    ContentBlock,
    Frozen,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    trusted,
)

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
        return trusted(Message, {"role": "assistant", "content": self.content})

    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this response, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def text(self) -> str:
        """All text blocks joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


_TOOLS_JSON: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], bytes]] = {}


def _tools_json(tools: tuple[ToolSpec, ...]) -> bytes:
    """Canonical JSON of a tool list, memoised on the specs' identity (they are built once per
    domain and offered in every case; the memo holds them, so their ids cannot be reused)."""
    ident = tuple(id(t) for t in tools)
    hit = _TOOLS_JSON.get(ident)
    if hit is not None:
        return hit[1]
    text = canonical_bytes([t.model_dump(mode="json") for t in tools])
    if len(_TOOLS_JSON) > 256:
        _TOOLS_JSON.clear()
    _TOOLS_JSON[ident] = (tools, text)
    return text


class _Fixed(NamedTuple):
    """The parts of a case's requests that do not change from turn to turn, serialised."""

    start: Any
    """A sha256 fed ``{"max_tokens":N,"messages":[`` (copied, never updated itself)."""
    tail: bytes
    """``],"model":...}``: what follows the messages."""
    template: bytes
    """Canonical JSON of the request template (every field but ``messages``)."""
    keys: dict[bytes, str]
    """Request keys made with these parts, by the sha256 of the request's bytes up to the end
    of its messages (see :meth:`RequestKeyBuilder.key`)."""


MAX_KEYS = 4096
"""Request keys a suite's fixed parts remember (then they start again)."""


_FIXED: dict[tuple[Any, ...], tuple[tuple[ToolSpec, ...], _Fixed]] = {}


def _fixed_json(
    model: str, system: str, tools: tuple[ToolSpec, ...], max_tokens: int, temperature: float
) -> _Fixed:
    """The fixed parts of the canonical JSON of requests: the same for every request of a case,
    and of every case of a suite with the same tools (a suite whose output models differ by
    case kind has a few such sets: the memo holds the tool specs, so their ids cannot be
    reused while they are in it)."""
    # repr and type tell apart what == does not (-0.0 and 0.0, True and 1)
    ident = (model, system, type(max_tokens), max_tokens, repr(temperature), *map(id, tools))
    hit = _FIXED.get(ident)
    if hit is not None:
        return hit[1]
    limit = b'{"max_tokens":' + canonical_bytes(max_tokens)
    after = (
        b'"model":'
        + canonical_bytes(model)
        + b',"system":'
        + canonical_bytes(system)
        + b',"temperature":'
        + canonical_bytes(temperature)
        + b',"tools":'
        + _tools_json(tools)
        + b"}"
    )
    found = _Fixed(
        hashlib.sha256(limit + b',"messages":['), b"]," + after, limit + b"," + after, {}
    )
    if len(_FIXED) >= 64:
        _FIXED.clear()
    _FIXED[ident] = (tools, found)
    return found


class RequestKeyBuilder:
    """Computes :meth:`ModelRequest.key` for a growing conversation without re-serialising it.

    The canonical JSON of a request is its sorted keys in order: ``max_tokens``, ``messages``,
    ``model``, ``system``, ``temperature``, ``tools``. The fixed parts are serialised once and each
    message once, as it is appended, into a running sha256 of everything up to the last message;
    the key is that hash completed with the fixed tail, which equals ``ModelRequest.key()``
    exactly (a test holds the two together).
    """

    def __init__(
        self,
        model: str,
        system: str,
        tools: list[ToolSpec] | tuple[ToolSpec, ...],
        max_tokens: int,
        temperature: float,
    ) -> None:
        fixed = _fixed_json(
            model,
            system,
            tools if type(tools) is tuple else tuple(tools),
            max_tokens,
            float(temperature),
        )
        self._running = fixed.start.copy()
        self._tail = fixed.tail
        self._keys = fixed.keys
        self._empty = True
        self.template = fixed.template
        """Canonical JSON of the :class:`~agentic_eval.core.transcript.RequestTemplate` of
        these requests (the same fields but ``messages``)."""

    def append(self, message: Message, encoded: bytes | None = None) -> bytes:
        """Add the next message of the conversation.

        Args:
            message: The message.
            encoded: Its canonical JSON, when the caller has it already.

        Returns:
            The message's canonical JSON.
        """
        data = canonical_bytes(message) if encoded is None else encoded
        self._running.update(data if self._empty else b"," + data)
        self._empty = False
        return data

    def key(self) -> str:
        """The key of the request with the messages appended so far.

        The fixed tail (the tool list: kilobytes) is hashed once per distinct conversation:
        the key is a function of the bytes before the tail, so a conversation met again (every
        sample of a case starts with the same request; a deterministic agent's epochs repeat
        theirs) is found by the digest of those bytes, which costs one block to finish.
        """
        seen = self._running.digest()
        found = self._keys.get(seen)
        if found is None:
            digest = self._running.copy()
            digest.update(self._tail)
            found = digest.hexdigest()
            if len(self._keys) >= MAX_KEYS:
                self._keys.clear()
            self._keys[seen] = found
        return found


class EncodedResponse(NamedTuple):
    """A response's canonical JSON, computed once and shared by replay's integrity check, the
    request key of the next turn and the transcript."""

    response: bytes
    """Canonical JSON of the response."""
    message: bytes
    """Canonical JSON of ``response.message()``."""
    key: str
    """sha256 of ``response``: the transcript's ``response_key``."""


_last_encoded: tuple[ModelResponse | None, EncodedResponse] = (None, EncodedResponse(b"", b"", ""))


_BLOCKS = frozenset({TextBlock, ToolUseBlock, ToolResultBlock})


def _response_json(response: ModelResponse) -> bytes:
    """Canonical JSON of a response. Its blocks and usage are flat models whose fields are all
    JSON data, so their instance dicts are their JSON form, which orjson writes at a fraction
    of pydantic's cost; a value orjson cannot write (not JSON data), or a subclass, goes
    through pydantic's serialiser (a test holds the two paths together)."""
    content = response.content
    if (
        type(response) is ModelResponse
        and type(response.usage) is Usage
        and _BLOCKS.issuperset(map(type, content))
    ):
        encoded = spliced_bytes(
            {
                "content": [block.__dict__ for block in content],
                "model": response.model,
                "stop_reason": response.stop_reason,
                "usage": response.usage.__dict__,
            }
        )
        if encoded is not None:
            return encoded
    return canonical_bytes(type(response).__pydantic_serializer__.to_python(response, mode="json"))


def encode_response(response: ModelResponse) -> EncodedResponse:
    """The canonical JSON and integrity key of a response.

    Replay checks a recorded response's key and the loop then files the same object in its
    transcript; a one-entry memo on the object's identity serialises it once for both (the memo
    holds the object, so its identity cannot be reused while it is there).
    """
    global _last_encoded
    last, encoded = _last_encoded
    if last is response:
        return encoded
    data = _response_json(response)
    if type(response) is ModelResponse:
        # {"content":[...],"model":"...","stop_reason":"...","usage":{...}}: the message is the
        # same content with its role. After the content no '],"' can occur outside a string,
        # and inside one a quote is escaped: the last '],"model":' ends the content.
        end = data.rfind(b'],"model":') + 1
        message = b'{"content":' + data[11:end] + b',"role":"assistant"}'
    else:  # a subclass may add fields: serialise its message on its own
        message = canonical_bytes(response.message())
    encoded = EncodedResponse(data, message, hashlib.sha256(data).hexdigest())
    _last_encoded = (response, encoded)
    return encoded
