"""The domain registry. Built-in domains register through the same entry point a plugin uses.

A plugin that fails to import, or whose entry point names something other than a
:class:`Domain` instance, is reported (:func:`plugin_errors`) and left out; every other domain
still works. Asking for that domain by name raises :class:`DomainLoadError` with the reason.
"""

from __future__ import annotations

import threading
from importlib.metadata import entry_points
from typing import Any

from agentic_eval.domains.base import Domain

ENTRY_POINT_GROUP = "agentic_eval.domains"

_domains: dict[str, Domain[Any]] = {}
_errors: dict[str, str] = {}
_loaded = False
_done = False
_lock = threading.RLock()


class UnknownDomainError(LookupError):
    """No domain of that name is registered."""


class DomainLoadError(ImportError):
    """A domain plugin's entry point could not be loaded, or is not a Domain instance."""


def register_domain(domain: Domain[Any]) -> Domain[Any]:
    """Register a domain (a plugin calls this, or exposes the domain under the entry point).

    Raises:
        TypeError: When ``domain`` is not a :class:`Domain` instance.
        ValueError: When a different domain of that name is already registered.
    """
    if not isinstance(domain, Domain):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"register_domain needs a Domain instance, got {_describe(domain)}")
    missing = [
        a for a in ("name", "system_prompt") if not isinstance(getattr(domain, a, None), str)
    ]
    if missing:
        raise TypeError(
            f"{type(domain).__name__} must set the class attribute(s) {', '.join(missing)}"
        )
    existing = _domains.get(domain.name)
    if existing is not None and existing is not domain:
        raise ValueError(f"a domain named {domain.name!r} is already registered")
    _domains[domain.name] = domain
    return domain


def unregister_domain(name: str) -> None:
    """Remove a domain (tests use this to clean up)."""
    _domains.pop(name, None)


def _describe(obj: object) -> str:
    if isinstance(obj, type):
        name = f"{obj.__module__}.{obj.__qualname__}"
        return f"the class {name} (expose an instance: `DOMAIN = {obj.__qualname__}()`)"
    return f"a {type(obj).__name__}"


def _load_entry_points() -> None:
    """Load the plugins once. Other threads wait for the first load to finish (a thread pool
    of workers asks at once); a plugin that asks for a domain while it loads is answered from
    what has loaded so far."""
    global _loaded, _done
    if _done:
        return
    with _lock:
        if _loaded:  # loaded meanwhile, or being loaded by this very thread
            return
        _loaded = True
        try:
            _load_each()
        finally:
            _done = True


def _load_each() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _domains:
            continue
        try:
            obj = ep.load()
        except Exception as exc:
            detail = str(exc).splitlines()[0] if str(exc) else ""
            _errors[ep.name] = f"cannot import {ep.value}: {type(exc).__name__}: {detail}".rstrip(
                ": "
            )
            continue
        if not isinstance(obj, Domain):
            _errors[ep.name] = f"entry point {ep.value} is {_describe(obj)}, not a Domain instance"
            continue
        try:
            register_domain(obj)  # pyright: ignore[reportUnknownArgumentType]
        except (TypeError, ValueError) as exc:
            _errors[ep.name] = str(exc)


def plugin_errors() -> dict[str, str]:
    """Domain plugins that could not be loaded, by entry-point name, with the reason."""
    _load_entry_points()
    return dict(sorted(_errors.items()))


def all_domains() -> dict[str, Domain[Any]]:
    """Every registered domain that loaded, by name (sorted)."""
    _load_entry_points()
    return dict(sorted(_domains.items()))


def loaded_domains() -> dict[str, Domain[Any]]:
    """The domains registered so far, loading nothing (an error path asks what ran)."""
    return dict(_domains)


def get_domain(name: str) -> Domain[Any]:
    """The domain called ``name``.

    Raises:
        DomainLoadError: When its plugin failed to load (naming why).
        UnknownDomainError: Naming the known domains.
    """
    if name in _domains:
        return _domains[name]
    domains = all_domains()
    if name in domains:
        return domains[name]
    if name in _errors:
        raise DomainLoadError(f"domain plugin {name!r} failed to load: {_errors[name]}")
    known = ", ".join(domains) or "none"
    raise UnknownDomainError(f"unknown domain {name!r} (known: {known})")


def expected_to_fail(suite: str, agent: str) -> bool:
    """Whether ``agent`` is one ``suite``'s domain ships to fail (:meth:`Domain.failing_agents`);
    False for a suite that is not a domain, or whose plugin does not load."""
    try:
        return agent in get_domain(suite).failing_agents()
    except (UnknownDomainError, DomainLoadError):
        return False
