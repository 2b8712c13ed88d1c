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

It holds the load of a load test at little CPU per request: HTTP/1.1 keep-alive (every response
has its ``Content-Length``, so clients reuse their connections), a listen backlog of 1024, every
connection served by one asyncio event loop in one thread (:mod:`agentic_eval.testing.fake_http`),
the latency a timer on that loop rather than a sleeping thread, and a request's ``tools`` parsed
once per distinct list (:class:`~agentic_eval.testing.provider_wire.BodyReader`). For load tests
it can also answer every request after a latency and fail a share of them at random,
reproducibly with a seed::

    FakeProvider(responder, latency_ms=(50, 100), fail_rates={529: 0.3}, seed=7)

Endpoints: ``POST /v1/messages`` (Anthropic Messages API) and ``POST /v1/chat/completions``
(OpenAI Chat Completions); :mod:`agentic_eval.testing.provider_wire` holds the formats. The fake
never keeps credentials: it only records whether an ``Authorization`` or ``x-api-key`` header
was present (:attr:`FakeProvider.saw_auth_header`).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import Any, Literal, Self

from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.testing.fake_http import HttpConnection, HttpRequest
from agentic_eval.testing.load_shape import Draw, Latency, LoadShape
from agentic_eval.testing.provider_wire import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    BodyReader,
    WireError,
    WireFormat,
    error_body,
    response_body,
)

__all__ = ["FakeProvider", "Fault", "Responder", "WireFormat", "scripted_responder"]

Responder = Callable[[ModelRequest], ModelResponse]
"""Answers one parsed request. Called on the server's one thread, one request at a time: a
responder that blocks holds up every other connection's answer meanwhile."""

LISTEN_BACKLOG = 1024
"""Connections the kernel queues before the server accepts them (the standard library's 5
turned about 40% of 64 simultaneous connections into resets)."""


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


class FakeProvider:
    """An HTTP server on 127.0.0.1 that answers Anthropic and OpenAI requests with a responder.

    Use it as a context manager; it listens between enter and exit. Each parsed request meets,
    in this order: the next injected :class:`Fault` if one is queued (served exactly as queued:
    no latency, no random failure); else the latency, then a random failure with the
    probabilities of ``fail_rates``, else the responder's answer.

    Attributes:
        requests: Every parsed request received, in order (including those that got a fault).
        paths: The path of every request received, in order.
        bodies: The JSON body of every parsed request, in order (to check what reached the
            wire, e.g. which optional fields were sent; bodies offering the same ``tools`` bytes
            share one decoded list: do not change them). Headers are never kept.
        responder_errors: Exceptions the responder raised (each was answered with HTTP 500).
    """

    def __init__(
        self,
        responder: Responder,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: Latency = 0.0,
        fail_rates: Mapping[int, float] | None = None,
        seed: int | None = None,
        keep_requests: bool = True,
    ) -> None:
        """Prepare the server (it starts on ``__enter__``).

        Args:
            responder: Answers each request that is not consumed by a fault.
            host: Interface to listen on.
            port: Port to listen on; 0 picks a free one.
            latency_ms: Milliseconds to wait before answering each request not consumed by an
                injected fault: a number, or ``(low, high)`` for a uniform draw per request. A
                client that hangs up meanwhile is not answered (the responder is not called).
            fail_rates: HTTP error status to the probability that a request gets it instead of
                the responder's answer, e.g. ``{529: 0.3, 429: 0.05}`` (rates add up to 1 at
                most). The error is the provider's envelope, as :meth:`Fault.status` sends it.
            seed: Seeds the draws of failures and latencies: with a seed, the n-th request not
                consumed by a fault meets the same outcome on every run, whatever the
                concurrency. Without one, the draws differ from run to run.
            keep_requests: Keep ``requests``, ``paths``, ``bodies`` and ``responder_errors``
                (the default, for tests); a long-running server passes False so its memory
                stays flat. :attr:`status_counts` is kept either way.

        Raises:
            ValueError: A latency or a failure rate out of range.
        """
        self._responder = responder
        self._host = host
        self._port = port
        self._shape = LoadShape(latency_ms, fail_rates, seed)
        self._keep = keep_requests
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._faults: deque[Fault] = deque()
        self._saw_auth_header = False
        self._status_counts: Counter[int] = Counter()
        self._connections: set[HttpConnection] = set()
        self._reader = BodyReader()  # used on the server's thread only
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._address: tuple[str, int] | None = None
        self._thread: threading.Thread | None = None
        self._answering = False  # the responder is running on the server's thread
        self.requests: list[ModelRequest] = []
        self.paths: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self.responder_errors: list[Exception] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start listening (``__enter__`` calls this).

        Raises:
            OSError: The address cannot be listened on.
        """
        if self._thread is not None:
            raise RuntimeError("FakeProvider is already running")
        self._stopping.clear()
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failed: list[BaseException] = []

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                server = loop.run_until_complete(
                    loop.create_server(
                        self._connection,
                        self._host,
                        self._port,
                        backlog=LISTEN_BACKLOG,
                        reuse_address=True,
                    )
                )
            except BaseException as exc:
                failed.append(exc)
                ready.set()
                loop.close()
                return
            host, port = server.sockets[0].getsockname()[:2]
            self._server, self._address = server, (str(host), int(port))
            ready.set()
            try:
                loop.run_forever()
                loop.run_until_complete(self._closing(server))
            finally:
                loop.close()

        thread = threading.Thread(target=serve, name="FakeProvider", daemon=True)
        thread.start()
        ready.wait()
        if failed:
            thread.join()
            raise failed[0]
        self._loop, self._thread = loop, thread

    def stop(self) -> None:
        """Stop listening and hang up every connection, kept-alive idle ones included, so
        nothing is answered after it returns (``__exit__`` calls it).

        A responder still running finishes its call, and its answer goes nowhere; the server's
        thread is then left to end on its own (it is a daemon), not joined."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with self._lock:
            self._stopping.set()  # from here on, nothing is answered and new connections close
            answering = self._answering
            connections = list(self._connections)
        for conn in connections:
            _hang_up(conn)  # from this thread: the loop may be inside the responder
        loop.call_soon_threadsafe(self._shut_down)
        if not answering:
            thread.join()
        self._loop = self._thread = self._server = None
        self._address = None

    def _shut_down(self) -> None:
        asyncio.get_running_loop().stop()  # then _closing, on the server's thread

    async def _closing(self, server: asyncio.Server) -> None:
        """Close the listening socket and every connection, and let the loop finish closing
        them (a transport's socket is closed on the loop's next round)."""
        server.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.abort()
        await server.wait_closed()
        for _ in range(3):
            await asyncio.sleep(0)

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
    def port(self) -> int:
        """The port listened on (the one picked when ``port`` was 0), while running."""
        if self._address is None:
            raise RuntimeError("FakeProvider is not running; use it as a context manager")
        return self._address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` while running."""
        if self._address is None:
            raise RuntimeError("FakeProvider is not running; use it as a context manager")
        return f"http://{self._address[0]}:{self.port}"

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

    @property
    def status_counts(self) -> dict[int, int]:
        """How many responses were sent with each HTTP status (200 for the responder's)."""
        with self._lock:
            return dict(self._status_counts)

    # -- request handling (on the server's thread) -------------------------------------------

    def _connection(self) -> HttpConnection:
        return HttpConnection(self._handle, self._opened, self._closed)

    def _handle(self, conn: HttpConnection, http: HttpRequest) -> None:
        path = http.target.split("?", 1)[0]
        wire: WireFormat = "openai" if path == OPENAI_PATH else "anthropic"
        headers = http.headers
        has_auth = any(headers.get(h, "").strip() for h in ("authorization", "x-api-key"))
        with self._lock:
            if self._keep:
                self.paths.append(path)
            self._saw_auth_header = self._saw_auth_header or has_auth
        raw = http.body
        if raw is None:
            self._send_error(conn, wire, 400, "FakeProvider needs a Content-Length body")
            return
        if http.method != "POST" or path not in (ANTHROPIC_PATH, OPENAI_PATH):
            self._send_error(conn, wire, 404, f"no route for {http.method} {path}")
            return
        try:
            body, request = self._reader.read(wire, raw)
        except (ValueError, WireError) as exc:
            self._send_error(conn, wire, 400, f"FakeProvider could not parse the request: {exc}")
            return
        with self._lock:
            if self._keep:
                self.requests.append(request)
                self.bodies.append(body)
            fault = self._faults.popleft() if self._faults else None
            lot = self._shape.draw() if fault is None else Draw(fault.seconds, None)
        if fault is not None and fault.kind == "status":
            self._send_error(conn, wire, fault.status_code, fault.message)
            return
        if lot.seconds > 0:
            loop = asyncio.get_running_loop()
            conn.timer = loop.call_later(lot.seconds, self._answer, conn, wire, request, lot)
        else:
            self._answer(conn, wire, request, lot)

    def _answer(
        self, conn: HttpConnection, wire: WireFormat, request: ModelRequest, lot: Draw
    ) -> None:
        conn.timer = None
        if self._stopping.is_set() or conn.closed:
            conn.abort()  # the client gave up (or the server is stopping): nobody to answer
            return
        if lot.failure is not None:
            self._send_error(conn, wire, lot.failure, Fault.status(lot.failure).message)
            return
        with self._lock:
            self._answering = True
        try:
            response = self._responder(request)
        except Exception as exc:
            with self._lock:
                self._answering = False
                if self._keep:
                    self.responder_errors.append(exc)
            self._send_error(conn, wire, 500, f"FakeProvider responder failed: {exc!r}")
            return
        with self._lock:
            self._answering = False
        self._send_json(conn, 200, response_body(wire, response, request))

    def _send_error(
        self, conn: HttpConnection, wire: WireFormat, status: int, message: str
    ) -> None:
        self._send_json(conn, status, error_body(wire, status, message))

    def _send_json(self, conn: HttpConnection, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        with self._lock:
            if self._stopping.is_set():
                return  # stop() has returned or is returning: nothing more is answered
            self._status_counts[status] += 1
        conn.respond(status, data)

    def _opened(self, conn: HttpConnection) -> bool:
        """Track a new connection; False when the server is stopping (the caller hangs up)."""
        with self._lock:
            if self._stopping.is_set():
                return False
            self._connections.add(conn)
            return True

    def _closed(self, conn: HttpConnection) -> None:
        with self._lock:
            self._connections.discard(conn)


def _hang_up(conn: HttpConnection) -> None:
    """Shut a connection's socket down from any thread (the loop closes it when it runs)."""
    transport = conn.transport
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        return  # already closed by the peer
