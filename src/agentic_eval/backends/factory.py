"""Build a live backend by provider name; the vendor SDK is imported only when chosen."""

from __future__ import annotations

from typing import Literal

from agentic_eval.backends.base import ModelBackend, RetryPolicy

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")


def live_backend(
    provider: Provider,
    *,
    model: str,
    base_url: str | None = None,
    agent_label: str | None = None,
    retry: RetryPolicy | None = None,
    timeout: float = 60.0,
) -> ModelBackend:
    """A live backend for ``provider``.

    Raises:
        BackendError: When the provider's SDK is not installed.
        AuthenticationFailed: When no key is available.
    """
    retry = retry or RetryPolicy()
    if provider == "anthropic":
        from agentic_eval.backends.anthropic_backend import AnthropicBackend

        return AnthropicBackend(
            model=model, base_url=base_url, retry=retry, timeout=timeout, agent_label=agent_label
        )
    from agentic_eval.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(
        model=model, base_url=base_url, retry=retry, timeout=timeout, agent_label=agent_label
    )
