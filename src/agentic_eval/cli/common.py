"""Helpers shared by commands: domain resolution, plugin warnings, one-line usage errors.

Imported by most commands, so what it needs beyond click is imported where it is used: a
command's ``--help`` must not load the domains, the loop or the recordings.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from agentic_eval.core.text import one_line

if TYPE_CHECKING:
    from agentic_eval.backends.base import ModelBackend
    from agentic_eval.core.case import CaseSpec
    from agentic_eval.domains.base import Domain
    from agentic_eval.domains.catalog import CaseRow
    from agentic_eval.recordings.record import RecordingBackend


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


C = TypeVar("C", bound=_HasId)


class HistoryProblem(click.ClickException):
    """An unreadable history file or a run that cannot be found: exit 2 (nothing compared)."""

    exit_code = 2


class CannotRun(click.ClickException):
    """The command cannot do what was asked, for a reason outside the agent: a missing or
    refused key, a missing SDK, a backend that cannot be built, a worker that failed, a store
    that cannot be reached, a file that cannot be written. Exit 2, as for usage errors: 1 is the
    gate's verdict on the agent, and this is no verdict. Every error a command raises is this or
    another ``click.ClickException`` whose exit code is 2 (``tests/test_exit_codes.py``)."""

    exit_code = 2


class InputError(click.ClickException):
    """A broken input (a case file, fixtures, a domain's own definition): nothing could be run
    or judged, so it exits 2 (as a usage error does), never 1, which is a failed gate."""

    exit_code = 2


def case_errors() -> tuple[type[Exception], ...]:
    """The errors of a broken case file or fixture file, imported when one is being caught
    (an ``except`` clause evaluates its expression only then)."""
    from agentic_eval.domains.base import CaseFileError
    from agentic_eval.domains.fixtures import FixtureError

    return (CaseFileError, FixtureError)


def warn(message: str) -> None:
    """One line on stderr."""
    click.echo(f"agentic-eval: warning: {one_line(message)}", err=True)


def resolve_domains(names: tuple[str, ...]) -> list[Domain[Any]]:
    """The named domains (all that load when none is named; broken plugins are reported).
    A name ending in ``.py`` is an eval file: the domains it defines, registered from then on.

    Raises:
        click.UsageError: For an unknown name, or an eval file that cannot be used.
        click.ClickException: For a named domain whose plugin failed to load.
    """
    from agentic_eval.domains.registry import (
        DomainLoadError,
        UnknownDomainError,
        all_domains,
        get_domain,
        plugin_errors,
    )

    try:
        if not names:
            for name, why in plugin_errors().items():
                warn(f"domain plugin {name!r} failed to load and is skipped: {why}")
            return list(all_domains().values())
        found: dict[str, Domain[Any]] = {}
        for n in dict.fromkeys(names):
            for d in _eval_file_domains(n) if _is_eval_file(n) else [get_domain(n)]:
                found.setdefault(d.name, d)
        return list(found.values())
    except UnknownDomainError as exc:
        raise click.UsageError(str(exc)) from None
    except DomainLoadError as exc:
        raise CannotRun(one_line(str(exc))) from None


def resolve_one_domain(name: str, what: str) -> Domain[Any]:
    """The one domain ``name`` names, for a command (``what``) that takes one: a registered
    domain, or an eval file defining exactly one.

    Raises:
        click.UsageError: For an unknown name, an eval file that cannot be used, or one that
            defines several domains (naming them).
    """
    found = resolve_domains((name,))
    if len(found) != 1:
        names = ", ".join(d.name for d in found)
        raise click.UsageError(
            f"{name} defines {len(found)} domains ({names}); {what} takes one: use an eval "
            "file defining one of them"
        )
    return found[0]


def _is_eval_file(name: str) -> bool:
    """:func:`~agentic_eval.domains.onefile.is_eval_file` (imported alone: a registered
    domain's name loads none of the one-file machinery)."""
    from agentic_eval.domains.onefile import is_eval_file

    return is_eval_file(name)


def _eval_file_domains(name: str) -> list[Domain[Any]]:
    """The domains an eval file defines.

    Raises:
        click.UsageError: For an eval file that cannot be used.
    """
    from agentic_eval.domains.onefile import EvalFileError, load_eval_file

    try:
        return load_eval_file(name)
    except EvalFileError as exc:
        raise click.UsageError(one_line(str(exc))) from None


def recordings_root(names: tuple[str, ...], recordings: Path) -> Path:
    """``--recordings`` when given; else, when every name is an eval file of one folder, the
    ``recordings`` folder beside those files (else the default, ``recordings``).

    Raises:
        click.UsageError: For an eval file that cannot be used.
    """
    ctx = click.get_current_context(silent=True)
    given = ctx is not None and ctx.get_parameter_source("recordings") not in (
        click.core.ParameterSource.DEFAULT,
        None,
    )
    if given or not names or not all(_is_eval_file(n) for n in names):
        return recordings
    from agentic_eval.domains.onefile import OneFileDomain
    from agentic_eval.domains.onefile.loading import eval_file_of

    roots: set[Path] = set()
    for d in resolve_domains(names):
        source = eval_file_of(d)
        if isinstance(d, OneFileDomain):
            roots.add(d.recordings_root())
        elif source is not None:  # a Domain instance in an eval file: beside the file, too
            roots.add(source.parent / "recordings")
    return roots.pop() if len(roots) == 1 else recordings


def domain_argument(domain: Domain[Any]) -> str:
    """How a command names ``domain``: the path of the eval file that defines it (relative to
    the working directory when under it), else its name."""
    from agentic_eval.domains.onefile.loading import eval_file_of

    source = eval_file_of(domain)
    if source is None:
        return domain.name
    try:
        return str(source.relative_to(Path.cwd()))
    except ValueError:
        return str(source)


def load_cases(domain: Domain[Any]) -> list[CaseSpec]:
    """The domain's cases.

    Raises:
        click.ClickException: One line naming the case file or fixture file at fault.
    """
    try:
        return domain.load_cases()
    except case_errors() as exc:
        raise InputError(one_line(str(exc))) from None


def load_case_rows(domain: Domain[Any]) -> list[CaseRow]:
    """The domain's cases as listings show them (:func:`~agentic_eval.domains.catalog.
    case_rows`: read without building the models where the case file allows).

    Raises:
        click.ClickException: One line naming the case file or fixture file at fault.
    """
    from agentic_eval.domains.catalog import case_rows

    try:
        return case_rows(domain)
    except case_errors() as exc:
        raise InputError(one_line(str(exc))) from None


def select_cases(cases: list[C], pattern: str | None) -> list[C]:
    """Cases whose id matches a comma-separated list of globs (all when no pattern)."""
    if pattern is None:
        return cases
    globs = [g.strip() for g in pattern.split(",") if g.strip()]
    return [c for c in cases if any(fnmatch.fnmatchcase(c.id, g) for g in globs)]


def open_recorder(
    backend: ModelBackend, recordings: Path, suite: str, *, what: str, real_fixtures: bool
) -> RecordingBackend:
    """``backend`` wrapped to record ``suite`` under ``recordings``, refused in one line before
    anything runs: real fixtures into a git work tree (usage error), a folder holding another
    producer's recordings (usage error), or a folder that cannot be listed.

    Args:
        backend: What answers.
        recordings: The recordings root.
        suite: The suite whose folder is written (a domain, a workflow).
        what: What is recorded, for messages (a domain or scenario name).
        real_fixtures: Whether it runs on real fixtures from ``EVAL_FIXTURE_DIR``.
    """
    from agentic_eval.core.realdata import inside_git_work_tree
    from agentic_eval.recordings.files import RecordingError
    from agentic_eval.recordings.record import ProducerMismatch, RecordingBackend

    if real_fixtures and inside_git_work_tree(recordings):
        raise click.UsageError(
            f"{what} is using real fixtures from EVAL_FIXTURE_DIR: refusing to record into "
            f"{recordings}, inside a git repository; pass --recordings DIR outside any git "
            "repository"
        )
    recorder = RecordingBackend(backend, recordings)
    try:
        recorder.check_folder(suite)
    except ProducerMismatch as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except RecordingError as exc:
        raise CannotRun(f"recording: {one_line(str(exc))}") from None
    return recorder
