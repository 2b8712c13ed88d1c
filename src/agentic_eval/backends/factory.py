"""Build a live backend by provider name; the vendor SDK is imported only when chosen."""

from __future__ import annotations

from typing import Literal

from agentic_eval.backends.base import ModelBackend, RetryPolicy
from agentic_eval.backends.spec import DEFAULT_TIMEOUT, BackendSpec, live_backend_from_spec

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")


def live_backend(
    provider: str,
    *,
    model: str,
    base_url: str | None = None,
    agent_label: str | None = None,
    retry: RetryPolicy | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ModelBackend:
    """A live backend for ``provider`` (see :class:`BackendSpec` for the stored form).

    Raises:
        BackendError: When the provider is unknown or its SDK is not installed.
        AuthenticationFailed: When no key is available.
    """
    spec = BackendSpec(
        kind="live",
        provider=provider,
        model=model,
        base_url=base_url,
        label=agent_label,
        retries=(retry or RetryPolicy()).max_retries,
        timeout=timeout,
    )
    return live_backend_from_spec(spec)
