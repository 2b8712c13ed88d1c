"""Running task specs, sessions (store + record + compare), gate arithmetic and goldens.

The names below are loaded on first use (PEP 562), so importing one submodule (the gate
arithmetic, say) does not import the loop, the store and the recordings with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.evaluation.gate import (
        EXIT_CODES,
        build_scorecard,
        case_result,
        format_rate,
        gate_summary,
    )
    from agentic_eval.evaluation.goldens import check_goldens, write_goldens
    from agentic_eval.evaluation.runner import (
        CaseRun,
        TasksRun,
        produced_by,
        run_case,
        run_tasks,
    )
    from agentic_eval.evaluation.session import SessionResult, run_session
    from agentic_eval.evaluation.settings import RunSettings

_WHERE: dict[str, tuple[str, str]] = {
    "EXIT_CODES": ("agentic_eval.evaluation.gate", "EXIT_CODES"),
    "build_scorecard": ("agentic_eval.evaluation.gate", "build_scorecard"),
    "case_result": ("agentic_eval.evaluation.gate", "case_result"),
    "format_rate": ("agentic_eval.evaluation.gate", "format_rate"),
    "gate_summary": ("agentic_eval.evaluation.gate", "gate_summary"),
    "check_goldens": ("agentic_eval.evaluation.goldens", "check_goldens"),
    "write_goldens": ("agentic_eval.evaluation.goldens", "write_goldens"),
    "CaseRun": ("agentic_eval.evaluation.runner", "CaseRun"),
    "TasksRun": ("agentic_eval.evaluation.runner", "TasksRun"),
    "produced_by": ("agentic_eval.evaluation.runner", "produced_by"),
    "run_case": ("agentic_eval.evaluation.runner", "run_case"),
    "run_tasks": ("agentic_eval.evaluation.runner", "run_tasks"),
    "SessionResult": ("agentic_eval.evaluation.session", "SessionResult"),
    "run_session": ("agentic_eval.evaluation.session", "run_session"),
    "RunSettings": ("agentic_eval.evaluation.settings", "RunSettings"),
}

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


__getattr__ = lazy_exports(__name__, _WHERE, globals())
