"""The domain registry. Built-in domains register through the same entry point a plugin uses."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from agentic_eval.domains.base import Domain

ENTRY_POINT_GROUP = "agentic_eval.domains"

_domains: dict[str, Domain[Any]] = {}
_loaded = False


class UnknownDomainError(LookupError):
    """No domain of that name is registered."""


class DomainLoadError(ImportError):
    """A domain plugin's entry point could not be loaded."""


def register_domain(domain: Domain[Any]) -> Domain[Any]:
    """Register a domain (a plugin calls this, or exposes the domain under the entry point).

    Raises:
        ValueError: When a different domain of that name is already registered.
    """
    existing = _domains.get(domain.name)
    if existing is not None and existing is not domain:
        raise ValueError(f"a domain named {domain.name!r} is already registered")
    _domains[domain.name] = domain
    return domain


def unregister_domain(name: str) -> None:
    """Remove a domain (tests use this to clean up)."""
    _domains.pop(name, None)


def _load_entry_points() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:
            _loaded = False
            raise DomainLoadError(
                f"cannot load domain plugin {ep.name!r} ({ep.value}): {exc}"
            ) from exc
        if isinstance(obj, Domain):
            register_domain(obj)  # pyright: ignore[reportUnknownArgumentType]


def all_domains() -> dict[str, Domain[Any]]:
    """Every registered domain, by name (sorted)."""
    _load_entry_points()
    return dict(sorted(_domains.items()))


def get_domain(name: str) -> Domain[Any]:
    """The domain called ``name``.

    Raises:
        UnknownDomainError: Naming the known domains.
    """
    if name in _domains:
        return _domains[name]
    domains = all_domains()
    try:
        return domains[name]
    except KeyError:
        known = ", ".join(domains) or "none"
        raise UnknownDomainError(f"unknown domain {name!r} (known: {known})") from None
