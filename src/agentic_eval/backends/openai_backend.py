"""The OpenAI-compatible backend: Chat Completions with tools, through the official ``openai`` SDK.

It serves OpenAI itself and any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio...)
given its ``base_url``. The SDK is imported only when this backend is constructed; its own retries
are switched off so that retries follow the run's
:class:`~agentic_eval.backends.base.RetryPolicy`.

Conversation mapping: the system prompt is the first ``system`` message; a user message's tool
results become one ``tool`` message each, followed by a ``user`` message for its text (if any);
assistant tool calls carry their input as JSON ``arguments``. Chat Completions has no error flag
on tool results, so ``ToolResultBlock.is_error`` is carried only by the result's text.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Literal

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
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartTextParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
    )

__all__ = [
    "PLACEHOLDER_API_KEY",
    "RAW_ARGUMENTS_KEY",
    "OpenAIBackend",
    "decode_tool_arguments",
    "encode_tool_arguments",
    "to_chat_messages",
]

RAW_ARGUMENTS_KEY = "_raw_arguments"
"""Tool input key holding tool-call arguments that are not a JSON object, verbatim.

The loop then reports invalid arguments to the agent instead of the backend crashing.
"""

PLACEHOLDER_API_KEY = "not-needed"
"""Key sent to a custom ``base_url`` when no key is set: local servers ignore it."""

_DEFAULT_RETRY = RetryPolicy()
_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]


class OpenAIBackend(ModelBackend):
    """A live model behind the OpenAI Chat Completions API or a compatible server."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        retry: RetryPolicy = _DEFAULT_RETRY,
        timeout: float = 60.0,
        agent_label: str | None = None,
        max_tokens_param: MaxTokensParam | None = None,
    ) -> None:
        """Create the SDK client.

        Args:
            model: Model name as the server knows it.
            api_key: API key; defaults to ``OPENAI_API_KEY``. With a custom ``base_url`` (or
                ``OPENAI_BASE_URL``) and no key, the placeholder ``"not-needed"`` is sent.
            base_url: An OpenAI-compatible endpoint ending in ``/v1``; defaults to OpenAI.
            retry: Retries for transient provider errors (the SDK's own retries are off).
            timeout: Seconds before one HTTP attempt times out.
            agent_label: Agent name for scorecards; defaults to the model name.
            max_tokens_param: Which request field carries the output-token limit. By default
                ``max_completion_tokens`` for OpenAI itself (its newer models refuse
                ``max_tokens``) and ``max_tokens`` for a custom endpoint (what local servers
                understand).

        Raises:
            BackendError: The ``openai`` SDK is not installed.
            AuthenticationFailed: No API key is available for OpenAI itself.
        """
        try:
            import openai
        except ImportError:
            raise BackendError(
                "the openai backend needs the openai SDK: pip install 'agentic-eval[openai]'"
            ) from None
        custom_endpoint = bool(base_url or os.environ.get("OPENAI_BASE_URL"))
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if not custom_endpoint:
                raise AuthenticationFailed("OPENAI_API_KEY is not set")
            key = PLACEHOLDER_API_KEY
        self._sdk = openai
        self._model = model
        self._retry = retry
        self._timeout = timeout
        self._agent_label = agent_label
        self._max_tokens_param: MaxTokensParam = max_tokens_param or (
            "max_tokens" if custom_endpoint else "max_completion_tokens"
        )
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url, timeout=timeout, max_retries=0
        )

    def info(self) -> BackendInfo:
        """The backend, model and agent label, for provenance."""
        return BackendInfo(
            backend="openai",
            model=self._model,
            agent=self._agent_label or self._model,
            agent_kind="model",
        )

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """Send one Chat Completions request, retrying transient failures per the retry policy.

        Args:
            request: The provider-neutral request.
            call: Which domain, case and turn this is (not sent to the provider).

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
        messages = to_chat_messages(request)
        tools = [_tool_param(t) for t in request.tools]
        limit = request.max_tokens
        use_completion = self._max_tokens_param == "max_completion_tokens"

        async def attempt() -> ModelResponse:
            try:
                reply = await self._client.chat.completions.create(
                    model=request.model,
                    messages=messages,
                    tools=tools or omit,
                    temperature=request.temperature,
                    max_completion_tokens=limit if use_completion else omit,
                    max_tokens=omit if use_completion else limit,
                )
            except sdk.APIError as exc:
                raise classify_sdk_error("openai", sdk, exc, self._timeout) from exc
            return _from_completion(reply)

        return await with_retries(self._retry, attempt)

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._client.close()


def encode_tool_arguments(arguments: dict[str, Any]) -> str:
    """Tool-call input as Chat Completions ``arguments`` text.

    Args:
        arguments: The tool input.

    Returns:
        Sorted-key JSON, or the verbatim text when the input is ``{RAW_ARGUMENTS_KEY: text}``
        (arguments the model produced that were not a JSON object go back as it wrote them).
    """
    raw = arguments.get(RAW_ARGUMENTS_KEY)
    if len(arguments) == 1 and isinstance(raw, str):
        return raw
    return json.dumps(arguments, sort_keys=True)


def decode_tool_arguments(text: str) -> dict[str, Any]:
    """Chat Completions ``arguments`` text as tool input.

    Args:
        text: The arguments as the model wrote them.

    Returns:
        The parsed JSON object; ``{}`` for blank text (some servers send it for no arguments);
        otherwise ``{RAW_ARGUMENTS_KEY: text}`` when the text is not a JSON object.
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {RAW_ARGUMENTS_KEY: text}
    if not isinstance(value, dict):
        return {RAW_ARGUMENTS_KEY: text}
    return value  # pyright: ignore[reportUnknownVariableType]


def to_chat_messages(request: ModelRequest) -> list[ChatCompletionMessageParam]:
    """The request's system prompt and conversation as Chat Completions messages.

    Args:
        request: The provider-neutral request.

    Returns:
        The ``messages`` list for ``chat.completions.create``.
    """
    out: list[ChatCompletionMessageParam] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "user":
            out.extend(_user_messages(message))
        else:
            out.append(_assistant_message(message))
    return out


def _text_content(texts: list[str]) -> str | list[ChatCompletionContentPartTextParam]:
    # One block is sent as a plain string (what every server accepts); several keep their bounds.
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": t} for t in texts]


def _user_messages(message: Message) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = [
        {"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content}
        for r in message.tool_results()
    ]
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    if texts:
        out.append({"role": "user", "content": _text_content(texts)})
    return out


def _assistant_message(message: Message) -> ChatCompletionAssistantMessageParam:
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    param: ChatCompletionAssistantMessageParam = {
        "role": "assistant",
        "content": _text_content(texts) if texts else None,
    }
    calls: list[ChatCompletionMessageFunctionToolCallParam] = [
        {
            "id": use.id,
            "type": "function",
            "function": {"name": use.name, "arguments": encode_tool_arguments(use.input)},
        }
        for use in message.tool_uses()
    ]
    if calls:
        param["tool_calls"] = calls
    return param


def _tool_param(tool: ToolSpec) -> ChatCompletionFunctionToolParam:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }


def _from_completion(reply: ChatCompletion) -> ModelResponse:
    if not reply.choices:
        raise BackendError("openai: the response has no choices")
    choice = reply.choices[0]
    message = choice.message
    content: list[ContentBlock] = []
    if message.content:
        content.append(TextBlock(text=message.content))
    elif message.refusal:
        content.append(TextBlock(text=message.refusal))
    for call in message.tool_calls or []:
        if call.type == "function":
            arguments = decode_tool_arguments(call.function.arguments)
            content.append(ToolUseBlock(id=call.id, name=call.function.name, input=arguments))
        else:  # a custom (free-text) tool call: its input is not JSON by definition
            arguments = {RAW_ARGUMENTS_KEY: call.custom.input}
            content.append(ToolUseBlock(id=call.id, name=call.custom.name, input=arguments))
    stop: StopReason = _FINISH_REASONS.get(choice.finish_reason or "", "other")
    if message.refusal and not message.content:
        stop = "refusal"
    usage = (
        Usage(
            input_tokens=reply.usage.prompt_tokens,
            output_tokens=reply.usage.completion_tokens,
        )
        if reply.usage is not None
        else Usage()
    )
    return ModelResponse(content=tuple(content), stop_reason=stop, usage=usage, model=reply.model)
