"""Domains: fixtures, answer keys, tools, checks, cases and scripted agents."""

from agentic_eval.domains.base import (
    CaseFile,
    CaseFileError,
    CaseSpec,
    Domain,
    Trace,
    approval_gate,
    parse_task_inputs,
    render_task,
)
from agentic_eval.domains.registry import (
    UnknownDomainError,
    all_domains,
    get_domain,
    register_domain,
    unregister_domain,
)

__all__ = [
    "CaseFile",
    "CaseFileError",
    "CaseSpec",
    "Domain",
    "Trace",
    "UnknownDomainError",
    "all_domains",
    "approval_gate",
    "get_domain",
    "parse_task_inputs",
    "register_domain",
    "render_task",
    "unregister_domain",
]
