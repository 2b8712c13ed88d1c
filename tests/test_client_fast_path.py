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
import socketserver
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from agentic_eval.backends import anthropic_backend, openai_backend
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


class CaptureServer(socketserver.ThreadingTCPServer):
    """HTTP/1.1 on 127.0.0.1 with keep-alive: keeps each request's raw bytes, answers ``reply``
    (after ``delay`` seconds), counts the connections it accepted."""

    daemon_threads = True
    request_queue_size = 512

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Capture)
        self.requests: list[bytes] = []
        self.connections = 0
        self.reply: Reply = (200, "application/json", b"{}")
        self.delay = 0.0
        self.lock = threading.Lock()
        self.root = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    def answer(self, payload: Any) -> None:
        """Answer every request from now on with ``payload`` as JSON."""
        self.reply = (200, "application/json", json.dumps(payload).encode())


class _Capture(socketserver.StreamRequestHandler):
    server: CaptureServer

    def handle(self) -> None:
        with self.server.lock:
            self.server.connections += 1
        while head := self._head():
            length = next(
                (int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n"))
                 if k.strip().lower() == b"content-length"),
                0,
            )  # fmt: skip
            body = self.rfile.read(length)
            with self.server.lock:
                self.server.requests.append(head + body)
            time.sleep(self.server.delay)
            status, content_type, reply = self.server.reply
            self.wfile.write(
                f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(reply)}\r\n\r\n".encode()
                + reply
            )

    def _head(self) -> bytes:
        lines: list[bytes] = []
        while (line := self.rfile.readline()) not in (b"", b"\r\n"):
            lines.append(line)
        return b"".join(lines) + b"\r\n" if lines and line else b""


@pytest.fixture
def server() -> Iterator[CaptureServer]:
    capture = CaptureServer()
    yield capture
    capture.shutdown()
    capture.server_close()


Provider = Literal["anthropic", "openai"]


Keep = Callable[[Any], Any]


@pytest.fixture
async def closing() -> AsyncIterator[Keep]:
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
# (the request's parts are built by the backends' helpers, which the change left as they were)


async def openai_create(client: Any, req: ModelRequest, max_tokens_param: str) -> Any:
    omit, limit = openai_sdk().omit, req.max_tokens
    use_completion = max_tokens_param == "max_completion_tokens"
    return await client.chat.completions.create(
        model=req.model,
        messages=to_chat_messages(req),
        tools=[openai_backend._tool_param(t) for t in req.tools] or omit,
        temperature=req.temperature,
        max_completion_tokens=limit if use_completion else omit,
        max_tokens=omit if use_completion else limit,
    )


def openai_typed_response(reply: Any) -> ModelResponse:
    """How the backend converted the SDK's ``ChatCompletion`` before the fast path."""
    if not reply.choices:
        raise BackendError("openai: the response has no choices")
    choice, content = reply.choices[0], list[ContentBlock]()
    message = choice.message
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
    stop: StopReason = openai_backend._FINISH_REASONS.get(choice.finish_reason or "", "other")
    if message.refusal and not message.content:
        stop = "refusal"
    u = reply.usage
    usage = Usage(input_tokens=u.prompt_tokens, output_tokens=u.completion_tokens) if u else Usage()
    return ModelResponse(content=tuple(content), stop_reason=stop, usage=usage, model=reply.model)


async def anthropic_create(client: Any, req: ModelRequest) -> Any:
    omit = anthropic_sdk().omit
    return await client.messages.create(
        model=req.model,
        max_tokens=req.max_tokens,
        messages=[anthropic_backend._message_param(m) for m in req.messages],
        system=req.system or omit,
        tools=[anthropic_backend._tool_param(t) for t in req.tools] or omit,
    )


def anthropic_typed_response(reply: Any) -> ModelResponse:
    """How the backend converted the SDK's ``Message`` before the fast path."""
    content: list[ContentBlock] = []
    for block in reply.content:
        if block.type == "text":
            content.append(TextBlock(text=block.text))
        elif block.type == "tool_use":
            content.append(ToolUseBlock(id=block.id, name=block.name, input=dict(block.input)))
    stop = anthropic_backend._STOP_REASONS.get(reply.stop_reason or "", "other")
    u = reply.usage
    cached = (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    usage = Usage(input_tokens=u.input_tokens + cached, output_tokens=u.output_tokens)
    return ModelResponse(content=tuple(content), stop_reason=stop, usage=usage, model=reply.model)


def openai_sdk() -> Any:
    import openai

    return openai


def anthropic_sdk() -> Any:
    import anthropic

    return anthropic


@dataclass
class Side:
    """One provider's reference (the SDK's create and the old conversion) and its backend."""

    create: Callable[[ModelRequest], Awaitable[Any]]
    convert: Callable[[Any], ModelResponse]
    backend: ModelBackend


def side(
    provider: Provider, server: CaptureServer, closing: Keep, param: str = "max_tokens"
) -> Side:
    if provider == "openai":
        url = server.root + "/v1"
        sdk = closing(openai_sdk().AsyncOpenAI(api_key=KEY, base_url=url, **SDK_ARGS))
        backend = OpenAIBackend("fake-model", api_key=KEY, base_url=url, timeout=TIMEOUT,
                                max_tokens_param=param)  # fmt: skip
        return Side(lambda r: openai_create(sdk, r, param), openai_typed_response, closing(backend))
    url = server.root
    sdk = closing(anthropic_sdk().AsyncAnthropic(api_key=KEY, base_url=url, **SDK_ARGS))
    backend = AnthropicBackend("fake-model", api_key=KEY, base_url=url, timeout=TIMEOUT)
    return Side(lambda r: anthropic_create(sdk, r), anthropic_typed_response, closing(backend))


SDK_ARGS: dict[str, Any] = {"timeout": TIMEOUT, "max_retries": 0}
OPENAI_OK = {
    "id": "c", "object": "chat.completion", "created": 0, "model": "fake-model-2025",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "Done."}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}  # fmt: skip
ANTHROPIC_OK = {
    "id": "m", "type": "message", "role": "assistant", "model": "fake-model-2025",
    "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
}  # fmt: skip
OK = {"openai": OPENAI_OK, "anthropic": ANTHROPIC_OK}
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
SIDES = [("anthropic", "max_tokens"), ("openai", "max_tokens"), ("openai", "max_completion_tokens")]


# -- the same bytes on the wire ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(REQUESTS))
@pytest.mark.parametrize(("provider", "param"), SIDES)
async def test_the_backend_sends_the_bytes_create_sends(
    provider: Provider, param: str, name: str, server: CaptureServer, closing: Keep
) -> None:
    server.answer(OK[provider])
    pair = side(provider, server, closing, param)
    await pair.create(REQUESTS[name])
    await pair.backend.complete(REQUESTS[name], CALL)
    await pair.backend.complete(REQUESTS[name], CALL)  # the tools' encoding remembered
    reference, fast, again = server.requests
    assert fast == reference
    assert again == reference
    path = "/v1/chat/completions" if provider == "openai" else "/v1/messages"
    assert fast.startswith(f"POST {path} HTTP/1.1\r\n".encode())
    assert f"Bearer {KEY}\r\n".encode() in fast


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_tools_encoding_follows_the_tools(
    provider: Provider, server: CaptureServer, closing: Keep
) -> None:
    # Remembered per tuple of tools: another tuple, even of equal tools, is encoded anew.
    server.answer(OK[provider])
    backend = side(provider, server, closing).backend
    changed = PAY.model_copy(update={"description": "Pay it."})
    for tools in (TOOLS, (LOOKUP,), (LOOKUP, changed), ()):
        await backend.complete(request(tools=tools), CALL)
    bodies = [json.loads(r.partition(b"\r\n\r\n")[2]) for r in server.requests]
    tools = [[t.get("function", t) for t in b.get("tools", [])] for b in bodies]
    assert [[t["name"] for t in ts] for ts in tools] == [
        ["lookup_invoice", "pay_invoice"],
        ["lookup_invoice"],
        ["lookup_invoice", "pay_invoice"],
        [],
    ]
    assert tools[0][1].get("parameters", tools[0][1].get("input_schema")) == PAY.input_schema
    assert tools[2][1]["description"] == "Pay it."
    assert "tools" not in bodies[3]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_value_json_cannot_carry_fails_as_create_fails(
    provider: Provider, server: CaptureServer, closing: Keep
) -> None:
    # The SDKs encode with allow_nan=False. Chat Completions carries tool input as text (json.dumps
    # writes NaN there), so both paths send it; the Messages API carries it as JSON, so both
    # refuse it before anything is sent.
    use = ToolUseBlock(id="n", name="pay_invoice", input={"amount": float("nan")})
    nan = Message(role="assistant", content=(use,))
    req = request(messages=(user_text("go"), nan, user_text("and?")))
    server.answer(OK[provider])
    pair = side(provider, server, closing)
    if provider == "openai":
        await pair.create(req)
        await pair.backend.complete(req, CALL)
        reference, fast = server.requests
        assert fast == reference
        assert b'"arguments":"{\\"amount\\": NaN}"' in fast
        return
    with pytest.raises(ValueError, match="Out of range float"):
        await pair.create(req)
    with pytest.raises(ValueError, match="Out of range float"):
        await pair.backend.complete(req, CALL)
    assert server.requests == []


# -- the same response from the same reply ----------------------------------------------------


def completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> Any:
    choice = {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
    return {**OPENAI_OK, "choices": [choice], **extra}


def fn(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


OPENAI_REPLIES: dict[str, Any] = {
    "text": OPENAI_OK,
    "text and tool calls": completion(
        {"content": "Looking.", "tool_calls": [fn("a", "lookup", '{"invoice_id": "INV-7"}'),
                                               fn("b", "pay", '{"n": 1.5, "l": [{"s": "A"}]}')]},
        "tool_calls",
    ),
    "arguments not an object": completion(
        {"content": None, "tool_calls": [fn("a", "x", "{'id': 7"), fn("b", "y", "[1]")]},
        "tool_calls",
    ),
    "blank arguments": completion({"content": None, "tool_calls": [fn("a", "x", "  ")]}),
    "custom tool call": completion(
        {"content": "", "tool_calls": [{"id": "k", "type": "custom",
                                        "custom": {"name": "grep", "input": "a|b"}}]},
        "tool_calls",
    ),
    "refusal only": completion({"content": None, "refusal": "I can't help with that."}),
    "refusal and content": completion({"content": "Partly.", "refusal": "Not the rest."}),
    "length": completion({"content": "Trunc"}, "length"),
    "content filter": completion({"content": ""}, "content_filter"),
    "no finish reason": completion({"content": "?"}, None),
    "unknown finish reason": completion({"content": "?"}, "eos"),
    "usage null": {**OPENAI_OK, "usage": None},
    "no usage": {k: v for k, v in OPENAI_OK.items() if k != "usage"},
    "two choices": {**OPENAI_OK, "choices": [*OPENAI_OK["choices"],
                                             *completion({"content": "B"})["choices"]]},
    "extra fields": {**OPENAI_OK, "system_fingerprint": "fp", "service_tier": "default",
                     "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13,
                               "prompt_tokens_details": {"cached_tokens": 2}}},
    "no choices": {**OPENAI_OK, "choices": []},
}  # fmt: skip


def message(content: list[Any], stop: str | None = "end_turn", **usage: Any) -> Any:
    counts = {"input_tokens": 10, "output_tokens": 4, **usage}
    return {**ANTHROPIC_OK, "content": content, "stop_reason": stop, "usage": counts}


TEXT = {"type": "text", "text": "Answer."}
ANTHROPIC_REPLIES: dict[str, Any] = {
    "text": ANTHROPIC_OK,
    "text and tool use": message(
        [TEXT, {"type": "tool_use", "id": "a", "name": "lookup", "input": {"id": "INV-7"}},
         {"type": "tool_use", "id": "b", "name": "pay", "input": {"n": [1, {"x": None}]}}],
        "tool_use",
    ),
    "thinking blocks are skipped": message(
        [{"type": "thinking", "thinking": "hmm", "signature": "s"},
         {"type": "redacted_thinking", "data": "x"}, TEXT]
    ),
    "cache tokens": message([TEXT], cache_read_input_tokens=100, cache_creation_input_tokens=7),
    "cache tokens null": message(
        [TEXT], cache_read_input_tokens=None, cache_creation_input_tokens=None
    ),
    "max tokens": message([TEXT], "max_tokens"),
    "stop sequence": message([TEXT], "stop_sequence"),
    "refusal": message([], "refusal"),
    "pause turn": message([TEXT], "pause_turn"),
    "no stop reason": message([TEXT], None),
    "empty content": message([]),
}  # fmt: skip
REPLIES = [("openai", n) for n in OPENAI_REPLIES] + [("anthropic", n) for n in ANTHROPIC_REPLIES]


async def outcome(make: Callable[[], Awaitable[Any]], convert: Callable[[Any], Any]) -> Any:
    try:
        return convert(await make())
    except BackendError as exc:
        return f"BackendError: {exc}"


@pytest.mark.parametrize(("provider", "name"), REPLIES)
async def test_the_backend_reads_the_response_create_read(
    provider: Provider, name: str, server: CaptureServer, closing: Keep
) -> None:
    server.answer((OPENAI_REPLIES if provider == "openai" else ANTHROPIC_REPLIES)[name])
    pair, req = side(provider, server, closing), REQUESTS["first turn"]
    expected = await outcome(lambda: pair.create(req), pair.convert)
    assert await outcome(lambda: pair.backend.complete(req, CALL), lambda r: r) == expected
    if name == "no choices":
        assert expected == "BackendError: openai: the response has no choices"
    else:
        assert isinstance(expected, ModelResponse)


UNREADABLE: dict[str, tuple[Reply, str]] = {
    "not JSON": ((200, "application/json", b"{oops"), "JSONDecodeError"),
    "not JSON, text type": ((200, "text/plain", b"upstream said hi"), "not a JSON object"),
    "a JSON array": ((200, "application/json", b"[1, 2]"), "not a JSON object"),
    "no model": ((200, "application/json", b'{"choices": [{"message": {}}], "content": []}'), ""),
}


@pytest.mark.parametrize("name", list(UNREADABLE))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_unreadable_reply_is_a_backend_error(
    provider: Provider, name: str, server: CaptureServer, closing: Keep
) -> None:
    # create let these escape as JSONDecodeError or AttributeError; now they are BackendErrors
    # (an ``error`` outcome naming the provider), never retried.
    server.reply, detail = UNREADABLE[name]
    with pytest.raises(BackendError) as raised:
        await side(provider, server, closing).backend.complete(REQUESTS["first turn"], CALL)
    assert type(raised.value) is BackendError
    assert str(raised.value).startswith(f"{provider}: unreadable response: ")
    assert detail in str(raised.value)
    assert "\n" not in str(raised.value)
    assert len(server.requests) == 1


# -- the anthropic SDK's spans ----------------------------------------------------------------


async def test_anthropic_takes_the_fast_path_when_no_tracer_provider_is_set(
    server: CaptureServer, closing: Keep, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer(ANTHROPIC_OK)
    backend: Any = side("anthropic", server, closing).backend
    assert not anthropic_backend._traced(backend._client)

    async def no_create(**_: Any) -> Any:
        raise AssertionError("messages.create was called")

    monkeypatch.setattr(backend._client.messages, "create", no_create)
    got = await backend.complete(REQUESTS["first turn"], CALL)
    assert got == anthropic_typed_response(await side("anthropic", server, closing).create(
        REQUESTS["first turn"]))  # fmt: skip


@pytest.mark.parametrize("reply", ["text", "text and tool use", "cache tokens", "refusal"])
async def test_anthropic_traced_path_is_create_itself_with_the_same_result(
    reply: str, server: CaptureServer, closing: Keep, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer(ANTHROPIC_REPLIES[reply])
    pair, req = side("anthropic", server, closing), REQUESTS["tools, system, temperature"]
    backend: Any = pair.backend
    fast = await backend.complete(req, CALL)
    monkeypatch.setattr(anthropic_backend, "_traced", lambda client: True)
    calls: list[dict[str, Any]] = []
    create = backend._client.messages.create

    async def counted(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return await create(**kwargs)

    monkeypatch.setattr(backend._client.messages, "create", counted)
    traced = await backend.complete(req, CALL)
    assert len(calls) == 1
    assert traced == fast == pair.convert(await pair.create(req))
    first, second, third = server.requests
    assert first == second == third


# -- one HTTP client, connections kept alive --------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_requests_share_kept_alive_connections(
    provider: Provider, server: CaptureServer, closing: Keep
) -> None:
    server.answer(OK[provider])
    backend, req = side(provider, server, closing).backend, REQUESTS["first turn"]
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
