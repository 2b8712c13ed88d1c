"""The Anthropic Messages and OpenAI Chat Completions wire formats, as :class:`FakeProvider`
speaks them: a request body parsed back into a provider-neutral
:class:`~agentic_eval.core.model.ModelRequest`, a
:class:`~agentic_eval.core.model.ModelResponse` (or an error) written as the provider would.

Wire-format notes. OpenAI has no ``is_error`` on tool results, so it is ``False`` after a round
trip through ``/v1/chat/completions``; consecutive ``tool`` messages and the ``user`` message
right after them are parsed back as one user message (tool results first), which is how the
OpenAI backend sends such a message. A tool call whose input is exactly
``{"_raw_arguments": text}`` is sent to OpenAI clients with ``text`` as its raw ``arguments``,
so tests can exercise arguments that are not valid JSON.
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

from agentic_eval.backends.openai_backend import RAW_ARGUMENTS_KEY
from agentic_eval.core.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentic_eval.core.model import ModelRequest, ModelResponse, StopReason, ToolSpec

__all__ = [
    "ANTHROPIC_PATH",
    "OPENAI_PATH",
    "BodyReader",
    "WireError",
    "WireFormat",
    "error_body",
    "parse_request",
    "parse_tools",
    "response_body",
]

WireFormat = Literal["anthropic", "openai"]

ANTHROPIC_PATH = "/v1/messages"
"""Where Anthropic clients post (the SDK appends it to the base URL)."""
OPENAI_PATH = "/v1/chat/completions"
"""Where OpenAI clients post (the SDK appends ``/chat/completions`` to a base URL ending in /v1)."""
_DEFAULT_TEMPERATURE = 1.0  # what both providers assume when a request omits it

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_CODES = {
    401: "invalid_api_key",
    404: "model_not_found",
    429: "rate_limit_exceeded",
}
_ANTHROPIC_STOP: dict[StopReason, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "other": "pause_turn",
}
# OpenAI has one "stop" for both a natural end and a stop sequence.
_OPENAI_FINISH: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
    "other": "function_call",
}


class WireError(Exception):
    """A request body that is not the wire format: the fake answers it with HTTP 400."""


def parse_request(
    wire: WireFormat, body: Any, tools: tuple[ToolSpec, ...] | None = None
) -> ModelRequest:
    """The provider-neutral request a decoded JSON request body stands for.

    Args:
        wire: The wire format.
        body: The decoded JSON body.
        tools: The body's ``tools`` already parsed (by :func:`parse_tools`), or None to parse
            them from ``body``.

    Raises:
        WireError: The body is not a request of that wire format.
    """
    req = _obj(body, "request body")
    if tools is None:
        tools = parse_tools(wire, req.get("tools", []))
    return _parse_anthropic(req, tools) if wire == "anthropic" else _parse_openai(req, tools)


def parse_tools(wire: WireFormat, raw: Any) -> tuple[ToolSpec, ...]:
    """A request body's decoded ``tools`` array as tool specs.

    Raises:
        WireError: Not a tools array of that wire format.
    """
    return _anthropic_tools(raw) if wire == "anthropic" else _openai_tools(raw)


def response_body(wire: WireFormat, response: ModelResponse, request: ModelRequest) -> Any:
    """The JSON body a provider of that wire format answers ``request`` with."""
    if wire == "anthropic":
        return _anthropic_response(response, request)
    return _openai_response(response, request)


def error_body(wire: WireFormat, status: int, message: str) -> dict[str, Any]:
    """The provider's error envelope for an HTTP error ``status`` with ``message``."""
    if wire == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {
        "error": {
            "message": message,
            "type": kind,
            "param": None,
            "code": _OPENAI_ERROR_CODES.get(status),
        }
    }


_TOOLS_KEY = b',"tools":'
_TOOLS_KEPT = 32  # distinct tool lists a reader keeps parsed (a suite offers a few)


class BodyReader:
    """Reads raw request bodies into requests, parsing a body's ``tools`` once per distinct
    bytes: a client that sends ``tools`` as the body's last field (both live backends do, and a
    suite offers the same list at every turn) has the rest parsed and its tools looked up.

    The split is checked, not assumed: the bytes before ``,"tools":`` closed with ``}`` must be
    a JSON object without ``tools``, and the bytes after it (less the final ``}``) a JSON array;
    anything else is parsed whole. Not thread-safe: one reader per thread.
    """

    def __init__(self) -> None:
        self._tools: dict[bytes, tuple[list[Any], tuple[ToolSpec, ...]]] = {}

    def read(self, wire: WireFormat, raw: bytes) -> tuple[dict[str, Any], ModelRequest]:
        """The decoded body and the request it stands for.

        Raises:
            ValueError: Not JSON.
            WireError: Not a request of that wire format.
        """
        cut = raw.rfind(_TOOLS_KEY)
        if cut > 0 and raw.endswith(b"}"):
            tail = raw[cut:]
            known = self._tools.get(tail)
            if known is not None:
                try:
                    head = json.loads(raw[:cut] + b"}")
                except ValueError:
                    head = None  # the tail is not the body's last field here
                if isinstance(head, dict) and "tools" not in head:
                    body = cast("dict[str, Any]", head)
                    body["tools"] = known[0]
                    return body, parse_request(wire, body, known[1])
            else:
                parsed = self._split(wire, raw, cut)
                if parsed is not None:
                    return parsed
        body = json.loads(raw)
        return body, parse_request(wire, body)

    def _split(
        self, wire: WireFormat, raw: bytes, cut: int
    ) -> tuple[dict[str, Any], ModelRequest] | None:
        try:
            head = json.loads(raw[:cut] + b"}")
            listed = json.loads(raw[cut + len(_TOOLS_KEY) : -1])
        except ValueError:
            return None
        if not isinstance(head, dict) or "tools" in head or not isinstance(listed, list):
            return None
        body, items = cast("dict[str, Any]", head), cast("list[Any]", listed)
        tools = parse_tools(wire, items)
        if len(self._tools) >= _TOOLS_KEPT:
            self._tools.clear()
        self._tools[raw[cut:]] = (items, tools)
        body["tools"] = items
        return body, parse_request(wire, body, tools)


# -- wire parsing helpers ----------------------------------------------------------------------


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f"{what} must be a JSON object")
    return value  # pyright: ignore[reportUnknownVariableType]


def _arr(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise WireError(f"{what} must be a JSON array")
    return value  # pyright: ignore[reportUnknownVariableType]


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise WireError(f"{what} must be a string")
    return value


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireError(f"{what} must be an integer")
    return value


def _temperature(value: Any, what: str) -> float:
    if value is None:  # absent: the provider's own default
        return _DEFAULT_TEMPERATURE
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise WireError(f"{what} must be a number")
    return float(value)


def _text_of(value: Any, what: str) -> str:
    """A string, or an array of ``{"type": "text", "text": ...}`` parts joined by newlines."""
    if isinstance(value, str):
        return value
    parts = [_obj(p, f"{what} part") for p in _arr(value, what)]
    return "\n".join(_str(p.get("text"), f"{what} part text") for p in parts)


def _text_blocks(value: Any, what: str) -> list[ContentBlock]:
    if value is None:
        return []
    if isinstance(value, str):
        return [TextBlock(text=value)]
    blocks: list[ContentBlock] = []
    for part in _arr(value, what):
        part_obj = _obj(part, f"{what} part")
        if part_obj.get("type") != "text":
            raise WireError(f"unsupported {what} part type {part_obj.get('type')!r}")
        blocks.append(TextBlock(text=_str(part_obj.get("text"), f"{what} part text")))
    return blocks


# -- Anthropic wire format ---------------------------------------------------------------------


def _parse_anthropic(req: dict[str, Any], tools: tuple[ToolSpec, ...]) -> ModelRequest:
    system = req.get("system")
    messages: list[Message] = []
    for i, raw in enumerate(_arr(req.get("messages"), "messages")):
        msg = _obj(raw, f"messages[{i}]")
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise WireError(f"messages[{i}].role must be user or assistant, not {role!r}")
        content = msg.get("content")
        if isinstance(content, str):
            blocks: list[ContentBlock] = [TextBlock(text=content)]
        else:
            what = f"messages[{i}].content"
            blocks = [_anthropic_block(_obj(b, what), what) for b in _arr(content, what)]
        messages.append(Message(role=role, content=tuple(blocks)))
    return ModelRequest(
        model=_str(req.get("model"), "model"),
        system="" if system is None else _text_of(system, "system"),
        messages=tuple(messages),
        tools=tools,
        max_tokens=_int(req.get("max_tokens"), "max_tokens"),
        temperature=_temperature(req.get("temperature"), "temperature"),
    )


def _anthropic_tools(raw: Any) -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(
            name=_str(t.get("name"), "tool name"),
            description=_str(t.get("description", ""), "tool description"),
            input_schema=_obj(t.get("input_schema"), "tool input_schema"),
        )
        for t in (_obj(item, "tool") for item in _arr(raw, "tools"))
    )


def _anthropic_block(block: dict[str, Any], what: str) -> ContentBlock:
    kind = block.get("type")
    if kind == "text":
        return TextBlock(text=_str(block.get("text"), f"{what} text"))
    if kind == "tool_use":
        return ToolUseBlock(
            id=_str(block.get("id"), f"{what} tool_use id"),
            name=_str(block.get("name"), f"{what} tool_use name"),
            input=_obj(block.get("input"), f"{what} tool_use input"),
        )
    if kind == "tool_result":
        content = block.get("content", "")
        return ToolResultBlock(
            tool_use_id=_str(block.get("tool_use_id"), f"{what} tool_use_id"),
            content=_text_of(content, f"{what} tool_result content"),
            is_error=bool(block.get("is_error", False)),
        )
    raise WireError(f"unsupported content block type {kind!r} in {what}")


def _anthropic_response(response: ModelResponse, request: ModelRequest) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in response.content:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolUseBlock):
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": response.model or request.model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP[response.stop_reason],
        "stop_sequence": None,
        "usage": {
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
        },
    }


# -- OpenAI wire format ------------------------------------------------------------------------


def _parse_openai(req: dict[str, Any], tools: tuple[ToolSpec, ...]) -> ModelRequest:
    system_parts: list[str] = []
    messages: list[Message] = []
    pending_results: list[ContentBlock] = []  # tool messages waiting to become a user message

    def flush_results(extra: list[ContentBlock]) -> None:
        if pending_results or extra:
            messages.append(Message(role="user", content=(*pending_results, *extra)))
            pending_results.clear()

    for i, raw in enumerate(_arr(req.get("messages"), "messages")):
        msg = _obj(raw, f"messages[{i}]")
        role = msg.get("role")
        what = f"messages[{i}].content"
        if role in ("system", "developer"):
            system_parts.append(_text_of(msg.get("content"), what))
        elif role == "tool":
            pending_results.append(
                ToolResultBlock(
                    tool_use_id=_str(msg.get("tool_call_id"), f"messages[{i}].tool_call_id"),
                    content=_text_of(msg.get("content"), what),
                )
            )
        elif role == "user":
            flush_results(_text_blocks(msg.get("content"), what))
        elif role == "assistant":
            flush_results([])
            blocks = _text_blocks(msg.get("content"), what)
            for j, call in enumerate(_arr(msg.get("tool_calls") or [], "tool_calls")):
                call_obj = _obj(call, f"messages[{i}].tool_calls[{j}]")
                function = _obj(call_obj.get("function"), f"messages[{i}].tool_calls[{j}].function")
                blocks.append(
                    ToolUseBlock(
                        id=_str(call_obj.get("id"), "tool call id"),
                        name=_str(function.get("name"), "function name"),
                        input=_decode_arguments(_str(function.get("arguments"), "arguments")),
                    )
                )
            messages.append(Message(role="assistant", content=tuple(blocks)))
        else:
            raise WireError(f"messages[{i}].role {role!r} is not supported")
    flush_results([])
    max_tokens = req.get("max_completion_tokens", req.get("max_tokens"))
    return ModelRequest(
        model=_str(req.get("model"), "model"),
        system="\n".join(system_parts),
        messages=tuple(messages),
        tools=tools,
        max_tokens=_int(max_tokens, "max_completion_tokens or max_tokens"),
        temperature=_temperature(req.get("temperature"), "temperature"),
    )


def _openai_tools(raw: Any) -> tuple[ToolSpec, ...]:
    tools: list[ToolSpec] = []
    for item in _arr(raw, "tools"):
        tool = _obj(item, "tool")
        if tool.get("type") != "function":
            raise WireError(f"unsupported tool type {tool.get('type')!r}")
        function = _obj(tool.get("function"), "tool function")
        tools.append(
            ToolSpec(
                name=_str(function.get("name"), "tool name"),
                description=_str(function.get("description", ""), "tool description"),
                input_schema=_obj(function.get("parameters", {}), "tool parameters"),
            )
        )
    return tuple(tools)


def _decode_arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {RAW_ARGUMENTS_KEY: text}
    if not isinstance(value, dict):
        return {RAW_ARGUMENTS_KEY: text}
    return value  # pyright: ignore[reportUnknownVariableType]


def _encode_arguments(arguments: dict[str, Any]) -> str:
    raw = arguments.get(RAW_ARGUMENTS_KEY)
    if len(arguments) == 1 and isinstance(raw, str):
        return raw
    return json.dumps(arguments, sort_keys=True)


def _openai_response(response: ModelResponse, request: ModelRequest) -> dict[str, Any]:
    texts = [b.text for b in response.content if isinstance(b, TextBlock)]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "\n".join(texts) if texts else None,
        "refusal": None,
    }
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": _encode_arguments(b.input)},
        }
        for b in response.tool_uses()
    ]
    if calls:
        message["tool_calls"] = calls
    usage = response.usage
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": response.model or request.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _OPENAI_FINISH[response.stop_reason],
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    }
