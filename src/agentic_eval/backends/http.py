"""The HTTP client a live backend's SDK talks through: one per backend, kept alive for its run."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
    if not issubclass(client_class, httpx2.AsyncClient):
        return client_class(timeout=timeout, limits=limits)
    from agentic_eval.backends.transport import LeanTransport

    transport = LeanTransport(
        lambda: httpx2.AsyncHTTPTransport(limits=limits),
        max_keepalive=KEEPALIVE_CONNECTIONS,
        keepalive_expiry=defaults.keepalive_expiry,
    )
    return client_class(timeout=timeout, limits=limits, transport=transport)


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
