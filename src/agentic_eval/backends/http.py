"""The HTTP client a live backend's SDK talks through: one per backend, kept alive for its run."""

from __future__ import annotations

from typing import Any

KEEPALIVE_CONNECTIONS = 256
"""Connections a backend's HTTP client keeps open between requests: the CLI's largest
``--concurrency``, so that a batch never closes a connection it will want again (the SDKs'
default keeps 100)."""


def sdk_http_client(sdk: Any, timeout: float) -> Any:
    """The SDK's own default async HTTP client (its socket options, redirects), keeping
    :data:`KEEPALIVE_CONNECTIONS` connections alive. Built from the SDK's public names
    (``DEFAULT_CONNECTION_LIMITS``, ``DefaultAsyncHttpxClient``), whichever HTTP library it uses."""
    defaults = sdk.DEFAULT_CONNECTION_LIMITS
    limits = type(defaults)(
        max_connections=max(defaults.max_connections or 0, KEEPALIVE_CONNECTIONS),
        max_keepalive_connections=KEEPALIVE_CONNECTIONS,
        keepalive_expiry=defaults.keepalive_expiry,
    )
    return sdk.DefaultAsyncHttpxClient(timeout=timeout, limits=limits)
