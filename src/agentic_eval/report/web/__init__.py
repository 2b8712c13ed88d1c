"""The web viewer: ``agentic-eval view``'s pages over the store, rendered by the report's own
renderers (stylesheet, escaping, diff table), served on a loopback address."""

from agentic_eval.report.web.queries import BadRequest, NotFound, all_series, run_diff
from agentic_eval.report.web.server import NotLoopback, ViewerServer, is_loopback, render

__all__ = [
    "BadRequest",
    "NotFound",
    "NotLoopback",
    "ViewerServer",
    "all_series",
    "is_loopback",
    "render",
    "run_diff",
]
