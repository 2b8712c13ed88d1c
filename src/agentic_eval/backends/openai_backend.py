"""The OpenAI-compatible backend: Chat Completions with tools, through the official ``openai`` SDK.

It serves OpenAI itself and any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio...)
given its ``base_url``. The SDK is imported only when this backend is constructed; its own retries
are switched off so that retries follow the run's
:class:`~agentic_eval.backends.base.RetryPolicy`.

Requests take the SDK's lower-level path, ``client.post("/chat/completions", ...)``, which
``chat.completions.create`` itself ends in: the same URL, headers, authentication, timeout and
error classes, and the same JSON body byte for byte (tests/test_client_fast_path.py holds the two
together). It skips what costs CPU and changes nothing in the requests this backend sends: the
walk of the body against the SDK's typed-dict parameter types (``create``'s transform, about
three quarters of the client's CPU per request on retail_ops; bench/client_cpu.py), and building
``ChatCompletion`` objects from the reply, which is read as plain JSON here. The body is encoded
once per call (the run's retries resend the same bytes), its tools' part once per tuple of
tools. What ``create`` does and this path does not: check ``response_format``, which this backend
never sends (the SDK checks the other parameters' types only on the type-checker's side). A reply
that is not a completion (not JSON, no ``model``...) is a :class:`BackendError` here, where
``create`` let a ``JSONDecodeError`` or ``AttributeError`` escape. One HTTP client per backend,
keeping :data:`KEEPALIVE_CONNECTIONS` connections alive, serves every request of a run.

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
    from openai import RequestOptions
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartTextParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
    )

__all__ = [
    "KEEPALIVE_CONNECTIONS",
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

_encode = compact_json
_OPTIONS: RequestOptions = {"security": {"bearer_auth": True}}
"""The request options ``chat.completions.create`` passes (which credentials to send)."""


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
            api_key=key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=sdk_http_client(openai, timeout),
        )
        self._tools_json = EncodedTools(_tool_param)
        self._messages_json = EncodedMessages(_message_params)

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
        client = self._client
        content = self.request_body(request)

        async def attempt() -> ModelResponse:
            try:
                data: object = await client.post(
                    "/chat/completions", content=content, cast_to=object, options=_OPTIONS
                )
            except sdk.APIError as exc:
                raise classify_sdk_error("openai", sdk, exc, self._timeout) from exc
            except json.JSONDecodeError as exc:  # a JSON content type, and a body that is not
                raise unreadable_response("openai", exc) from exc
            return _from_completion(data)

        return await with_retries(self._retry, attempt)

    def request_body(self, request: ModelRequest) -> bytes:
        """The JSON body of ``request``, byte for byte what ``chat.completions.create`` sends.

        Its fields in ``create``'s order: ``model``, ``messages``, the output-token limit under
        the configured field, ``temperature``, and ``tools`` when there are any.

        Args:
            request: The provider-neutral request.

        Returns:
            UTF-8 JSON.
        """
        fields: dict[str, Any] = {"model": request.model, "messages": []}
        fields[self._max_tokens_param] = request.max_tokens
        fields["temperature"] = request.temperature
        system = [{"role": "system", "content": request.system}] if request.system else []
        head = splice_messages(_encode(fields), self._messages_json(request.messages, system))
        if not request.tools:
            return head.encode()
        return (head[:-1] + ',"tools":').encode() + self._tools_json(request.tools) + b"}"

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


def _message_params(message: Message) -> list[Any]:
    if message.role == "user":
        return list(_user_messages(message))
    return [_assistant_message(message)]


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


def _from_completion(data: object) -> ModelResponse:
    """The reply of ``POST /chat/completions`` as a :class:`ModelResponse`.

    Reads the JSON as ``ChatCompletion`` would hold it, field for field; a reply without the
    fields every completion has is a :class:`BackendError`.
    """
    return read_reply("openai", data, _completion_response)


def _completion_response(reply: dict[str, Any]) -> ModelResponse:
    choices: Any = reply.get("choices")
    if not choices:
        raise BackendError("openai: the response has no choices")
    choice: Any = choices[0]
    message: Any = choice["message"]
    text: Any = message.get("content")
    refusal: Any = message.get("refusal")
    content: list[ContentBlock] = []
    if text:
        content.append(TextBlock(text=text))
    elif refusal:
        content.append(TextBlock(text=refusal))
    for call in message.get("tool_calls") or ():
        if call["type"] == "function":
            function = call["function"]
            arguments = decode_tool_arguments(function["arguments"])
            content.append(ToolUseBlock(id=call["id"], name=function["name"], input=arguments))
        else:  # a custom (free-text) tool call: its input is not JSON by definition
            custom = call["custom"]
            arguments = {RAW_ARGUMENTS_KEY: custom["input"]}
            content.append(ToolUseBlock(id=call["id"], name=custom["name"], input=arguments))
    stop: StopReason = _FINISH_REASONS.get(choice.get("finish_reason") or "", "other")
    if refusal and not text:
        stop = "refusal"
    counts: Any = reply.get("usage")
    usage = (
        Usage(input_tokens=counts["prompt_tokens"], output_tokens=counts["completion_tokens"])
        if counts is not None
        else Usage()
    )
    return ModelResponse(
        content=tuple(content), stop_reason=stop, usage=usage, model=reply["model"]
    )
