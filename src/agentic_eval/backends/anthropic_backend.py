"""The Anthropic backend: the Messages API with tools, through the official ``anthropic`` SDK.

The SDK is imported only when this backend is constructed. Its own retries are switched off so
that retries follow the run's :class:`~agentic_eval.backends.base.RetryPolicy`, and provider
errors are classified into the backend error classes the loop understands.

``ModelRequest.temperature`` is not sent: the API version the SDK speaks (``2026-10-21``) refuses
every sampling parameter (``temperature``, ``top_p``, ``top_k``) with HTTP 400, even at their
defaults, and the SDK no longer accepts them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    BackendInfo,
    CallContext,
    ModelBackend,
    RetryPolicy,
    with_retries,
)
from agentic_eval.backends.errors import classify_sdk_error
from agentic_eval.core.messages import ContentBlock, Message, TextBlock, ToolUseBlock
from agentic_eval.core.model import ModelRequest, ModelResponse, StopReason, ToolSpec, Usage

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import ContentBlockParam, MessageParam, ToolParam

__all__ = ["AnthropicBackend"]

_DEFAULT_RETRY = RetryPolicy()
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


PLACEHOLDER_API_KEY = "not-needed"


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
            api_key=key, base_url=base_url, timeout=timeout, max_retries=0
        )

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
        omit = sdk.omit
        messages = [_message_param(m) for m in request.messages]
        tools = [_tool_param(t) for t in request.tools]

        async def attempt() -> ModelResponse:
            try:
                reply = await self._client.messages.create(
                    model=request.model,
                    max_tokens=request.max_tokens,
                    messages=messages,
                    system=request.system or omit,
                    tools=tools or omit,
                )
            except sdk.APIError as exc:
                raise classify_sdk_error("anthropic", sdk, exc, self._timeout) from exc
            return _from_message(reply)

        return await with_retries(self._retry, attempt)

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


def _from_message(reply: anthropic.types.Message) -> ModelResponse:
    content: list[ContentBlock] = []
    for block in reply.content:
        if block.type == "text":
            content.append(TextBlock(text=block.text))
        elif block.type == "tool_use":
            content.append(ToolUseBlock(id=block.id, name=block.name, input=dict(block.input)))
        # Other block kinds (thinking, server tools) are never requested by this backend.
    stop = _STOP_REASONS.get(reply.stop_reason or "", "other")
    u = reply.usage
    cached = (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    usage = Usage(input_tokens=u.input_tokens + cached, output_tokens=u.output_tokens)
    return ModelResponse(content=tuple(content), stop_reason=stop, usage=usage, model=reply.model)
