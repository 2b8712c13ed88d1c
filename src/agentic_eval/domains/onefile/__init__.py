"""One-file evals: a domain defined in one Python file with decorators, run by its path."""

from agentic_eval.domains.onefile.decorated import CaseRows, OneFileDomain, domain
from agentic_eval.domains.onefile.loading import EvalFileError, is_eval_file, load_eval_file

__all__ = [
    "CaseRows",
    "EvalFileError",
    "OneFileDomain",
    "domain",
    "is_eval_file",
    "load_eval_file",
]
