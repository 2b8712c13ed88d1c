"""The HTTP/1.1 server side of :class:`~agentic_eval.testing.fake_provider.FakeProvider`: one
asyncio protocol per connection, all on one event loop in one thread.

A connection reads one request at a time (its head, then a ``Content-Length`` body), hands it to
the server's handler, and reads the next one (keep-alive) once the handler has answered it with
:meth:`HttpConnection.respond`; a request pipelined behind it waits in the buffer. The handler
may answer later (the fake's latency is a timer on the loop, not a sleeping thread), or never if
the client hangs up first (:attr:`HttpConnection.closed`). Only what the fake needs of HTTP is
read: the method, the path, the headers, a body framed by ``Content-Length``; a body sent chunked
cannot be framed here, so its request is answered and the connection closed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus

__all__ = ["HttpConnection", "HttpRequest", "RequestHandler"]

MAX_HEAD_BYTES = 65536
"""A request head (request line and headers) longer than this closes the connection."""


@dataclass(frozen=True)
class HttpRequest:
    """One request as the fake reads it.

    Attributes:
        method: ``POST``, ``GET``...
        target: The request target as sent (path and query).
        headers: Header names in lower case to their values (the last of repeated ones).
        body: The body, or None when it had no framing the fake reads (chunked or a bad length).
    """

    method: str
    target: str
    headers: dict[str, str]
    body: bytes | None


RequestHandler = Callable[["HttpConnection", HttpRequest], None]
"""Called on the loop for each request; answers it, now or later, with ``respond``."""


class HttpConnection(asyncio.Protocol):
    """One client connection: reads requests one at a time, writes the handler's answers."""

    def __init__(
        self,
        handler: RequestHandler,
        opened: Callable[[HttpConnection], bool],
        closed: Callable[[HttpConnection], None],
    ) -> None:
        self._handler = handler
        self._opened = opened
        self._on_closed = closed
        self._buffer = bytearray()
        self._busy = False  # a request is with the handler, not answered yet
        self._keep_alive = True
        self.transport: asyncio.Transport | None = None
        self.closed = False
        """True once the client hung up (or the server closed the connection)."""
        self.timer: asyncio.TimerHandle | None = None
        """The handler's pending answer, if it set one (cancelled when the connection ends)."""

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # pyright: ignore[reportAttributeAccessIssue]
        if not self._opened(self):
            self.abort()

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._busy:
            self._next()

    def eof_received(self) -> bool:
        self._gone()  # a client that half-closes is not waiting for an answer
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._gone()

    # -- the handler's side ------------------------------------------------------------------

    def respond(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        """Send the answer to the current request (headers and body in one write), then read
        the next request, or close when the request asked for it or could not be framed."""
        self.timer = None
        if self.closed or self.transport is None:
            return
        head = (
            f"HTTP/1.1 {status} {_phrase(status)}\r\n"
            f"Server: FakeProvider/1\r\nDate: {_http_date()}\r\n"
            f"content-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
            f"request-id: req_fake\r\n"
        )
        if not self._keep_alive:
            head += "Connection: close\r\n"
        self.transport.write(head.encode("latin-1") + b"\r\n" + body)
        self._busy = False
        if not self._keep_alive:
            self.close()
        elif self._buffer:
            self._next()

    def close(self) -> None:
        """Close after what was written is sent."""
        if self.transport is not None:
            self.transport.close()
        self._gone()

    def abort(self) -> None:
        """Hang up at once, dropping anything not sent."""
        if self.transport is not None:
            self.transport.abort()
        self._gone()

    # -- reading -----------------------------------------------------------------------------

    def _gone(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._on_closed(self)

    def _next(self) -> None:
        """Hand the next complete request in the buffer to the handler, if there is one."""
        if self.closed:
            return
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                self.abort()
            return
        lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            self.abort()  # not HTTP: nothing to answer in
            return
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        self._keep_alive = (
            connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        )
        start = end + 4
        body: bytes | None
        if "transfer-encoding" in headers:
            body, self._keep_alive = None, False  # cannot frame it: answer, then close
            del buffer[:]
        else:
            try:
                length = int(headers.get("content-length") or 0)
            except ValueError:
                length = -1
            if length < 0:
                body, self._keep_alive = None, False
                del buffer[:]
            elif len(buffer) < start + length:
                return  # the rest of the body is still on its way
            else:
                body = bytes(buffer[start : start + length])
                del buffer[: start + length]
        self._busy = True
        self._handler(self, HttpRequest(method, target, headers, body))


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Error"


_date: tuple[int, str] = (0, "")


def _http_date() -> str:
    """The ``Date`` header's value, made once a second."""
    global _date
    now = int(time.time())
    if _date[0] != now:
        _date = (now, formatdate(now, usegmt=True))
    return _date[1]
