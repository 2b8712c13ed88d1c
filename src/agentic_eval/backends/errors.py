"""Classify a provider SDK's exception: the one rule both live backends follow.

HTTP 408, 429, 529 and any 5xx, timeouts and connection errors say nothing about the agent:
``transient`` (retried first). 401/403 mean the credentials were refused: the run stops. Any other
4xx is the provider refusing this request: an ``error`` outcome carrying the provider's message.
A connection error carries what the transport said (the SDKs' own message is a bare
"Connection error.", which does not tell a reset from a hang-up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    ProviderRequestError,
    TransientBackendError,
)
from agentic_eval.core.model import ModelResponse
from agentic_eval.core.text import redact

MAX_MESSAGE_CHARS = 500
TRANSIENT_STATUSES = frozenset({408, 429, 529})


def one_line(text: str) -> str:
    """Secrets redacted, whitespace collapsed, cut to :data:`MAX_MESSAGE_CHARS`."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= MAX_MESSAGE_CHARS else flat[: MAX_MESSAGE_CHARS - 3] + "..."


def provider_message(body: object, fallback: str) -> str:
    """The provider's own error message from its error envelope, as one short line."""
    if isinstance(body, dict):
        envelope: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
        error = envelope.get("error", envelope)
        if isinstance(error, dict):
            message = error.get("message")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(message, str) and message:
                return one_line(message)
    return one_line(fallback)


def transport_cause(exc: BaseException) -> str:
    """The first non-empty message down ``exc``'s cause chain (the transport's own words)."""
    seen: set[int] = set()
    current = exc.__cause__ or exc.__context__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip()
        if text:
            return text
        current = current.__cause__ or current.__context__
    return ""


def classify_sdk_error(provider: str, sdk: Any, exc: Exception, timeout: float) -> BackendError:
    """Map an ``APIError`` of the anthropic or openai SDK (same class names) to our errors.

    Args:
        provider: ``anthropic`` or ``openai``, for the message.
        sdk: The SDK module (its exception classes are looked up on it).
        exc: The SDK's exception.
        timeout: The request timeout, for the message.
    """
    message_attr: str = getattr(exc, "message", str(exc))
    if isinstance(exc, sdk.APITimeoutError):
        return TransientBackendError(f"{provider}: request timed out after {timeout:g}s")
    if isinstance(exc, sdk.APIConnectionError):
        detail = transport_cause(exc) or message_attr
        return TransientBackendError(f"{provider}: connection error: {one_line(detail)}")
    if isinstance(exc, sdk.APIStatusError):
        status: int = getattr(exc, "status_code", 0)
        message = provider_message(getattr(exc, "body", None), message_attr)
        if status in TRANSIENT_STATUSES or status >= 500:
            return TransientBackendError(f"{provider}: HTTP {status}: {message}")
        if status in (401, 403):
            return AuthenticationFailed(
                f"{provider} rejected the credentials (HTTP {status}): {message}"
            )
        return ProviderRequestError(f"{provider} refused the request (HTTP {status}): {message}")
    return BackendError(f"{provider}: unreadable response: {one_line(message_attr)}")


def unreadable_response(provider: str, detail: object) -> BackendError:
    """A reply that is not what every successful response of the API holds (not JSON, or
    without its required fields): a :class:`BackendError` naming what was wrong, on one line.

    Args:
        provider: ``anthropic`` or ``openai``, for the message.
        detail: What was wrong: a message, or the exception met reading the reply.
    """
    if isinstance(detail, BaseException):
        detail = f"{type(detail).__name__}: {detail}"
    return BackendError(f"{provider}: unreadable response: {one_line(str(detail))}")


def read_reply(
    provider: str, data: object, convert: Callable[[dict[str, Any]], ModelResponse]
) -> ModelResponse:
    """``convert`` of a reply's JSON, which must be an object; a reply it cannot read (a field
    missing or of another type) is :func:`unreadable_response`."""
    if not isinstance(data, dict):
        raise unreadable_response(provider, f"not a JSON object: {str(data)[:200]}")
    reply: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    try:
        return convert(reply)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise unreadable_response(provider, exc) from exc
