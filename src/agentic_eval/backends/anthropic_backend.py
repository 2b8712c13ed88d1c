"""The Anthropic backend: the Messages API with tools, through the official ``anthropic`` SDK.

The SDK is imported only when this backend is constructed. Its own retries are switched off so
that retries follow the run's :class:`~agentic_eval.backends.base.RetryPolicy`, and provider
errors are classified into the backend error classes the loop understands.

``ModelRequest.temperature`` is not sent: the API version the SDK speaks (``2026-10-21``) refuses
every sampling parameter (``temperature``, ``top_p``, ``top_k``) with HTTP 400, even at their
defaults, and the SDK no longer accepts them.

Requests take the SDK's lower-level path, ``client.post("/v1/messages", ...)``, which
``messages.create`` itself ends in: the same URL, headers, authentication, timeout and error
classes, and the same JSON body byte for byte (tests/test_client_fast_path.py holds the two
together). The body goes as encoded bytes, so the SDK does not walk it again to copy it
(``copy_tree``), and the reply is read as plain JSON rather than built into ``Message`` objects;
the body is encoded once per call (the run's retries resend the same bytes), its tools' part once
per tuple of tools. What ``messages.create`` does and this path does not: its
``DeprecationWarning`` for a model near its end of life (hidden by Python's default warning
filters), and the OpenTelemetry span of the call, which the SDK makes only when a tracer provider
is configured: then every request takes ``messages.create`` itself, so that the spans are exactly
the SDK's. A reply that is not a message (not JSON, no ``usage``...) is a :class:`BackendError`
here, where ``create`` let a ``JSONDecodeError`` or ``AttributeError`` escape. One HTTP client per
backend, keeping :data:`KEEPALIVE_CONNECTIONS` connections alive, serves every request of a run.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    BackendInfo,
    CallContext,
    ModelBackend,
    RetryPolicy,
    with_retries,
)
from agentic_eval.backends.errors import classify_sdk_error, read_reply, unreadable_response
from agentic_eval.backends.http import (
    KEEPALIVE_CONNECTIONS,
    EncodedMessages,
    EncodedTools,
    compact_json,
    sdk_http_client,
    splice_messages,
)
from agentic_eval.core.messages import ContentBlock, Message, TextBlock, ToolUseBlock
from agentic_eval.core.model import ModelRequest, ModelResponse, StopReason, ToolSpec, Usage

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam, ToolParam

__all__ = ["KEEPALIVE_CONNECTIONS", "AnthropicBackend"]

_DEFAULT_RETRY = RetryPolicy()
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


PLACEHOLDER_API_KEY = "not-needed"

_encode = compact_json


class AnthropicBackend(ModelBackend):
    """A live Claude model behind the Anthropic Messages API."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        retry: RetryPolicy = _DEFAULT_RETRY,
        timeout: float = 60.0,
        agent_label: str | None = None,
    ) -> None:
        """Create the SDK client.

        Args:
            model: Model name, e.g. ``claude-sonnet-4-5``.
            api_key: API key; defaults to the ``ANTHROPIC_API_KEY`` environment variable.
            base_url: Alternative endpoint (a proxy, or a :class:`FakeProvider` in tests).
            retry: Retries for transient provider errors (the SDK's own retries are off).
            timeout: Seconds before one HTTP attempt times out.
            agent_label: Agent name for scorecards; defaults to the model name.

        Raises:
            BackendError: The ``anthropic`` SDK is not installed.
            AuthenticationFailed: No API key is given or set in the environment (with a
                ``base_url`` and no key, the placeholder ``"not-needed"`` is sent instead).
        """
        try:
            import anthropic
        except ImportError:
            message = "the anthropic backend needs the anthropic SDK: "
            raise BackendError(message + "pip install 'agentic-eval[anthropic]'") from None
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        if not key and base_url:
            key = PLACEHOLDER_API_KEY  # a local server (llama.cpp, a proxy) needs none
        if not key:
            raise AuthenticationFailed("ANTHROPIC_API_KEY is not set")
        self._sdk = anthropic
        self._model = model
        self._retry = retry
        self._timeout = timeout
        self._agent_label = agent_label
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=sdk_http_client(anthropic, timeout),
        )
        self._tools_json = EncodedTools(_tool_param)
        self._messages_json = EncodedMessages(lambda m: [_message_param(m)])

    def info(self) -> BackendInfo:
        """The backend, model and agent label, for provenance."""
        return BackendInfo(
            backend="anthropic",
            model=self._model,
            agent=self._agent_label or self._model,
            agent_kind="model",
        )

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """Send one Messages API request, retrying transient failures per the retry policy.

        Args:
            request: The provider-neutral request.
            call: Which domain, case and turn this is (not sent to the provider). The request's
                ``temperature`` is not sent either (see the module docstring).

        Returns:
            The response, converted to the provider-neutral form.

        Raises:
            TransientBackendError: 429, 529, 5xx, timeout or connection failure, after retries.
            AuthenticationFailed: The provider refused the key (401 or 403).
            ProviderRequestError: The provider refused the request (another 4xx).
            BackendError: The provider answered with something the SDK could not read.
        """
        sdk = self._sdk
        client = self._client
        if _traced(client):
            return await with_retries(self._retry, lambda: self._create(request))
        content = self.request_body(request)

        async def attempt() -> ModelResponse:
            try:
                data: object = await client.post("/v1/messages", content=content, cast_to=object)
            except sdk.APIError as exc:
                raise classify_sdk_error("anthropic", sdk, exc, self._timeout) from exc
            except json.JSONDecodeError as exc:  # a JSON content type, and a body that is not
                raise unreadable_response("anthropic", exc) from exc
            return _from_message(data)

        return await with_retries(self._retry, attempt)

    def request_body(self, request: ModelRequest) -> bytes:
        """The JSON body of ``request``, byte for byte what ``messages.create`` sends.

        Its fields in ``create``'s order: ``max_tokens``, ``messages``, ``model``, and
        ``system`` and ``tools`` when there are any.

        Args:
            request: The provider-neutral request.

        Returns:
            UTF-8 JSON.
        """
        fields = self._fields(request, tools=False, messages=False)
        head = splice_messages(_encode(fields), self._messages_json(request.messages))
        if not request.tools:
            return head.encode()
        return (head[:-1] + ',"tools":').encode() + self._tools_json(request.tools) + b"}"

    def _fields(
        self, request: ModelRequest, *, tools: bool, messages: bool = True
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "messages": [_message_param(m) for m in request.messages] if messages else [],
            "model": request.model,
        }
        if request.system:
            fields["system"] = request.system
        if tools and request.tools:
            fields["tools"] = [_tool_param(t) for t in request.tools]
        return fields

    async def _create(self, request: ModelRequest) -> ModelResponse:
        """One attempt through ``messages.create`` itself (when the SDK makes spans)."""
        sdk = self._sdk
        create: Any = self._client.messages.create  # its overloads do not take a dict's keys
        try:
            reply: Any = await create(**self._fields(request, tools=True))
        except sdk.APIError as exc:
            raise classify_sdk_error("anthropic", sdk, exc, self._timeout) from exc
        return _from_message(reply.to_dict())

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._client.close()


def _message_param(message: Message) -> MessageParam:
    blocks: list[ContentBlockParam] = []
    for block in message.content:
        if block.type == "text":
            blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        else:
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.tool_use_id,
                    "content": block.content,
                    "is_error": block.is_error,
                }
            )
    if message.role == "user":
        return {"role": "user", "content": blocks}
    return {"role": "assistant", "content": blocks}


def _tool_param(tool: ToolSpec) -> ToolParam:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _traced(client: Any) -> bool:
    """Whether the SDK would make an OpenTelemetry span for a call: it has a tracer (tracing is
    on by default) and a tracer provider is configured (without one, OpenTelemetry's default
    proxy gives spans that record nothing and that the SDK drops)."""
    if getattr(client, "_tracer", None) is None:
        return False
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return False
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def _from_message(data: object) -> ModelResponse:
    """The reply of ``POST /v1/messages`` as a :class:`ModelResponse`.

    Reads the JSON as ``Message`` would hold it, field for field; a reply without the fields
    every message has is a :class:`BackendError`.
    """
    return read_reply("anthropic", data, _message_response)


def _message_response(reply: dict[str, Any]) -> ModelResponse:
    content: list[ContentBlock] = []
    for block in reply["content"]:
        kind = block["type"]
        if kind == "text":
            content.append(TextBlock(text=block["text"]))
        elif kind == "tool_use":
            content.append(
                ToolUseBlock(id=block["id"], name=block["name"], input=dict(block["input"]))
            )
        # Other block kinds (thinking, server tools) are never requested by this backend.
    stop = _STOP_REASONS.get(reply.get("stop_reason") or "", "other")
    u: Any = reply["usage"]
    cached = (u.get("cache_read_input_tokens") or 0) + (u.get("cache_creation_input_tokens") or 0)
    usage = Usage(input_tokens=u["input_tokens"] + cached, output_tokens=u["output_tokens"])
    return ModelResponse(
        content=tuple(content), stop_reason=stop, usage=usage, model=reply["model"]
    )
