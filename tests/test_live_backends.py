"""The live backends, through the real anthropic and openai SDKs, against the local FakeProvider."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

import pytest

from agentic_eval.backends.anthropic_backend import AnthropicBackend
from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    BackendInfo,
    CallContext,
    ModelBackend,
    ProviderRequestError,
    RetryPolicy,
    TransientBackendError,
)
from agentic_eval.backends.openai_backend import RAW_ARGUMENTS_KEY, OpenAIBackend
from agentic_eval.core import (
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
from agentic_eval.testing.fake_provider import FakeProvider, Fault, scripted_responder

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
KEY = "sk-test-never-recorded-5f1c"
CALL = CallContext(domain="retail_ops", case_id="case-001", turn=0)
FAST_RETRY = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)

LOOKUP = ToolSpec(
    name="lookup_invoice",
    description="Fetch one invoice by id.",
    input_schema={
        "type": "object",
        "properties": {"invoice_id": {"type": "string"}},
        "required": ["invoice_id"],
    },
)
PAY = ToolSpec(
    name="pay_invoice",
    description="Pay an invoice (must be approved).",
    input_schema={
        "type": "object",
        "properties": {
            "invoice_id": {"type": "string"},
            "amount": {"type": "number", "minimum": 0},
            "lines": {"type": "array", "items": {"type": "object"}},
        },
        "required": ["invoice_id", "amount"],
    },
)


def first_request() -> ModelRequest:
    return ModelRequest(
        model="fake-model",
        system="You reconcile invoices.",
        messages=(user_text("Check invoice INV-7."),),
        tools=(LOOKUP, PAY),
        max_tokens=256,
        temperature=0.0,
    )


TOOL_TURN = ModelResponse(
    content=(
        TextBlock(text="Looking it up."),
        ToolUseBlock(id="call_1", name="lookup_invoice", input={"invoice_id": "INV-7"}),
    ),
    stop_reason="tool_use",
    usage=Usage(input_tokens=31, output_tokens=12),
    model="fake-model-2025",
)
FINAL_TURN = ModelResponse(
    content=(TextBlock(text="INV-7 matches its PO and receipt."),),
    stop_reason="end_turn",
    usage=Usage(input_tokens=58, output_tokens=9),
    model="fake-model-2025",
)


class CountingResponder:
    """Answers every request with one response and counts the calls (thread-safe)."""

    def __init__(self, response: ModelResponse) -> None:
        self.response = response
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            self.calls += 1
        return self.response


MakeBackend = Callable[..., ModelBackend]


@pytest.fixture
async def make_backend() -> AsyncIterator[MakeBackend]:
    """Builds backends pointed at a fake, and closes every one of them afterwards."""
    made: list[ModelBackend] = []

    def make(provider: Provider, fake: FakeProvider, **kwargs: Any) -> ModelBackend:
        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("retry", FAST_RETRY)
        kwargs.setdefault("timeout", 5.0)
        backend: ModelBackend
        if provider == "anthropic":
            backend = AnthropicBackend("fake-model", base_url=fake.anthropic_base_url, **kwargs)
        else:
            backend = OpenAIBackend("fake-model", base_url=fake.openai_base_url, **kwargs)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()


# -- a conversation with a tool call ---------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_two_turn_tool_conversation(provider: Provider, make_backend: MakeBackend) -> None:
    with FakeProvider(scripted_responder([TOOL_TURN, FINAL_TURN])) as fake:
        backend = make_backend(provider, fake)
        request = first_request()

        first = await backend.complete(request, CALL)
        assert first == TOOL_TURN
        [use] = first.tool_uses()
        assert (use.id, use.name, use.input) == (
            "call_1",
            "lookup_invoice",
            {"invoice_id": "INV-7"},
        )
        assert first.stop_reason == "tool_use"
        assert first.usage == Usage(input_tokens=31, output_tokens=12)

        result = ToolResultBlock(tool_use_id=use.id, content='{"status":"matched","total":42.5}')
        follow_up = request.model_copy(
            update={
                "messages": (
                    *request.messages,
                    first.message(),
                    Message(role="user", content=(result,)),
                )
            }
        )
        second = await backend.complete(follow_up, CALL)

    assert second == FINAL_TURN
    assert second.stop_reason == "end_turn"
    assert len(fake.requests) == 2
    seen = fake.requests[1]
    assert seen.messages[1] == first.message()
    assert seen.messages[-1].tool_results() == [result]


# -- the request reaches the wire intact -----------------------------------------------------


def rich_request() -> ModelRequest:
    return ModelRequest(
        model="fake-model",
        system="Line one.\nLine two: never pay a mismatched invoice.",
        messages=(
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
                    ToolResultBlock(tool_use_id="c1", content='{"total":10}'),
                    ToolResultBlock(
                        tool_use_id="c2", content="blocked: needs approval", is_error=True
                    ),
                    TextBlock(text="Note: INV-9 is disputed."),
                ),
            ),
            Message(role="assistant", content=(TextBlock(text="Understood."),)),
            user_text("Summarise, ünïcode included."),
        ),
        tools=(LOOKUP, PAY),
        max_tokens=321,
        temperature=0.3,
    )


def without_error_flags(request: ModelRequest) -> ModelRequest:
    """The request as Chat Completions can carry it: tool results have no error flag there."""
    messages = tuple(
        m.model_copy(
            update={
                "content": tuple(
                    b.model_copy(update={"is_error": False})
                    if isinstance(b, ToolResultBlock)
                    else b
                    for b in m.content
                )
            }
        )
        for m in request.messages
    )
    return request.model_copy(update={"messages": messages})


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_request_round_trips(provider: Provider, make_backend: MakeBackend) -> None:
    sent = rich_request()
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        await make_backend(provider, fake).complete(sent, CALL)

    [seen] = fake.requests
    expected = sent if provider == "anthropic" else without_error_flags(sent)
    assert seen.model == expected.model
    assert seen.system == expected.system
    assert seen.tools == expected.tools
    assert seen.max_tokens == expected.max_tokens
    for i, (got, want) in enumerate(zip(seen.messages, expected.messages, strict=True)):
        assert got == want, f"message {i} differs"
    body = fake.bodies[0]
    if provider == "anthropic":
        # API version 2026-10-21 refuses sampling parameters, so the backend must not send one.
        assert "temperature" not in body
    else:
        assert seen.temperature == sent.temperature
        assert body["max_tokens"] == 321  # a custom endpoint gets the widely supported field
        assert "max_completion_tokens" not in body


async def test_openai_can_send_max_completion_tokens(make_backend: MakeBackend) -> None:
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        backend = make_backend("openai", fake, max_tokens_param="max_completion_tokens")
        await backend.complete(first_request(), CALL)
    assert fake.bodies[0]["max_completion_tokens"] == 256
    assert "max_tokens" not in fake.bodies[0]
    assert fake.requests[0].max_tokens == 256


async def test_openai_empty_system_and_no_tools_are_left_out(make_backend: MakeBackend) -> None:
    bare = first_request().model_copy(update={"system": "", "tools": ()})
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        await make_backend("openai", fake).complete(bare, CALL)
    assert [m["role"] for m in fake.bodies[0]["messages"]] == ["user"]
    assert "tools" not in fake.bodies[0]
    assert fake.requests[0].system == ""
    assert fake.requests[0].tools == ()


@pytest.mark.parametrize("stop", ["end_turn", "tool_use", "max_tokens", "refusal", "other"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stop_reasons_round_trip(
    provider: Provider, stop: StopReason, make_backend: MakeBackend
) -> None:
    reply = FINAL_TURN.model_copy(update={"stop_reason": stop})
    with FakeProvider(scripted_responder([reply])) as fake:
        got = await make_backend(provider, fake).complete(first_request(), CALL)
    assert got.stop_reason == stop


@pytest.mark.parametrize(
    ("provider", "expected"), [("anthropic", "stop_sequence"), ("openai", "end_turn")]
)
async def test_stop_sequence(provider: Provider, expected: str, make_backend: MakeBackend) -> None:
    reply = FINAL_TURN.model_copy(update={"stop_reason": "stop_sequence"})
    with FakeProvider(scripted_responder([reply])) as fake:
        got = await make_backend(provider, fake).complete(first_request(), CALL)
    # Chat Completions reports a stop sequence as a plain "stop".
    assert got.stop_reason == expected


async def test_openai_invalid_tool_arguments_are_kept_raw(make_backend: MakeBackend) -> None:
    broken = ToolUseBlock(id="c9", name="lookup_invoice", input={RAW_ARGUMENTS_KEY: "{'id': 7"})
    reply = ModelResponse(content=(broken,), stop_reason="tool_use")
    with FakeProvider(scripted_responder([reply, FINAL_TURN])) as fake:
        backend = make_backend("openai", fake)
        got = await backend.complete(first_request(), CALL)
        [use] = got.tool_uses()
        assert use.input == {RAW_ARGUMENTS_KEY: "{'id': 7"}
        # Sent back in the history, the model sees the arguments exactly as it wrote them.
        follow_up = first_request().model_copy(
            update={"messages": (*first_request().messages, got.message())}
        )
        await backend.complete(follow_up, CALL)
    wire_call = fake.bodies[1]["messages"][-1]["tool_calls"][0]
    assert wire_call["function"]["arguments"] == "{'id': 7"


# -- transient failures and retries ----------------------------------------------------------

TRANSIENT_FAULTS = {
    "429": Fault.status(429, "Number of requests has exceeded your rate limit"),
    "529": Fault.status(529, "Overloaded"),
    "500": Fault.status(500, "Internal server error"),
    "timeout": Fault.delay(3.0),
}


@pytest.mark.parametrize("fault_name", list(TRANSIENT_FAULTS))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_transient_fault_ends_transient_after_retries(
    provider: Provider, fault_name: str, make_backend: MakeBackend
) -> None:
    fault = TRANSIENT_FAULTS[fault_name]
    responder = CountingResponder(FINAL_TURN)
    with FakeProvider(responder) as fake:
        fake.inject(fault, fault)
        backend = make_backend(provider, fake, timeout=0.5)
        with pytest.raises(TransientBackendError) as raised:
            await backend.complete(first_request(), CALL)
        # One attempt plus max_retries=1 retry, and nothing more.
        assert len(fake.requests) == 2
        assert fake.pending_faults == 0
        assert responder.calls == 0
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(provider)
    if fault.kind == "status":
        assert f"HTTP {fault.status_code}" in message
        assert fault.message in message
    else:
        assert "timed out" in message


@pytest.mark.parametrize("fault_name", list(TRANSIENT_FAULTS))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_transient_fault_then_success_recovers(
    provider: Provider, fault_name: str, make_backend: MakeBackend
) -> None:
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        fake.inject(TRANSIENT_FAULTS[fault_name])
        backend = make_backend(provider, fake, timeout=0.5)
        got = await backend.complete(first_request(), CALL)
    assert got == FINAL_TURN
    assert len(fake.requests) == 2
    assert fake.requests[0] == fake.requests[1]  # the retry sends the same request
    assert fake.responder_errors == []


async def test_delay_answers_a_waiting_client_and_skips_one_that_gave_up(
    make_backend: MakeBackend,
) -> None:
    responder = CountingResponder(FINAL_TURN)
    with FakeProvider(responder) as fake:
        backend = make_backend("anthropic", fake, timeout=0.3)
        fake.inject(Fault.delay(0.05))
        assert await backend.complete(first_request(), CALL) == FINAL_TURN  # slow, not too slow
        assert responder.calls == 1
        fake.inject(Fault.delay(0.6))
        assert await backend.complete(first_request(), CALL) == FINAL_TURN  # via the retry
        assert responder.calls == 2
        await asyncio.sleep(0.6)  # the abandoned request's wait is over by now
    assert responder.calls == 2  # its client had hung up, so the responder was not asked
    assert len(fake.requests) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_connection_refused_is_transient(
    provider: Provider, make_backend: MakeBackend
) -> None:
    with FakeProvider(scripted_responder([])) as gone:
        backend = make_backend(provider, gone)
    # The server has stopped: its port now refuses connections.
    with pytest.raises(TransientBackendError, match="connection error"):
        await backend.complete(first_request(), CALL)
    assert gone.requests == []


# -- failures that are not transient ---------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_rejected_key_is_authentication_failed(
    provider: Provider, status: int, make_backend: MakeBackend
) -> None:
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        fake.inject(Fault.status(status, "invalid x-api-key\n(key ends in ...5f1c)"))
        backend = make_backend(provider, fake)
        with pytest.raises(AuthenticationFailed) as raised:
            await backend.complete(first_request(), CALL)
    message = str(raised.value)
    assert "\n" not in message
    assert f"HTTP {status}" in message
    assert "invalid x-api-key (key ends in ...5f1c)" in message
    assert len(fake.requests) == 1  # never retried


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_bad_request_is_provider_request_error(
    provider: Provider, make_backend: MakeBackend
) -> None:
    provider_message = "messages.1.content.0.tool_use_id: unknown tool call 'c7'"
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        fake.inject(Fault.status(400, provider_message))
        backend = make_backend(provider, fake)
        with pytest.raises(ProviderRequestError) as raised:
            await backend.complete(first_request(), CALL)
    assert provider_message in str(raised.value)
    assert "HTTP 400" in str(raised.value)
    assert len(fake.requests) == 1  # never retried


# -- keys --------------------------------------------------------------------------------------

KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_missing_key_fails_at_construction(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV[provider], raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    backend_class = AnthropicBackend if provider == "anthropic" else OpenAIBackend
    with pytest.raises(AuthenticationFailed, match=f"^{KEY_ENV[provider]} is not set$"):
        backend_class("fake-model")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_key_from_environment_is_sent_but_never_kept(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV[provider], KEY)
    with FakeProvider(scripted_responder([TOOL_TURN])) as fake:
        assert not fake.saw_auth_header
        backend: ModelBackend
        if provider == "anthropic":
            backend = AnthropicBackend("fake-model", base_url=fake.anthropic_base_url)
        else:
            backend = OpenAIBackend("fake-model", base_url=fake.openai_base_url)
        try:
            await backend.complete(first_request(), CALL)
        finally:
            await backend.aclose()
    assert fake.saw_auth_header
    kept = repr((fake.requests, fake.bodies, fake.paths, vars(fake)))
    assert KEY not in kept
    assert KEY[-8:] not in kept


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_custom_endpoint_needs_no_key(
    provider: Provider, monkeypatch: pytest.MonkeyPatch, make_backend: MakeBackend
) -> None:
    monkeypatch.delenv(KEY_ENV[provider], raising=False)
    with FakeProvider(scripted_responder([FINAL_TURN])) as fake:
        backend = make_backend(provider, fake, api_key=None)
        got = await backend.complete(first_request(), CALL)
    assert got == FINAL_TURN
    assert fake.saw_auth_header  # the placeholder key, since the SDK insists on one


# -- construction and provenance -------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_info_names_backend_model_and_agent(
    provider: Provider, make_backend: MakeBackend
) -> None:
    with FakeProvider(scripted_responder([])) as fake:
        plain = make_backend(provider, fake)
        labelled = make_backend(provider, fake, agent_label="reconciler-v2")
    assert plain.info() == BackendInfo(
        backend=provider, model="fake-model", agent="fake-model", agent_kind="model"
    )
    assert labelled.info().agent == "reconciler-v2"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_missing_sdk_is_one_line(provider: Provider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, provider, None)  # makes `import <sdk>` raise ImportError
    backend_class = AnthropicBackend if provider == "anthropic" else OpenAIBackend
    with pytest.raises(BackendError) as raised:
        backend_class("fake-model", api_key=KEY)
    assert str(raised.value) == (
        f"the {provider} backend needs the {provider} SDK: pip install 'agentic-eval[{provider}]'"
    )
    assert raised.value.__cause__ is None
