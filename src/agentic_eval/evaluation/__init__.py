"""Running task specs, sessions (store + record + compare), gate arithmetic and goldens.

The names below are loaded on first use (PEP 562), so importing one submodule (the gate
arithmetic, say) does not import the loop, the store and the recordings with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

_WHERE = {
    "EXIT_CODES": "gate",
    "build_scorecard": "gate",
    "case_result": "gate",
    "format_rate": "gate",
    "gate_summary": "gate",
    "check_goldens": "goldens",
    "write_goldens": "goldens",
    "CaseRun": "runner",
    "TasksRun": "runner",
    "produced_by": "runner",
    "run_case": "runner",
    "run_tasks": "runner",
    "SessionResult": "session",
    "run_session": "session",
    "RunSettings": "settings",
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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
