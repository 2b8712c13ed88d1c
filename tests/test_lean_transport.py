"""The lean HTTP/1.1 transport under the SDKs' httpx client: framing (Content-Length, chunked,
to the end of the stream), keep-alive reuse, hang-ups, timeouts, and what it leaves to httpcore.

Each test serves raw bytes from an asyncio server, so the responses are exactly what is
written here (the SDK-level behaviour is covered through FakeProvider in test_live_backends.py,
test_transient_classification.py and test_client_fast_path.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx2
import pytest

from agentic_eval.backends.transport import LeanTransport

Reply = Callable[[bytes], bytes | None]
"""The raw bytes to answer a request head (None: hang up without answering)."""


class RawServer:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.connections = 0
        self.requests: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                answer = self.reply(head)
                if answer is None:
                    break
                writer.write(answer)
                await writer.drain()
                if b"connection: close" in answer.lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def listening(handler: Handler) -> AsyncIterator[int]:
    """A server running ``handler`` per connection; every connection is closed on exit."""
    writers: list[asyncio.StreamWriter] = []
    tasks: list[asyncio.Task[None]] = []

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        tasks.append(task)  # pyright: ignore[reportArgumentType]
        await handler(reader, writer)

    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        for writer in writers:
            writer.close()
        await server.wait_closed()
        await asyncio.sleep(0.01)


@asynccontextmanager
async def serving(reply: Reply) -> AsyncIterator[tuple[RawServer, str]]:
    raw = RawServer(reply)
    async with listening(raw.serve) as port:
        yield raw, f"http://127.0.0.1:{port}"


def unused_fallback() -> httpx2.AsyncBaseTransport:
    raise AssertionError("a plain-http request went to the fallback")


def client(
    fallback: Callable[[], httpx2.AsyncBaseTransport] = unused_fallback,
) -> httpx2.AsyncClient:
    transport = LeanTransport(fallback, max_keepalive=8, keepalive_expiry=5.0)
    return httpx2.AsyncClient(transport=transport, timeout=2.0)


def fixed(answer: bytes) -> Reply:
    return lambda head: answer


async def test_content_length_responses_reuse_one_connection() -> None:
    answer = (
        b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 7\r\n\r\n{"a":1}'
    )
    async with serving(fixed(answer)) as (raw, url), client() as http:
        for _ in range(3):
            response = await http.post(url + "/v1/x?q=1", content=b'{"k":"v"}')
            assert response.status_code == 200
            assert response.json() == {"a": 1}
            assert response.reason_phrase == "OK"
            assert response.http_version == "HTTP/1.1"
    assert raw.connections == 1
    first = raw.requests[0]
    assert first.startswith(b"POST /v1/x?q=1 HTTP/1.1\r\n")
    assert b"\r\nHost: 127.0.0.1:" in first or b"\r\nhost: 127.0.0.1:" in first
    assert first.endswith(b'\r\n\r\n{"k":"v"}')


async def test_a_chunked_response_is_read_whole_with_its_trailers_skipped() -> None:
    answer = (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        b"4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nx-trailer: 1\r\n\r\n"
    )
    async with serving(fixed(answer)) as (raw, url), client() as http:
        for _ in range(2):
            response = await http.get(url + "/")
            assert response.content == b"Wikipedia"
    assert raw.connections == 1


async def test_interim_responses_are_skipped() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok"
    async with serving(fixed(answer)) as (_, url), client() as http:
        response = await http.post(url + "/", content=b"x")
    assert (response.status_code, response.content) == (201, b"ok")


async def test_connection_close_and_a_body_to_the_end_of_the_stream() -> None:
    answer = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it"
    async with serving(fixed(answer)) as (raw, url), client() as http:
        for _ in range(2):
            assert (await http.get(url + "/")).content == b"all of it"
    assert raw.connections == 2  # not reused after Connection: close


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    connections = 0

    async def one_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # then hangs up the kept-alive connection, idle

    async with listening(one_answer) as port, client() as http:
        assert (await http.get(f"http://127.0.0.1:{port}/")).content == b"ok"
        await asyncio.sleep(0.1)  # the client's loop sees the end of the stream
        assert (await http.get(f"http://127.0.0.1:{port}/")).content == b"ok"
    assert connections == 2


async def test_a_hang_up_without_an_answer_is_a_remote_protocol_error() -> None:
    async with serving(lambda head: None) as (_, url), client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="disconnected"):
            await http.get(url + "/")


async def test_a_reset_is_a_read_error() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.transport.abort()  # RST: the client reads "connection reset"

    async with listening(reset) as port, client() as http:
        with pytest.raises((httpx2.ReadError, httpx2.RemoteProtocolError)):
            await http.get(f"http://127.0.0.1:{port}/")


async def test_a_slow_answer_is_a_read_timeout_and_its_connection_is_dropped() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(5)

    transport = LeanTransport(unused_fallback, max_keepalive=8, keepalive_expiry=5.0)
    timed = httpx2.AsyncClient(transport=transport, timeout=0.2)
    async with listening(silent) as port, timed as http:
        with pytest.raises(httpx2.ReadTimeout):
            await http.get(f"http://127.0.0.1:{port}/")
        assert transport._idle.get(("127.0.0.1", port), []) == []  # pyright: ignore[reportPrivateUsage]


async def test_a_refused_connection_is_a_connect_error() -> None:
    async with listening(RawServer(lambda head: None).serve) as port:
        pass  # closed: its port refuses connections now
    async with client() as http:
        with pytest.raises(httpx2.ConnectError):
            await http.get(f"http://127.0.0.1:{port}/")


async def test_https_goes_to_the_fallback() -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(204)

    async with client(lambda: httpx2.MockTransport(handler)) as http:
        response = await http.get("https://example.invalid/x")
    assert response.status_code == 204
    assert seen == ["https://example.invalid/x"]


def test_backends_take_the_lean_transport_unless_a_proxy_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import openai

    from agentic_eval.backends.http import sdk_http_client

    url = httpx2.URL("http://example.invalid/v1/chat/completions")
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    for name in (*names, *(n.lower() for n in names)):
        monkeypatch.delenv(name, raising=False)
    plain = sdk_http_client(openai, 5.0)
    assert isinstance(plain._transport_for_url(url), LeanTransport)  # pyright: ignore[reportPrivateUsage]
    for name in names:  # any proxy: httpx ignores them all for a client given a transport
        with monkeypatch.context() as env:
            env.setenv(name, "http://127.0.0.1:9")
            proxied = sdk_http_client(openai, 5.0)
            assert not isinstance(proxied.__dict__.get("_transport"), LeanTransport), name
