"""Domains: fixtures, answer keys, tools, task kinds, cases, scripted agents and mutants."""

from agentic_eval.checks.base import Trace
from agentic_eval.checks.gates import approval_gate
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.task import parse_task_inputs, render_task
from agentic_eval.domains.base import CaseFile, CaseFileError, Domain, Mutant
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
