"""One-file evals: a domain defined in one Python file with decorators, run by its path.

The names are loaded on first use (PEP 562): telling an eval file's path from a domain's name
(:func:`is_eval_file`) does not import the decorators and what they build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.domains.onefile.decorated import OneFileDomain, domain
    from agentic_eval.domains.onefile.loading import EvalFileError, is_eval_file, load_eval_file
    from agentic_eval.domains.onefile.plain import CaseRows

__all__ = [
    "CaseRows",
    "EvalFileError",
    "OneFileDomain",
    "domain",
    "is_eval_file",
    "load_eval_file",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "CaseRows": ("agentic_eval.domains.onefile.plain", "CaseRows"),
        "OneFileDomain": ("agentic_eval.domains.onefile.decorated", "OneFileDomain"),
        "domain": ("agentic_eval.domains.onefile.decorated", "domain"),
        "EvalFileError": ("agentic_eval.domains.onefile.loading", "EvalFileError"),
        "is_eval_file": ("agentic_eval.domains.onefile.loading", "is_eval_file"),
        "load_eval_file": ("agentic_eval.domains.onefile.loading", "load_eval_file"),
    },
    globals(),
)
