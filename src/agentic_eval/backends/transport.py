"""A lean HTTP/1.1 transport under the SDKs' httpx client, for plain ``http://`` endpoints.

The live backends keep the official SDKs: every request is built, sent, retried and classified
by the SDK, through its httpx client. Only the last step, moving the bytes, is done here instead
of by httpcore, h11 and anyio, which cost most of the client's CPU per request
(bench/client_cpu.py): one asyncio protocol per connection, its request head and body written in
one call, the response read into one buffer and framed by ``Content-Length`` or chunked encoding,
kept-alive connections pooled per host and port.

What it does not do is handed to the fallback transport (the SDK's usual one): ``https`` and any
other scheme (TLS and HTTP/2 stay with httpcore). When the environment names a proxy,
:func:`~agentic_eval.backends.http.sdk_http_client` does not use this transport at all (httpx
ignores proxies for a client given its own transport). Responses are read whole before they
are returned, so this transport suits request/response calls, not streams (the backends never
stream). Errors are the httpx exceptions the SDKs map: :class:`httpx2.ConnectError`,
:class:`~httpx2.ConnectTimeout`, :class:`~httpx2.ReadTimeout`, :class:`~httpx2.WriteTimeout`,
:class:`~httpx2.ReadError` (a reset), :class:`~httpx2.RemoteProtocolError` (a hang-up without an
answer, or a reply that is not HTTP/1.x), which the SDKs raise as ``APIConnectionError`` or
``APITimeoutError``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx2

__all__ = ["LeanTransport"]

MAX_HEAD_BYTES = 65536
"""A response head longer than this is a protocol error."""


class LeanTransport(httpx2.AsyncBaseTransport):
    """Plain-HTTP/1.1 keep-alive requests on asyncio; anything else through ``fallback``."""

    def __init__(
        self,
        fallback: Callable[[], httpx2.AsyncBaseTransport],
        *,
        max_keepalive: int,
        keepalive_expiry: float | None,
    ) -> None:
        """Args:
        fallback: Makes the transport that serves the requests this one does not
            (``https``...), when the first of them comes: making httpcore's transport loads the
            CA certificates (about 30 ms of CPU), which a run against a plain-http endpoint
            never needs.
        max_keepalive: Idle connections kept per host and port, at most.
        keepalive_expiry: Seconds an idle connection is kept (None: no limit).
        """
        self._make_fallback = fallback
        self._fallback: httpx2.AsyncBaseTransport | None = None
        self._max_keepalive = max_keepalive
        self._expiry = keepalive_expiry
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request`` and read its whole response."""
        url = request.url
        if url.scheme != "http" or self._closed:
            if self._fallback is None:
                self._fallback = self._make_fallback()
            return await self._fallback.handle_async_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        key = (url.host, url.port or 80)
        try:
            body = request.content
        except httpx2.RequestNotRead:
            body = await request.aread()
        head = [f"{request.method} ".encode(), url.raw_path, b" HTTP/1.1\r\n"]
        chunked = False
        for name, value in request.headers.raw:
            head += (name, b": ", value, b"\r\n")
            if name.lower() == b"transfer-encoding" and value.lower() == b"chunked":
                chunked = True
        head.append(b"\r\n")
        if chunked:  # a streamed body, read above: sent as one chunk
            body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
        data = b"".join(head) + body
        conn = self._reuse(key) or await self._connect(key, timeouts.get("connect"))
        try:
            status, reason, headers, content, reusable = await conn.exchange(
                data, request.method == "HEAD", timeouts.get("read"), timeouts.get("write")
            )
        except BaseException:
            conn.close()  # a timed out or cancelled exchange leaves the stream unframed
            raise
        if reusable and not self._closed:
            self._release(key, conn)
        else:
            conn.close()
        return httpx2.Response(
            status,
            headers=headers,
            stream=httpx2.ByteStream(content),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    def _reuse(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if not conn.lost and (self._expiry is None or now - conn.idle_since < self._expiry):
                return conn
            conn.close()
        return None

    def _release(self, key: tuple[str, int], conn: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) >= self._max_keepalive:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def _connect(self, key: tuple[str, int], timeout: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        host, port = key
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: _Connection(loop), host, port), timeout
            )
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__) from exc
        return conn

    async def aclose(self) -> None:
        """Close every idle connection and the fallback transport."""
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        if self._fallback is not None:
            await self._fallback.aclose()


class _Connection(asyncio.Protocol):
    """One connection: one request at a time, its response read into one buffer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._waiter: asyncio.Future[None] | None = None
        self._received_at = 0.0
        self._head_only = False
        self._response: tuple[int, bytes, list[tuple[bytes, bytes]], bytes, bool] | None = None
        self._error: Exception | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.lost = False
        self.idle_since = 0.0

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # pyright: ignore[reportAttributeAccessIssue]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._received_at = self._loop.time()
        if self._waiter is not None and not self._waiter.done():
            try:
                self._response = _parse(self._buffer, self._head_only, eof=False)
            except httpx2.RemoteProtocolError as exc:
                self._error = exc
            if self._response is not None or self._error is not None:
                self._waiter.set_result(None)

    def eof_received(self) -> bool:
        self._ended(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended(exc)

    def _ended(self, exc: Exception | None) -> None:
        self.lost = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if exc is not None:
            self._error = httpx2.ReadError(str(exc) or type(exc).__name__)
        else:
            try:  # a body framed by the end of the stream ends here
                self._response = _parse(self._buffer, self._head_only, eof=True)
            except httpx2.RemoteProtocolError as error:
                self._error = error
            if self._response is None and self._error is None:
                self._error = httpx2.RemoteProtocolError(
                    "Server disconnected without sending a response."
                )
        waiter.set_result(None)

    # -- the transport's side ----------------------------------------------------------------

    async def exchange(
        self, data: bytes, head_only: bool, read_timeout: float | None, write_timeout: float | None
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes, bool]:
        """Write one request and wait for its whole response: status, reason phrase, headers,
        body, and whether the connection can carry another request."""
        transport = self._transport
        if transport is None or self.lost:
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        self._buffer.clear()
        self._response = self._error = None
        self._head_only = head_only
        waiter = self._waiter = self._loop.create_future()
        sent_at = self._received_at = self._loop.time()
        transport.write(data)
        if read_timeout is not None:
            self._timer = self._loop.call_at(
                sent_at + read_timeout, self._check_timeout, read_timeout
            )
        try:
            await waiter
        finally:
            self._waiter = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        error = self._take_error()
        if error is not None:
            stuck = isinstance(error, httpx2.TimeoutException) and write_timeout is not None
            if stuck and transport.get_write_buffer_size():  # the request never left
                raise httpx2.WriteTimeout("timed out writing the request") from error
            raise error
        response = self._response
        assert response is not None
        self._response = None
        return response

    def _take_error(self) -> Exception | None:
        error, self._error = self._error, None
        return error

    def _check_timeout(self, timeout: float) -> None:
        """Time out when nothing arrived for ``timeout`` seconds (httpx's read timeout is per
        read, not per response); otherwise look again when it could next run out."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        due = self._received_at + timeout
        if self._loop.time() < due:
            self._timer = self._loop.call_at(due, self._check_timeout, timeout)
            return
        self._error = httpx2.ReadTimeout("timed out waiting for the response")
        waiter.set_result(None)

    def close(self) -> None:
        """Close the connection (a no-op once closed)."""
        self.lost = True
        if self._transport is not None:
            self._transport.close()


def _parse(
    buffer: bytearray, head_only: bool, eof: bool
) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes, bool] | None:
    """The response in ``buffer`` once it is whole, else None (at ``eof``, a body with no
    length is whole). Interim (1xx) responses before it are skipped.

    Raises:
        httpx2.RemoteProtocolError: Not an HTTP/1.x response.
    """
    start = 0
    while True:
        end = buffer.find(b"\r\n\r\n", start)
        if end < 0:
            if len(buffer) - start > MAX_HEAD_BYTES:
                raise httpx2.RemoteProtocolError("the response head is too long")
            return None
        lines = bytes(buffer[start:end]).split(b"\r\n")
        status_line = lines[0].split(b" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1."):
            raise httpx2.RemoteProtocolError(f"not an HTTP/1.x response: {lines[0][:80]!r}")
        try:
            status = int(status_line[1])
        except ValueError:
            raise httpx2.RemoteProtocolError(f"bad status line: {lines[0][:80]!r}") from None
        if 100 <= status < 200 and status != 101:
            start = end + 4
            continue
        break
    reason = status_line[2] if len(status_line) > 2 else b""
    headers: list[tuple[bytes, bytes]] = []
    length: int | None = None
    chunked = False
    keep_alive = status_line[0] == b"HTTP/1.1"
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise httpx2.RemoteProtocolError(f"bad header line: {line[:80]!r}")
        name, value = name.strip(), value.strip()
        headers.append((name, value))
        lower = name.lower()
        if lower == b"content-length":
            try:
                length = int(value)
            except ValueError:
                raise httpx2.RemoteProtocolError(f"bad Content-Length: {value!r}") from None
        elif lower == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif lower == b"connection":
            tokens = value.lower()
            keep_alive = b"close" not in tokens and (keep_alive or b"keep-alive" in tokens)
    body_at = end + 4
    if head_only or status in (204, 304):
        return status, reason, headers, b"", keep_alive
    if chunked:
        read = _dechunk(buffer, body_at)
        if read is None:
            if eof:
                raise httpx2.RemoteProtocolError("the server hung up inside a chunked body")
            return None
        return status, reason, headers, read, keep_alive
    if length is not None:
        if len(buffer) < body_at + length:
            if eof:
                raise httpx2.RemoteProtocolError(
                    "Server disconnected before the whole body was sent."
                )
            return None
        return status, reason, headers, bytes(buffer[body_at : body_at + length]), keep_alive
    if not eof:  # no length: the body ends with the connection
        return None
    return status, reason, headers, bytes(buffer[body_at:]), False


def _dechunk(buffer: bytearray, at: int) -> bytes | None:
    """A chunked body from ``at``, or None while it is incomplete (trailers are dropped)."""
    parts: list[Any] = []
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return None
        size_text = bytes(buffer[at:line_end]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise httpx2.RemoteProtocolError(f"bad chunk size: {size_text[:20]!r}") from None
        at = line_end + 2
        if size == 0:
            trailers_end = buffer.find(b"\r\n", at)
            while trailers_end > at:  # a trailer line: skip it
                at = trailers_end + 2
                trailers_end = buffer.find(b"\r\n", at)
            if trailers_end < 0:
                return None
            return b"".join(parts)
        if len(buffer) < at + size + 2:
            return None
        parts.append(bytes(buffer[at : at + size]))
        at += size + 2
