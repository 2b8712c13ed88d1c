"""Running task specs, sessions (store + record + compare), gate arithmetic and goldens."""

from agentic_eval.evaluation.gate import (
    EXIT_CODES,
    build_scorecard,
    case_result,
    format_rate,
    gate_summary,
)
from agentic_eval.evaluation.goldens import check_goldens, write_goldens
from agentic_eval.evaluation.runner import CaseRun, TasksRun, produced_by, run_case, run_tasks
from agentic_eval.evaluation.session import SessionResult, run_session
from agentic_eval.evaluation.settings import RunSettings

__all__ = [
    "EXIT_CODES",
    "CaseRun",
    "RunSettings",
    "SessionResult",
    "TasksRun",
    "build_scorecard",
    "case_result",
    "check_goldens",
    "format_rate",
    "gate_summary",
    "produced_by",
    "run_case",
    "run_session",
    "run_tasks",
    "write_goldens",
]
