"""A serialisable description of a backend, and the registry that builds one from it.

A :class:`BackendSpec` is stored with every run, so a worker or ``--resume`` can rebuild the
run's backend without the CLI. Providers register a factory under a name (the built-ins
``anthropic`` and ``openai`` exactly as a plugin would, through the ``agentic_eval.backends``
entry-point group); the vendor SDK is imported only when its factory runs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Literal, cast

from pydantic import Field, field_serializer

from agentic_eval.backends.base import BackendError, ModelBackend, RetryPolicy
from agentic_eval.core.defaults import DEFAULT_RETRIES as DEFAULT_RETRIES
from agentic_eval.core.defaults import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from agentic_eval.core.messages import Frozen
from agentic_eval.core.text import safe_url

BackendKind = Literal["replay", "scripted", "live"]
ENTRY_POINT_GROUP = "agentic_eval.backends"


class BackendSpec(Frozen):
    """What produces a run's model responses, in a form that can be stored and rebuilt."""

    kind: BackendKind = Field(description="replay, scripted or live.")
    provider: str = Field(default="", description="Live provider name (anthropic, openai...).")
    model: str = Field(default="", description="Model name for live runs.")
    base_url: str | None = Field(
        default=None,
        repr=False,
        description="Provider base URL. Stored and shown only through core.text.safe_url: "
        "credentials in it (user:password@, ?api_key=) are never persisted, so a stored spec "
        "rebuilds a backend only when its credentials come from the environment.",
    )
    agent: str = Field(default="", description="Scripted agent name, or the replayed agent.")
    label: str | None = Field(default=None, description="Label the run is filed under.")
    retries: int = Field(default=DEFAULT_RETRIES, ge=0, le=20, description="Transient retries.")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT, gt=0, le=3600, allow_inf_nan=False, description="Seconds."
    )
    recordings: str | None = Field(default=None, description="Recordings root (replay/record).")
    record: bool = Field(default=False, description="Whether the run is recorded.")

    @field_serializer("base_url")
    def _safe_base_url(self, value: str | None) -> str | None:
        return None if value is None else safe_url(value)

    def retry(self) -> RetryPolicy:
        """The retry policy."""
        return RetryPolicy(max_retries=self.retries)


ProviderFactory = Callable[[BackendSpec], ModelBackend]
_providers: dict[str, ProviderFactory] = {}
_loaded = False


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Register a live provider's factory under ``name``."""
    _providers[name] = factory


def _anthropic(spec: BackendSpec) -> ModelBackend:
    from agentic_eval.backends.anthropic_backend import AnthropicBackend

    return AnthropicBackend(
        model=spec.model,
        base_url=spec.base_url,
        retry=spec.retry(),
        timeout=spec.timeout,
        agent_label=spec.label,
    )


def _openai(spec: BackendSpec) -> ModelBackend:
    from agentic_eval.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(
        model=spec.model,
        base_url=spec.base_url,
        retry=spec.retry(),
        timeout=spec.timeout,
        agent_label=spec.label,
    )


def providers() -> dict[str, ProviderFactory]:
    """Every registered provider (built-ins first, then entry-point plugins), by name."""
    global _loaded
    if not _loaded:
        _loaded = True
        _providers.setdefault("anthropic", _anthropic)
        _providers.setdefault("openai", _openai)
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in _providers:
                continue
            try:
                factory = ep.load()
            except Exception:  # a broken plugin must not break the built-ins
                continue
            if callable(factory):
                _providers[ep.name] = cast(ProviderFactory, factory)
    return dict(_providers)


def live_backend_from_spec(spec: BackendSpec) -> ModelBackend:
    """Build a live backend.

    Raises:
        BackendError: For an unknown provider or a missing SDK.
        AuthenticationFailed: When no key is available.
    """
    factory = providers().get(spec.provider)
    if factory is None:
        known = ", ".join(sorted(providers()))
        raise BackendError(f"unknown provider {spec.provider!r} (known: {known})")
    return factory(spec)
