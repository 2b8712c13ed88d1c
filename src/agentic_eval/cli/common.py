"""Helpers shared by commands: domain resolution, plugin warnings, one-line usage errors."""

from __future__ import annotations

import fnmatch
from typing import Any

import click

from agentic_eval.core.case import CaseSpec
from agentic_eval.core.text import one_line
from agentic_eval.domains.base import CaseFileError, Domain
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.domains.registry import (
    DomainLoadError,
    UnknownDomainError,
    all_domains,
    get_domain,
    plugin_errors,
)


def warn(message: str) -> None:
    """One line on stderr."""
    click.echo(f"agentic-eval: warning: {one_line(message)}", err=True)


def resolve_domains(names: tuple[str, ...]) -> list[Domain[Any]]:
    """The named domains (all that load when none is named; broken plugins are reported).

    Raises:
        click.UsageError: For an unknown name.
        click.ClickException: For a named domain whose plugin failed to load.
    """
    try:
        if not names:
            for name, why in plugin_errors().items():
                warn(f"domain plugin {name!r} failed to load and is skipped: {why}")
            return list(all_domains().values())
        return [get_domain(n) for n in dict.fromkeys(names)]
    except UnknownDomainError as exc:
        raise click.UsageError(str(exc)) from None
    except DomainLoadError as exc:
        raise click.ClickException(one_line(str(exc))) from None


def load_cases(domain: Domain[Any]) -> list[CaseSpec]:
    """The domain's cases.

    Raises:
        click.ClickException: One line naming the case file or fixture file at fault.
    """
    try:
        return domain.load_cases()
    except (CaseFileError, FixtureError) as exc:
        raise click.ClickException(one_line(str(exc))) from None


def select_cases(cases: list[CaseSpec], pattern: str | None) -> list[CaseSpec]:
    """Cases whose id matches a comma-separated list of globs (all when no pattern)."""
    if pattern is None:
        return cases
    globs = [g.strip() for g in pattern.split(",") if g.strip()]
    return [c for c in cases if any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
