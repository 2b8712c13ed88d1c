"""Helpers shared by commands: domain resolution and one-line usage errors."""

from __future__ import annotations

from typing import Any

import click

from agentic_eval.domains.base import Domain
from agentic_eval.domains.registry import (
    DomainLoadError,
    UnknownDomainError,
    all_domains,
    get_domain,
)


def resolve_domains(names: tuple[str, ...]) -> list[Domain[Any]]:
    """The named domains (all when none named).

    Raises:
        click.UsageError: For an unknown name.
    """
    try:
        if not names:
            return list(all_domains().values())
        return [get_domain(n) for n in dict.fromkeys(names)]
    except UnknownDomainError as exc:
        raise click.UsageError(str(exc)) from None
    except DomainLoadError as exc:
        raise click.ClickException(str(exc)) from None
