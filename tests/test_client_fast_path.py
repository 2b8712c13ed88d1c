"""The live backends' lower-level request path sends what the SDKs' ``create`` sends, and reads
the same :class:`ModelResponse` from the reply (issue 18, live throughput).

A capture server on 127.0.0.1 keeps every HTTP request as raw bytes and answers with a payload of
the test's choosing. Each row sends one request twice: through the SDK's ``create`` exactly as the
backends called it before (the reference), and through the backend. The two requests must be the
same bytes (request line, headers, body), and the reference's typed reply, converted as the
backends converted it before, must equal the backend's response.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Literal

import pytest

from agentic_eval.backends import anthropic_backend
from agentic_eval.backends.anthropic_backend import AnthropicBackend
from agentic_eval.backends.base import BackendError, CallContext, ModelBackend
from agentic_eval.backends.openai_backend import (
    RAW_ARGUMENTS_KEY,
    OpenAIBackend,
    decode_tool_arguments,
    to_chat_messages,
)
from agentic_eval.core import (
    ContentBlock,
    Message,
    ModelRequest,
    ModelResponse,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    user_text,
)

KEY = "sk-test-fast-path-0c4e"
TIMEOUT = 5.0
CALL = CallContext(domain="retail_ops", case_id="case-001", turn=0)
Reply = tuple[int, str, bytes]
"""An HTTP reply of the capture server: status, content type, body."""


class CaptureServer:
    """HTTP/1.1 on 127.0.0.1 with keep-alive: keeps each request's raw bytes, answers ``reply``."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.connections = 0
        self.reply: Reply = (200, "application/json", b"{}")
        self.delay = 0.0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port: int = self._listener.getsockname()[1]
        self._stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, payload: Any, *, status: int = 200, content_type: str = "application/json"):
        """Answer every request from now on with ``payload`` (JSON unless bytes)."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.reply = (status, content_type, body)

    def _accept(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, rest = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(rest) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    rest += chunk
                with self._lock:
                    self.requests.append(head + b"\r\n\r\n" + rest[:length])
                buffer = rest[length:]
                if self.delay:
                    threading.Event().wait(self.delay)
                status, content_type, body = self.reply
                conn.sendall(
                    f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )

    def close(self) -> None:
        self._stopping = True
        self._listener.close()


@pytest.fixture
def server() -> Iterator[CaptureServer]:
    capture = CaptureServer()
    yield capture
    capture.close()


Provider = Literal["anthropic", "openai"]


@pytest.fixture
async def closing() -> AsyncIterator[Callable[[Any], Any]]:
    """Registers SDK clients and backends to close after the test."""
    opened: list[Any] = []

    def keep(thing: Any) -> Any:
        opened.append(thing)
        return thing

    yield keep
    for thing in opened:
        await (thing.aclose() if isinstance(thing, ModelBackend) else thing.close())


# -- requests ---------------------------------------------------------------------------------

LOOKUP = ToolSpec(
    name="lookup_invoice",
    description="Fetch one invoice by id.",
    input_schema={
        "type": "object",
        "properties": {"invoice_id": {"type": "string", "pattern": "^INV-[0-9]+$"}},
        "required": ["invoice_id"],
    },
)
PAY = ToolSpec(
    name="pay_invoice",
    description='Pay an invoice — only once it is approved (ünïcode, "quotes", \\ and \n).',
    input_schema={
        "type": "object",
        "properties": {
            "invoice_id": {"type": "string"},
            "amount": {"type": "number", "minimum": 0, "maximum": 1e16, "multipleOf": 1e-07},
            "lines": {"type": "array", "items": {"type": "object"}},
        },
        "required": ["invoice_id", "amount"],
        "additionalProperties": False,
    },
)
TOOLS = (LOOKUP, PAY)


def conversation() -> tuple[Message, ...]:
    return (
        user_text("Reconcile INV-7 and INV-9."),
        Message(
            role="assistant",
            content=(
                TextBlock(text="Fetching both."),
                ToolUseBlock(id="c1", name="lookup_invoice", input={"invoice_id": "INV-7"}),
                ToolUseBlock(
                    id="c2",
                    name="pay_invoice",
                    input={"invoice_id": "INV-9", "amount": 12.5, "lines": [{"sku": "A"}]},
                ),
            ),
        ),
        Message(
            role="user",
            content=(
                ToolResultBlock(tool_use_id="c1", content='{"total":10,"tax":1e-07}'),
                ToolResultBlock(tool_use_id="c2", content="blocked: needs approval", is_error=True),
                TextBlock(text="Note: INV-9 is disputed."),
                TextBlock(text="A second text block, ünïcode 日本 \u2028 included."),
            ),
        ),
        Message(
            role="assistant",
            content=(
                ToolUseBlock(id="c3", name="lookup_invoice", input={RAW_ARGUMENTS_KEY: "{'id': 9"}),
                ToolUseBlock(id="c4", name="lookup_invoice", input={}),
            ),
        ),
        Message(role="user", content=(ToolResultBlock(tool_use_id="c3", content="bad"),)),
        Message(role="user", content=(ToolResultBlock(tool_use_id="c4", content="{}"),)),
        Message(role="assistant", content=(TextBlock(text="Understood."),)),
        user_text("Summarise."),
    )


def request(**changes: Any) -> ModelRequest:
    base = ModelRequest(
        model="fake-model",
        system="Line one.\nLine two: never pay a mismatched invoice.",
        messages=conversation(),
        tools=TOOLS,
        max_tokens=321,
        temperature=0.3,
    )
    return base.model_copy(update=changes)


REQUESTS: dict[str, ModelRequest] = {
    "tools, system, temperature": request(),
    "no tools": request(tools=()),
    "no system": request(system=""),
    "one tool, temperature 1": request(tools=(PAY,), temperature=1.0),
    "temperature 0, large limit": request(temperature=0.0, max_tokens=64000),
    "first turn": request(messages=(user_text("Check INV-7."),)),
    "bare": request(system="", tools=(), messages=(user_text("hi"),), max_tokens=1),
}


# -- the reference: the SDKs' create, called as the backends called it before ----------------


async def openai_create(client: Any, req: ModelRequest, max_tokens_param: str) -> Any:
    import openai

    omit = openai.omit
    limit = req.max_tokens
    use_completion = max_tokens_param == "max_completion_tokens"
    tools = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in req.tools
    ]
    return await client.chat.completions.create(
        model=req.model,
        messages=to_chat_messages(req),
        tools=tools or omit,
        temperature=req.temperature,
        max_completion_tokens=limit if use_completion else omit,
        max_tokens=omit if use_completion else limit,
    )


def openai_typed_response(reply: Any) -> ModelResponse:
    """How the backend converted the SDK's ``ChatCompletion`` before the fast path."""
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
        else:
            arguments = {RAW_ARGUMENTS_KEY: call.custom.input}
            content.append(ToolUseBlock(id=call.id, name=call.custom.name, input=arguments))
    reasons: dict[str, StopReason] = {
        "stop": "end_turn",
        "tool_calls": "tool_use",
        "length": "max_tokens",
        "content_filter": "refusal",
    }
    stop: StopReason = reasons.get(choice.finish_reason or "", "other")
    if message.refusal and not message.content:
        stop = "refusal"
    usage = (
        Usage(input_tokens=reply.usage.prompt_tokens, output_tokens=reply.usage.completion_tokens)
        if reply.usage is not None
        else Usage()
    )
    return ModelResponse(content=tuple(content), stop_reason=stop, usage=usage, model=reply.model)


async def anthropic_create(client: Any, req: ModelRequest) -> Any:
    import anthropic

    omit = anthropic.omit
    messages: list[dict[str, Any]] = []
    for m in req.messages:
        blocks: list[dict[str, Any]] = []
        for b in m.content:
            if b.type == "text":
                blocks.append({"type": "text", "text": b.text})
            elif b.type == "tool_use":
                blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
            else:
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": b.tool_use_id,
                        "content": b.content,
                        "is_error": b.is_error,
                    }
                )
        messages.append({"role": m.role, "content": blocks})
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in req.tools
    ]
    return await client.messages.create(
        model=req.model,
        max_tokens=req.max_tokens,
        messages=messages,
        system=req.system or omit,
        tools=tools or omit,
    )


def anthropic_typed_response(reply: Any) -> ModelResponse:
    """How the backend converted the SDK's ``Message`` before the fast path."""
    content: list[ContentBlock] = []
    for block in reply.content:
        if block.type == "text":
            content.append(TextBlock(text=block.text))
        elif block.type == "tool_use":
            content.append(ToolUseBlock(id=block.id, name=block.name, input=dict(block.input)))
    reasons: dict[str, StopReason] = {
        "end_turn": "end_turn",
        "tool_use": "tool_use",
        "max_tokens": "max_tokens",
        "stop_sequence": "stop_sequence",
        "refusal": "refusal",
    }
    stop = reasons.get(reply.stop_reason or "", "other")
    u = reply.usage
    cached = (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    usage = Usage(input_tokens=u.input_tokens + cached, output_tokens=u.output_tokens)
    return ModelResponse(content=tuple(content), stop_reason=stop, usage=usage, model=reply.model)


def openai_pair(server: CaptureServer, closing: Callable[[Any], Any], param: str) -> Any:
    import openai

    base_url = server.root + "/v1"
    sdk = closing(
        openai.AsyncOpenAI(api_key=KEY, base_url=base_url, timeout=TIMEOUT, max_retries=0)
    )
    backend = closing(
        OpenAIBackend(
            "fake-model", api_key=KEY, base_url=base_url, timeout=TIMEOUT, max_tokens_param=param
        )
    )
    return sdk, backend


def anthropic_pair(server: CaptureServer, closing: Callable[[Any], Any]) -> Any:
    import anthropic

    sdk = closing(
        anthropic.AsyncAnthropic(api_key=KEY, base_url=server.root, timeout=TIMEOUT, max_retries=0)
    )
    backend = closing(
        AnthropicBackend("fake-model", api_key=KEY, base_url=server.root, timeout=TIMEOUT)
    )
    return sdk, backend


# -- the same bytes on the wire ---------------------------------------------------------------

OPENAI_OK = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "fake-model-2025",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Done."},
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}
ANTHROPIC_OK = {
    "id": "m",
    "type": "message",
    "role": "assistant",
    "model": "fake-model-2025",
    "content": [{"type": "text", "text": "Done."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 2},
}


@pytest.mark.parametrize("param", ["max_tokens", "max_completion_tokens"])
@pytest.mark.parametrize("name", list(REQUESTS))
async def test_openai_sends_the_bytes_create_sends(
    name: str, param: str, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    server.answer(OPENAI_OK)
    sdk, backend = openai_pair(server, closing, param)
    req = REQUESTS[name]
    await openai_create(sdk, req, param)
    await backend.complete(req, CALL)
    await backend.complete(req, CALL)  # the second time with the tools' encoding remembered
    reference, fast, again = server.requests
    assert fast == reference
    assert again == reference
    assert b"POST /v1/chat/completions HTTP/1.1" in fast
    assert f"Bearer {KEY}".encode() in fast


@pytest.mark.parametrize("name", list(REQUESTS))
async def test_anthropic_sends_the_bytes_create_sends(
    name: str, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    server.answer(ANTHROPIC_OK)
    sdk, backend = anthropic_pair(server, closing)
    req = REQUESTS[name]
    await anthropic_create(sdk, req)
    await backend.complete(req, CALL)
    await backend.complete(req, CALL)
    reference, fast, again = server.requests
    assert fast == reference
    assert again == reference
    assert b"POST /v1/messages HTTP/1.1" in fast
    assert f"Bearer {KEY}".encode() in fast


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_the_tools_encoding_follows_the_tools(
    provider: Provider, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    # Remembered per tuple of tools: another tuple, even of equal tools, is encoded anew.
    if provider == "openai":
        server.answer(OPENAI_OK)
        _, backend = openai_pair(server, closing, "max_tokens")
    else:
        server.answer(ANTHROPIC_OK)
        _, backend = anthropic_pair(server, closing)
    changed = PAY.model_copy(update={"description": "Pay it."})
    for tools in (TOOLS, (LOOKUP,), (LOOKUP, changed), ()):
        await backend.complete(request(tools=tools), CALL)
    bodies = [json.loads(r.partition(b"\r\n\r\n")[2]) for r in server.requests]
    key = "parameters" if provider == "openai" else "input_schema"
    if provider == "openai":
        names = [[t["function"]["name"] for t in b.get("tools", [])] for b in bodies]
        descriptions = [[t["function"]["description"] for t in b.get("tools", [])] for b in bodies]
        assert bodies[0]["tools"][1]["function"][key] == PAY.input_schema
    else:
        names = [[t["name"] for t in b.get("tools", [])] for b in bodies]
        descriptions = [[t["description"] for t in b.get("tools", [])] for b in bodies]
        assert bodies[0]["tools"][1][key] == PAY.input_schema
    assert names == [
        ["lookup_invoice", "pay_invoice"],
        ["lookup_invoice"],
        ["lookup_invoice", "pay_invoice"],
        [],
    ]
    assert descriptions[2][1] == "Pay it."
    assert "tools" not in bodies[3]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_value_json_cannot_carry_fails_as_create_fails(
    provider: Provider, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    # The SDKs encode with allow_nan=False. Chat Completions carries tool input as text (json.dumps
    # writes NaN there), so both paths send it; the Messages API carries it as JSON, so both
    # refuse it before anything is sent.
    nan = Message(
        role="assistant",
        content=(ToolUseBlock(id="n", name="pay_invoice", input={"amount": float("nan")}),),
    )
    req = request(messages=(user_text("go"), nan, user_text("and?")))
    if provider == "openai":
        server.answer(OPENAI_OK)
        sdk, backend = openai_pair(server, closing, "max_tokens")
        await openai_create(sdk, req, "max_tokens")
        await backend.complete(req, CALL)
        reference, fast = server.requests
        assert fast == reference
        assert b'"arguments":"{\\"amount\\": NaN}"' in fast
        return
    sdk, backend = anthropic_pair(server, closing)
    with pytest.raises(ValueError, match="Out of range float"):
        await anthropic_create(sdk, req)
    with pytest.raises(ValueError, match="Out of range float"):
        await backend.complete(req, CALL)
    assert server.requests == []


# -- the same response from the same reply ----------------------------------------------------


def completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> Any:
    return {
        **{k: v for k, v in OPENAI_OK.items() if k != "choices"},
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        **extra,
    }


def fn_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


OPENAI_REPLIES: dict[str, Any] = {
    "text": OPENAI_OK,
    "text and tool calls": completion(
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                fn_call("a", "lookup_invoice", '{"invoice_id": "INV-7"}'),
                fn_call("b", "pay_invoice", '{"amount": 1.5, "lines": [{"sku": "A"}]}'),
            ],
        },
        "tool_calls",
    ),
    "arguments not an object": completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [fn_call("a", "x", "{'id': 7"), fn_call("b", "y", "[1]")],
        },
        "tool_calls",
    ),
    "blank arguments": completion(
        {"role": "assistant", "content": None, "tool_calls": [fn_call("a", "x", "  ")]},
        "tool_calls",
    ),
    "custom tool call": completion(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "k", "type": "custom", "custom": {"name": "grep", "input": "a|b"}}
            ],
        },
        "tool_calls",
    ),
    "refusal only": completion(
        {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    ),
    "refusal and content": completion(
        {"role": "assistant", "content": "Partly.", "refusal": "Not the rest."}
    ),
    "length": completion({"role": "assistant", "content": "Trunc"}, "length"),
    "content filter": completion({"role": "assistant", "content": ""}, "content_filter"),
    "no finish reason": completion({"role": "assistant", "content": "?"}, None),
    "unknown finish reason": completion({"role": "assistant", "content": "?"}, "eos"),
    "usage null": {**OPENAI_OK, "usage": None},
    "no usage": {k: v for k, v in OPENAI_OK.items() if k != "usage"},
    "two choices": {
        **OPENAI_OK,
        "choices": [
            OPENAI_OK["choices"][0],
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "B"}},
        ],
    },
    "extra fields": {
        **OPENAI_OK,
        "system_fingerprint": "fp",
        "service_tier": "default",
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 4,
            "total_tokens": 13,
            "prompt_tokens_details": {"cached_tokens": 2},
        },
    },
    "no choices": {**OPENAI_OK, "choices": []},
}


def message(content: list[Any], stop: str | None = "end_turn", **usage: Any) -> Any:
    return {
        **ANTHROPIC_OK,
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 4, **usage},
    }


ANTHROPIC_REPLIES: dict[str, Any] = {
    "text": ANTHROPIC_OK,
    "text and tool use": message(
        [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "a", "name": "lookup", "input": {"id": "INV-7"}},
            {"type": "tool_use", "id": "b", "name": "pay", "input": {"n": [1, {"x": None}]}},
        ],
        "tool_use",
    ),
    "thinking and server blocks are skipped": message(
        [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "redacted_thinking", "data": "x"},
            {"type": "text", "text": "Answer."},
        ]
    ),
    "cache tokens": message(
        [{"type": "text", "text": "c"}],
        cache_read_input_tokens=100,
        cache_creation_input_tokens=7,
    ),
    "cache tokens null": message(
        [{"type": "text", "text": "c"}],
        cache_read_input_tokens=None,
        cache_creation_input_tokens=None,
    ),
    "max tokens": message([{"type": "text", "text": "Trunc"}], "max_tokens"),
    "stop sequence": message([{"type": "text", "text": "s"}], "stop_sequence"),
    "refusal": message([], "refusal"),
    "pause turn": message([{"type": "text", "text": "p"}], "pause_turn"),
    "no stop reason": message([{"type": "text", "text": "p"}], None),
    "empty content": message([]),
}


async def reference_or_error(make: Callable[[], Any], convert: Callable[[Any], Any]) -> Any:
    try:
        return convert(await make())
    except BackendError as exc:
        return f"BackendError: {exc}"


@pytest.mark.parametrize("name", list(OPENAI_REPLIES))
async def test_openai_reads_the_response_create_read(
    name: str, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    server.answer(OPENAI_REPLIES[name])
    sdk, backend = openai_pair(server, closing, "max_tokens")
    req = REQUESTS["first turn"]
    expected = await reference_or_error(
        lambda: openai_create(sdk, req, "max_tokens"), openai_typed_response
    )
    got = await reference_or_error(lambda: backend.complete(req, CALL), lambda r: r)
    assert got == expected
    if name == "no choices":
        assert expected == "BackendError: openai: the response has no choices"


@pytest.mark.parametrize("name", list(ANTHROPIC_REPLIES))
async def test_anthropic_reads_the_response_create_read(
    name: str, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    server.answer(ANTHROPIC_REPLIES[name])
    sdk, backend = anthropic_pair(server, closing)
    req = REQUESTS["first turn"]
    expected = anthropic_typed_response(await anthropic_create(sdk, req))
    assert await backend.complete(req, CALL) == expected


UNREADABLE: dict[str, tuple[Reply, str]] = {
    "not JSON": ((200, "application/json", b"{oops"), "JSONDecodeError"),
    "not JSON, text type": ((200, "text/plain", b"upstream said hi"), "not a JSON object"),
    "a JSON array": ((200, "application/json", b"[1, 2]"), "not a JSON object"),
    "no model": ((200, "application/json", b'{"choices": [{"message": {}}], "content": []}'), ""),
}


@pytest.mark.parametrize("name", list(UNREADABLE))
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_unreadable_reply_is_a_backend_error(
    provider: Provider, name: str, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    # create let these escape as JSONDecodeError or AttributeError; now they are BackendErrors
    # (an ``error`` outcome naming the provider), never retried.
    reply, detail = UNREADABLE[name]
    server.reply = reply
    if provider == "openai":
        _, backend = openai_pair(server, closing, "max_tokens")
    else:
        _, backend = anthropic_pair(server, closing)
    with pytest.raises(BackendError) as raised:
        await backend.complete(REQUESTS["first turn"], CALL)
    assert type(raised.value) is BackendError
    assert str(raised.value).startswith(f"{provider}: unreadable response: ")
    assert detail in str(raised.value)
    assert "\n" not in str(raised.value)
    assert len(server.requests) == 1


# -- the anthropic SDK's spans ----------------------------------------------------------------


async def test_anthropic_takes_the_fast_path_when_no_tracer_provider_is_set(
    server: CaptureServer, closing: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer(ANTHROPIC_OK)
    _, backend = anthropic_pair(server, closing)
    assert not anthropic_backend._traced(backend._client)  # pyright: ignore[reportPrivateUsage]

    async def no_create(**_: Any) -> Any:
        raise AssertionError("messages.create was called")

    monkeypatch.setattr(backend._client.messages, "create", no_create)  # pyright: ignore[reportPrivateUsage]
    assert await backend.complete(REQUESTS["first turn"], CALL) == ModelResponse(
        content=(TextBlock(text="Done."),),
        stop_reason="end_turn",
        usage=Usage(input_tokens=3, output_tokens=2),
        model="fake-model-2025",
    )


@pytest.mark.parametrize("reply", ["text", "text and tool use", "cache tokens", "refusal"])
async def test_anthropic_traced_path_is_create_itself_with_the_same_result(
    reply: str,
    server: CaptureServer,
    closing: Callable[[Any], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.answer(ANTHROPIC_REPLIES[reply])
    sdk, backend = anthropic_pair(server, closing)
    req = REQUESTS["tools, system, temperature"]
    fast = await backend.complete(req, CALL)
    monkeypatch.setattr(anthropic_backend, "_traced", lambda client: True)
    calls: list[dict[str, Any]] = []
    create = backend._client.messages.create  # pyright: ignore[reportPrivateUsage]

    async def counted(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return await create(**kwargs)

    monkeypatch.setattr(backend._client.messages, "create", counted)  # pyright: ignore[reportPrivateUsage]
    traced = await backend.complete(req, CALL)
    reference = anthropic_typed_response(await anthropic_create(sdk, req))
    assert len(calls) == 1
    assert traced == fast == reference
    first, second, third = server.requests
    assert first == second == third


# -- one HTTP client, connections kept alive --------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_requests_share_kept_alive_connections(
    provider: Provider, server: CaptureServer, closing: Callable[[Any], Any]
) -> None:
    if provider == "openai":
        server.answer(OPENAI_OK)
        _, backend = openai_pair(server, closing, "max_tokens")
    else:
        server.answer(ANTHROPIC_OK)
        _, backend = anthropic_pair(server, closing)
    req = REQUESTS["first turn"]
    for _ in range(5):
        await backend.complete(req, CALL)
    assert server.connections == 1
    # 120 at once open 120 connections; all of them are kept for the next 120 (the SDKs'
    # default client keeps 100 and would open 20 more).
    server.delay = 0.3
    for _ in range(2):
        await asyncio.gather(*(backend.complete(req, CALL) for _ in range(120)))
    assert len(server.requests) == 245
    assert server.connections == 120
