"""Running cases and domains, gate arithmetic, scorecards and goldens."""

from agentic_eval.evaluation.gate import EXIT_CODES, build_scorecard, case_result, gate_summary
from agentic_eval.evaluation.goldens import check_goldens, write_goldens
from agentic_eval.evaluation.runner import (
    CaseRun,
    DomainRun,
    RunSettings,
    produced_by,
    run_case,
    run_domain,
)

__all__ = [
    "EXIT_CODES",
    "CaseRun",
    "DomainRun",
    "RunSettings",
    "build_scorecard",
    "case_result",
    "check_goldens",
    "gate_summary",
    "produced_by",
    "run_case",
    "run_domain",
    "write_goldens",
]
