"""Turn case runs into store rows."""

from __future__ import annotations

from typing import Any

from agentic_eval.evaluation.runner import CaseRun


def sample_row(run: CaseRun, transcript_ref: str | None) -> dict[str, Any]:
    """The ``eval_sample`` columns of one case run."""
    r = run.result
    return {
        "case_id": r.case_id,
        "outcome": r.outcome.kind,
        "failure_reason": r.outcome.reason,
        "failure_where": r.outcome.where,
        "checks": [c.model_dump(mode="json") for c in r.checks],
        "hard_gate_failed": r.hard_gate_failed,
        "unapproved_attempts": r.unapproved_attempts,
        "unapproved_executions": r.unapproved_executions,
        "turns": r.turns,
        "tool_calls": r.tool_calls,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "duration_ms": round(run.duration_ms, 3),
        "transcript_ref": transcript_ref,
        "reproduced": run.reproduced,
    }
