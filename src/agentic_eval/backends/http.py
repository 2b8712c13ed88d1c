"""The HTTP client a live backend's SDK talks through: one per backend, kept alive for its run."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agentic_eval.core.messages import Message
from agentic_eval.core.model import ToolSpec

KEEPALIVE_CONNECTIONS = 256
"""Connections a backend's HTTP client keeps open between requests: the CLI's largest
``--concurrency``, so that a batch never closes a connection it will want again (the SDKs'
default keeps 100)."""


def sdk_http_client(sdk: Any, timeout: float) -> Any:
    """The SDK's own default async HTTP client (its redirects, headers, timeouts), keeping
    :data:`KEEPALIVE_CONNECTIONS` connections alive. Built from the SDK's public names
    (``DEFAULT_CONNECTION_LIMITS``, ``DefaultAsyncHttpxClient``). When that client is httpx2's,
    plain ``http://`` requests go through :class:`~agentic_eval.backends.transport.LeanTransport`
    (a fraction of httpcore's CPU per request) and every other one through the transport the
    client would have made itself."""
    defaults = sdk.DEFAULT_CONNECTION_LIMITS
    limits = type(defaults)(
        max_connections=max(defaults.max_connections or 0, KEEPALIVE_CONNECTIONS),
        max_keepalive_connections=KEEPALIVE_CONNECTIONS,
        keepalive_expiry=defaults.keepalive_expiry,
    )
    client_class = sdk.DefaultAsyncHttpxClient
    try:
        import httpx2
    except ImportError:  # an SDK on another HTTP library: its own transport
        return client_class(timeout=timeout, limits=limits)
    if not issubclass(client_class, httpx2.AsyncClient) or _proxied():
        return client_class(timeout=timeout, limits=limits)
    from agentic_eval.backends.transport import LeanTransport

    transport = LeanTransport(
        lambda: httpx2.AsyncHTTPTransport(limits=limits),
        max_keepalive=KEEPALIVE_CONNECTIONS,
        keepalive_expiry=defaults.keepalive_expiry,
    )
    return client_class(timeout=timeout, limits=limits, transport=transport)


def _proxied() -> bool:
    """Whether the environment names a proxy (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``):
    an httpx client given its own transport ignores them all, so such a client keeps the SDK's
    default one, which honours them."""
    import urllib.request

    proxies = urllib.request.getproxies()
    return any(scheme in proxies for scheme in ("http", "https", "all"))


compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""The SDKs' own JSON settings for request bodies (``openapi_dumps`` in both)."""


class EncodedTools:
    """A request's tools as JSON bytes, encoded once per tuple of tools: the loop offers one
    tuple to every case of a suite (agent/loop.py, ``_offered``), held here with its encoding
    so that its identity cannot be reused by another tuple."""

    def __init__(self, param: Callable[[ToolSpec], Any]) -> None:
        self._param = param
        self._memo: tuple[tuple[ToolSpec, ...], bytes] = ((), b"")

    def __call__(self, tools: tuple[ToolSpec, ...]) -> bytes:
        memo_tools, memo_json = self._memo
        if memo_tools is tools:
            return memo_json
        encoded = compact_json([self._param(t) for t in tools]).encode()
        self._memo = (tools, encoded)
        return encoded


MESSAGES_KEPT = 8192
"""Encoded messages an :class:`EncodedMessages` keeps (then it starts again): at concurrency 64
and a few dozen messages a conversation, a batch holds a few thousand live ones."""


class EncodedMessages:
    """A conversation's messages as the JSON of a request's ``messages`` array, each message
    encoded once: a conversation resends every earlier message at every turn, as the same
    (immutable) objects, so only the turn's new messages are encoded. JSON encodes a list as
    its items' encodings joined by commas, so the bytes are the same as encoding the whole list.
    Kept by object identity (each entry holds its message, so an id is not reused meanwhile)."""

    def __init__(self, params: Callable[[Message], list[Any]]) -> None:
        """Args:
        params: The provider's JSON values one message is sent as (one or more; none is
            allowed).
        """
        self._params = params
        self._memo: dict[int, tuple[Message, str]] = {}

    def __call__(self, messages: tuple[Message, ...], first: Sequence[Any] = ()) -> str:
        """The JSON array of ``first`` (encoded each call) followed by ``messages``' values."""
        memo = self._memo
        parts = [compact_json(value) for value in first]
        for message in messages:
            hit = memo.get(id(message))
            if hit is None or hit[0] is not message:
                if len(memo) >= MESSAGES_KEPT:
                    memo.clear()
                hit = (message, ",".join(compact_json(v) for v in self._params(message)))
                memo[id(message)] = hit
            if hit[1]:
                parts.append(hit[1])
        return "[" + ",".join(parts) + "]"


def splice_messages(head: str, messages: str) -> str:
    """``head``, a body encoded with an empty ``messages`` array, with ``messages`` in its place.

    The first ``"messages":[]`` in ``head`` is the field itself: inside an encoded string
    every quote is escaped, so no string can hold that text, and the fields before
    ``messages`` in both providers' order (``model``, ``max_tokens``) are scalars."""
    at = head.index(_EMPTY_MESSAGES)
    return head[:at] + '"messages":' + messages + head[at + len(_EMPTY_MESSAGES) :]


_EMPTY_MESSAGES = '"messages":[]'
