"""Domains: fixtures, answer keys, tools, task kinds, cases, scripted agents and mutants.

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.checks.base import Trace
    from agentic_eval.checks.gates import approval_gate
    from agentic_eval.core.case import CaseSpec
    from agentic_eval.core.task import parse_task_inputs, render_task
    from agentic_eval.domains.base import CaseFileError, Domain, Mutant
    from agentic_eval.domains.casefile import CaseFile
    from agentic_eval.domains.fixtures import FixtureError, fixture_file, load_fixture_file
    from agentic_eval.domains.registry import (
        DomainLoadError,
        UnknownDomainError,
        all_domains,
        get_domain,
        plugin_errors,
        register_domain,
        unregister_domain,
    )

_WHERE: dict[str, tuple[str, str]] = {
    "Trace": ("agentic_eval.checks.base", "Trace"),
    "approval_gate": ("agentic_eval.checks.gates", "approval_gate"),
    "CaseSpec": ("agentic_eval.core.case", "CaseSpec"),
    "parse_task_inputs": ("agentic_eval.core.task", "parse_task_inputs"),
    "render_task": ("agentic_eval.core.task", "render_task"),
    "CaseFile": ("agentic_eval.domains.casefile", "CaseFile"),
    "CaseFileError": ("agentic_eval.domains.base", "CaseFileError"),
    "Domain": ("agentic_eval.domains.base", "Domain"),
    "Mutant": ("agentic_eval.domains.base", "Mutant"),
    "FixtureError": ("agentic_eval.domains.fixtures", "FixtureError"),
    "fixture_file": ("agentic_eval.domains.fixtures", "fixture_file"),
    "load_fixture_file": ("agentic_eval.domains.fixtures", "load_fixture_file"),
    "DomainLoadError": ("agentic_eval.domains.registry", "DomainLoadError"),
    "UnknownDomainError": ("agentic_eval.domains.registry", "UnknownDomainError"),
    "all_domains": ("agentic_eval.domains.registry", "all_domains"),
    "get_domain": ("agentic_eval.domains.registry", "get_domain"),
    "plugin_errors": ("agentic_eval.domains.registry", "plugin_errors"),
    "register_domain": ("agentic_eval.domains.registry", "register_domain"),
    "unregister_domain": ("agentic_eval.domains.registry", "unregister_domain"),
}

__all__ = [
    "CaseFile",
    "CaseFileError",
    "CaseSpec",
    "Domain",
    "DomainLoadError",
    "FixtureError",
    "Mutant",
    "Trace",
    "UnknownDomainError",
    "all_domains",
    "approval_gate",
    "fixture_file",
    "get_domain",
    "load_fixture_file",
    "parse_task_inputs",
    "plugin_errors",
    "register_domain",
    "render_task",
    "unregister_domain",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
