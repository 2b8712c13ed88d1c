"""A fake model provider on 127.0.0.1 that speaks the Anthropic and OpenAI wire formats.

Tests of code that uses the live backends (or any Anthropic- or OpenAI-compatible client) can
point the client at a :class:`FakeProvider` instead of the real service, so they need no network
and no key. The fake parses each wire request back into a provider-neutral
:class:`~agentic_eval.core.model.ModelRequest`, asks a *responder* you supply for the
:class:`~agentic_eval.core.model.ModelResponse`, and sends that back in the provider's format.
It can also inject faults (HTTP errors, slow answers) to test retries and error handling::

    from agentic_eval.testing.fake_provider import Fault, FakeProvider, scripted_responder

    with FakeProvider(scripted_responder([reply])) as fake:
        fake.inject(Fault.status(429))
        backend = AnthropicBackend("claude-x", api_key="test", base_url=fake.anthropic_base_url)
        ...  # first call sees a 429, the retry gets ``reply``
        assert len(fake.requests) == 2

Endpoints: ``POST /v1/messages`` (Anthropic Messages API) and ``POST /v1/chat/completions``
(OpenAI Chat Completions). The fake never keeps credentials: it only records whether an
``Authorization`` or ``x-api-key`` header was present (:attr:`FakeProvider.saw_auth_header`).

Wire-format notes. OpenAI has no ``is_error`` on tool results, so it is ``False`` after a round
trip through ``/v1/chat/completions``; consecutive ``tool`` messages and the ``user`` message
right after them are parsed back as one user message (tool results first), which is how the
OpenAI backend sends such a message. A tool call whose input is exactly
``{"_raw_arguments": text}`` is sent to OpenAI clients with ``text`` as its raw ``arguments``,
so tests can exercise arguments that are not valid JSON.
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self, cast

from agentic_eval.backends.openai_backend import RAW_ARGUMENTS_KEY
from agentic_eval.core.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentic_eval.core.model import ModelRequest, ModelResponse, StopReason, ToolSpec

__all__ = ["FakeProvider", "Fault", "Responder", "WireFormat", "scripted_responder"]

Responder = Callable[[ModelRequest], ModelResponse]
"""Answers one parsed request. Called from a server thread."""

WireFormat = Literal["anthropic", "openai"]

_ANTHROPIC_PATH = "/v1/messages"
_OPENAI_PATH = "/v1/chat/completions"
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


@dataclass(frozen=True)
class Fault:
    """One injected fault, consumed by one request. Build with :meth:`status` or :meth:`delay`."""

    kind: Literal["status", "delay"]
    status_code: int = 0
    message: str = ""
    seconds: float = 0.0

    @classmethod
    def status(cls, status_code: int, message: str | None = None) -> Fault:
        """Answer the next request with an HTTP error in the provider's error envelope.

        Args:
            status_code: HTTP status, e.g. 429, 529, 500, 401, 400.
            message: The provider's error message; a default naming the status if omitted.

        Returns:
            The fault.
        """
        if message is None:
            try:
                phrase = HTTPStatus(status_code).phrase
            except ValueError:
                phrase = "Overloaded" if status_code == 529 else "Error"
            message = f"{phrase} (injected by FakeProvider)"
        return cls(kind="status", status_code=status_code, message=message)

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Wait before answering the next request (to trigger a client timeout).

        If the client is still connected after the wait, the request is answered normally by
        the responder; if it gave up, the responder is not called.

        Args:
            seconds: How long to wait.

        Returns:
            The fault.
        """
        return cls(kind="delay", seconds=seconds)


def scripted_responder(responses: Sequence[ModelResponse]) -> Responder:
    """A responder that returns ``responses`` in order, one per request it answers.

    Args:
        responses: The responses to give, in order.

    Returns:
        A thread-safe responder; it raises ``LookupError`` when the script is exhausted, which the
        fake reports to the client as an HTTP 500.
    """
    remaining = deque(responses)
    lock = threading.Lock()

    def respond(request: ModelRequest) -> ModelResponse:
        with lock:
            if not remaining:
                raise LookupError(
                    f"scripted_responder: no response left ({len(responses)} were scripted)"
                )
            return remaining.popleft()

    return respond


class _WireError(Exception):
    """A request the fake cannot parse: answered with HTTP 400."""


class FakeProvider:
    """An HTTP server on 127.0.0.1 that answers Anthropic and OpenAI requests with a responder.

    Use it as a context manager; it listens on an ephemeral port between enter and exit.

    Attributes:
        requests: Every parsed request received, in order (including those that got a fault).
        paths: The path of every request received, in order.
        bodies: The JSON body of every parsed request, in order (to check what reached the
            wire, e.g. which optional fields were sent). Headers are never kept.
        responder_errors: Exceptions the responder raised (each was answered with HTTP 500).
    """

    def __init__(self, responder: Responder, *, host: str = "127.0.0.1", port: int = 0) -> None:
        """Prepare the server (it starts on ``__enter__``).

        Args:
            responder: Answers each request that is not consumed by a fault.
            host: Interface to listen on.
            port: Port to listen on; 0 picks a free one.
        """
        self._responder = responder
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._faults: deque[Fault] = deque()
        self._saw_auth_header = False
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[ModelRequest] = []
        self.paths: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self.responder_errors: list[Exception] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start listening (``__enter__`` calls this)."""
        if self._server is not None:
            raise RuntimeError("FakeProvider is already running")
        self._stopping.clear()
        server = _Server((self._host, self._port), _Handler, self)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop listening, wake delayed handlers and close every socket (``__exit__`` calls it)."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()  # also joins the handler threads
        if thread is not None:
            thread.join()
        self._server = self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` while running."""
        if self._server is None:
            raise RuntimeError("FakeProvider is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for an Anthropic client (the SDK appends ``/v1/messages``)."""
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        """Base URL for an OpenAI client, ending in ``/v1``."""
        return self.base_url + "/v1"

    # -- faults and observations -------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each of the next requests consumes one before the responder is used.

        Args:
            faults: Faults, in the order the requests should meet them.
        """
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        """How many injected faults are not consumed yet."""
        with self._lock:
            return len(self._faults)

    @property
    def saw_auth_header(self) -> bool:
        """True once any request carried a non-empty ``Authorization`` or ``x-api-key`` header."""
        with self._lock:
            return self._saw_auth_header

    # -- request handling (called from server threads) ---------------------------------------

    def _handle(self, handler: _Handler) -> None:
        path = handler.path.split("?", 1)[0]
        wire: WireFormat = "openai" if path == _OPENAI_PATH else "anthropic"
        has_auth = any(handler.headers.get(h, "").strip() for h in ("authorization", "x-api-key"))
        with self._lock:
            self.paths.append(path)
            self._saw_auth_header = self._saw_auth_header or has_auth
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        if handler.command != "POST" or path not in (_ANTHROPIC_PATH, _OPENAI_PATH):
            _send_error(handler, wire, 404, f"no route for {handler.command} {path}")
            return
        try:
            body = json.loads(raw)
            request = _parse_anthropic(body) if wire == "anthropic" else _parse_openai(body)
        except (ValueError, _WireError) as exc:
            _send_error(handler, wire, 400, f"FakeProvider could not parse the request: {exc}")
            return
        with self._lock:
            self.requests.append(request)
            self.bodies.append(body)
            fault = self._faults.popleft() if self._faults else None
        if fault is not None and fault.kind == "status":
            _send_error(handler, wire, fault.status_code, fault.message)
            return
        if fault is not None and fault.kind == "delay":
            self._stopping.wait(fault.seconds)
            if self._stopping.is_set() or _peer_closed(handler):
                return
        try:
            response = self._responder(request)
        except Exception as exc:
            with self._lock:
                self.responder_errors.append(exc)
            _send_error(handler, wire, 500, f"FakeProvider responder failed: {exc!r}")
            return
        payload = (
            _anthropic_response(response, request)
            if wire == "anthropic"
            else _openai_response(response, request)
        )
        _send_json(handler, 200, payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        fake: FakeProvider,
    ) -> None:
        self.fake = fake
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is expected here; nothing to report.
        return


class _Handler(BaseHTTPRequestHandler):
    timeout = 30  # never let a half-open connection hold shutdown for long
    server_version = "FakeProvider/1"

    def do_POST(self) -> None:
        self._fake()._handle(self)  # pyright: ignore[reportPrivateUsage]

    def do_GET(self) -> None:
        self._fake()._handle(self)  # pyright: ignore[reportPrivateUsage]

    def _fake(self) -> FakeProvider:
        # Only _Server ever instantiates this handler.
        return cast(_Server, self.server).fake

    def log_message(self, format: str, *args: Any) -> None:
        return


def _peer_closed(handler: BaseHTTPRequestHandler) -> bool:
    """True when the client hung up (a readable socket with nothing to read means EOF)."""
    conn: socket.socket = handler.connection
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    data = json.dumps(payload).encode("utf-8")
    try:
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header("request-id", "req_fake")
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        return  # the client is gone; nothing to tell it


def _send_error(
    handler: BaseHTTPRequestHandler, wire: WireFormat, status: int, message: str
) -> None:
    payload: dict[str, Any]
    if wire == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        payload = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        kind = "invalid_request_error" if status < 500 else "server_error"
        payload = {
            "error": {
                "message": message,
                "type": kind,
                "param": None,
                "code": _OPENAI_ERROR_CODES.get(status),
            }
        }
    _send_json(handler, status, payload)


# -- wire parsing helpers ----------------------------------------------------------------------


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _WireError(f"{what} must be a JSON object")
    return value  # pyright: ignore[reportUnknownVariableType]


def _arr(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _WireError(f"{what} must be a JSON array")
    return value  # pyright: ignore[reportUnknownVariableType]


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _WireError(f"{what} must be a string")
    return value


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _WireError(f"{what} must be an integer")
    return value


def _temperature(value: Any, what: str) -> float:
    if value is None:  # absent: the provider's own default
        return _DEFAULT_TEMPERATURE
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _WireError(f"{what} must be a number")
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
            raise _WireError(f"unsupported {what} part type {part_obj.get('type')!r}")
        blocks.append(TextBlock(text=_str(part_obj.get("text"), f"{what} part text")))
    return blocks


# -- Anthropic wire format ---------------------------------------------------------------------


def _parse_anthropic(body: Any) -> ModelRequest:
    req = _obj(body, "request body")
    system = req.get("system")
    messages: list[Message] = []
    for i, raw in enumerate(_arr(req.get("messages"), "messages")):
        msg = _obj(raw, f"messages[{i}]")
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise _WireError(f"messages[{i}].role must be user or assistant, not {role!r}")
        content = msg.get("content")
        if isinstance(content, str):
            blocks: list[ContentBlock] = [TextBlock(text=content)]
        else:
            what = f"messages[{i}].content"
            blocks = [_anthropic_block(_obj(b, what), what) for b in _arr(content, what)]
        messages.append(Message(role=role, content=tuple(blocks)))
    tools = [
        ToolSpec(
            name=_str(t.get("name"), "tool name"),
            description=_str(t.get("description", ""), "tool description"),
            input_schema=_obj(t.get("input_schema"), "tool input_schema"),
        )
        for t in (_obj(raw, "tool") for raw in _arr(req.get("tools", []), "tools"))
    ]
    return ModelRequest(
        model=_str(req.get("model"), "model"),
        system="" if system is None else _text_of(system, "system"),
        messages=tuple(messages),
        tools=tuple(tools),
        max_tokens=_int(req.get("max_tokens"), "max_tokens"),
        temperature=_temperature(req.get("temperature"), "temperature"),
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
    raise _WireError(f"unsupported content block type {kind!r} in {what}")


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


def _parse_openai(body: Any) -> ModelRequest:
    req = _obj(body, "request body")
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
            raise _WireError(f"messages[{i}].role {role!r} is not supported")
    flush_results([])
    tools: list[ToolSpec] = []
    for raw in _arr(req.get("tools", []), "tools"):
        tool = _obj(raw, "tool")
        if tool.get("type") != "function":
            raise _WireError(f"unsupported tool type {tool.get('type')!r}")
        function = _obj(tool.get("function"), "tool function")
        tools.append(
            ToolSpec(
                name=_str(function.get("name"), "tool name"),
                description=_str(function.get("description", ""), "tool description"),
                input_schema=_obj(function.get("parameters", {}), "tool parameters"),
            )
        )
    max_tokens = req.get("max_completion_tokens", req.get("max_tokens"))
    return ModelRequest(
        model=_str(req.get("model"), "model"),
        system="\n".join(system_parts),
        messages=tuple(messages),
        tools=tuple(tools),
        max_tokens=_int(max_tokens, "max_completion_tokens or max_tokens"),
        temperature=_temperature(req.get("temperature"), "temperature"),
    )


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
