"""The shapes (:mod:`.shapes`) of the persisted models that ``list`` and ``show`` read without
building them: a case of a case file, a transcript and a scorecard.

Each mirrors its model field for field (``tests/test_shapes.py`` derives the shapes from the
models and compares): change a model, and its shape here with it.
"""

from __future__ import annotations

from agentic_eval.core.defaults import (
    DEFAULT_MAX_FAILURE_RATE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TRANSIENT,
    DEFAULT_MAX_TURNS,
    DEFAULT_TEMPERATURE,
    MAX_TURNS,
)
from agentic_eval.core.shapes import (
    Anything,
    Bool,
    Float,
    Int,
    Key,
    Lit,
    Map,
    Obj,
    Opt,
    Seq,
    Str,
    Tagged,
)

CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""What a case id is (``CaseSpec`` holds its ids to it)."""

CASE = Obj(
    {
        "id": Key(Str(CASE_ID_PATTERN)),
        "kind": Key(Str()),
        "instruction": Key(Str()),
        "inputs": Key(Map(Anything())),
        "expected": Key(Map(Anything())),
        "approvals": Key(Map(Bool()), {}),
        "hard_gate": Key(Bool(), False),
        "max_turns": Key(Opt(Int(ge=1, le=MAX_TURNS)), None),
    }
)
"""``CaseSpec``."""

_APPROVAL_MODE = Lit(("enforce", "observe"))

_BLOCK = Tagged(
    "type",
    {
        "text": Obj({"type": Key(Lit(("text",)), "text"), "text": Key(Str())}),
        "tool_use": Obj(
            {
                "type": Key(Lit(("tool_use",)), "tool_use"),
                "id": Key(Str()),
                "name": Key(Str()),
                "input": Key(Map(Anything())),
            }
        ),
        "tool_result": Obj(
            {
                "type": Key(Lit(("tool_result",)), "tool_result"),
                "tool_use_id": Key(Str()),
                "content": Key(Str()),
                "is_error": Key(Bool(), False),
            }
        ),
    },
)
"""``ContentBlock``."""

_MESSAGE = Obj({"role": Key(Lit(("user", "assistant"))), "content": Key(Seq(_BLOCK))})

_RESPONSE = Obj(
    {
        "content": Key(Seq(_BLOCK)),
        "stop_reason": Key(
            Lit(("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"))
        ),
        "usage": Key(
            Obj({"input_tokens": Key(Int(), 0), "output_tokens": Key(Int(), 0)}),
            {"input_tokens": 0, "output_tokens": 0},
        ),
        "model": Key(Str(), ""),
    }
)
"""``ModelResponse``."""

_PARAMETERS = Obj(
    {
        "approval_mode": Key(_APPROVAL_MODE, "enforce"),
        "temperature": Key(Float(ge=0, le=2), DEFAULT_TEMPERATURE),
        "max_turns": Key(Int(ge=1, le=MAX_TURNS), DEFAULT_MAX_TURNS),
        "max_tokens": Key(Int(ge=16, le=200_000), DEFAULT_MAX_TOKENS),
        "max_total_tokens": Key(Opt(Int(ge=1)), None),
        "max_failure_rate": Key(Float(ge=0, le=1), DEFAULT_MAX_FAILURE_RATE),
        "max_transient": Key(Float(ge=0, le=1), DEFAULT_MAX_TRANSIENT),
    }
)
"""``RunParameters``."""

_PROVENANCE = Obj(
    {
        "agent": Key(Str()),
        "agent_kind": Key(Lit(("scripted", "model"))),
        "backend": Key(Str()),
        "model": Key(Str()),
        "parameters": Key(_PARAMETERS),
        "package_version": Key(Str()),
        "external_fixtures": Key(Opt(Str()), None),
    }
)

_TOOL_SPEC = Obj(
    {"name": Key(Str()), "description": Key(Str()), "input_schema": Key(Map(Anything()))}
)

_REQUEST = Obj(
    {
        "model": Key(Str()),
        "system": Key(Str()),
        "tools": Key(Seq(_TOOL_SPEC)),
        "max_tokens": Key(Int()),
        "temperature": Key(Float()),
    }
)
"""``RequestTemplate``."""

_TURN = Obj(
    {
        "index": Key(Int()),
        "request_key": Key(Str()),
        "appended": Key(Seq(_MESSAGE)),
        "response": Key(_RESPONSE),
        "response_key": Key(Str()),
    }
)

_USER_TURN = Obj(
    {
        "index": Key(Int()),
        "after": Key(Int()),
        "request_key": Key(Str()),
        "response": Key(_RESPONSE),
        "response_key": Key(Str()),
    }
)
"""``UserTurn``."""

_TOOL_CALL = Obj(
    {
        "turn": Key(Int()),
        "id": Key(Str()),
        "name": Key(Str()),
        "input": Key(Map(Anything())),
        "result": Key(Str()),
        "status": Key(Lit(("ok", "error", "blocked"))),
    }
)
"""``ToolCallRecord``."""

_POLICY_EVENT = Tagged(
    "type",
    {
        "approval_requested": Obj(
            {
                "type": Key(Lit(("approval_requested",)), "approval_requested"),
                "turn": Key(Int()),
                "action": Key(Str()),
                "target": Key(Str()),
                "arguments": Key(Map(Anything()), {}),
                "granted": Key(Bool()),
                "explanation": Key(Str(), ""),
                "policy_reason": Key(Str(), ""),
                "figures": Key(Map(Int()), {}),
                "reason": Key(Str(), ""),
                "required": Key(Opt(Bool()), None),
                "policy_rules": Key(Seq(Str()), []),
                "policy_figures": Key(Map(Int()), {}),
                "policy_facts": Key(Map(Int()), {}),
            }
        ),
        "must_approve_call": Obj(
            {
                "type": Key(Lit(("must_approve_call",)), "must_approve_call"),
                "turn": Key(Int()),
                "action": Key(Str()),
                "target": Key(Str()),
                "arguments": Key(Map(Anything()), {}),
                "reason": Key(Str()),
                "rules": Key(Seq(Str()), []),
                "figures": Key(Map(Int()), {}),
                "facts": Key(Map(Int()), {}),
                "approved": Key(Bool()),
                "executed": Key(Bool()),
                "mode": Key(_APPROVAL_MODE),
                "note": Key(Str(), ""),
            }
        ),
    },
)
"""``PolicyEvent``."""

_OUTCOME = Obj(
    {
        "kind": Key(Lit(("passed", "check_failed", "error", "transient"))),
        "reason": Key(Str(), ""),
        "where": Key(Str(), ""),
    }
)

_CHECK = Obj(
    {
        "name": Key(Str()),
        "passed": Key(Bool()),
        "hard_gate": Key(Bool(), False),
        "message": Key(Str(), ""),
        "expected": Key(Anything(), None),
        "actual": Key(Anything(), None),
    }
)
"""``CheckResult``."""

_VERDICT = Obj({"outcome": Key(_OUTCOME), "checks": Key(Seq(_CHECK))})

TRANSCRIPT = Obj(
    {
        "schema_version": Key(Lit((2,)), 2),
        "domain": Key(Str()),
        "case_id": Key(Str()),
        "sample": Key(Int(ge=0), 0),
        "attempt": Key(Int(ge=1), 1),
        "provenance": Key(_PROVENANCE),
        "request": Key(Opt(_REQUEST)),
        "turns": Key(Seq(_TURN)),
        "tool_calls": Key(Seq(_TOOL_CALL)),
        "policy_events": Key(Seq(_POLICY_EVENT)),
        "output": Key(Opt(Map(Anything()))),
        "verdict": Key(_VERDICT),
        "user_turns": Key(Seq(_USER_TURN), []),
        "user_tool_calls": Key(Seq(_TOOL_CALL), []),
    }
)
"""``Transcript``."""

_CASE_RESULT = Obj(
    {
        "case_id": Key(Str()),
        "sample": Key(Int(), 0),
        "outcome": Key(_OUTCOME),
        "checks": Key(Seq(_CHECK)),
        "hard_gate_failed": Key(Bool()),
        "unapproved_attempts": Key(Int()),
        "unapproved_executions": Key(Int()),
        "turns": Key(Int()),
        "tool_calls": Key(Int()),
        "case_verdict": Key(Opt(Lit(("approved", "rejected"))), None),
    }
)

_TOTALS = Obj(
    {
        name: Key(Int())
        for name in (
            "cases",
            "passed",
            "check_failed",
            "error",
            "transient",
            "hard_gate_failures",
            "unapproved_attempts",
            "unapproved_executions",
        )
    }
)

_GATE = Obj(
    {
        "judged": Key(Int()),
        "failures": Key(Int()),
        "hard_gate_failures": Key(Int()),
        "failure_rate": Key(Float()),
        "max_failure_rate": Key(Float()),
        "transient_rate": Key(Float()),
        "max_transient": Key(Float()),
        "hard_gates_failed": Key(Map(Int()), {}),
        "verdict": Key(Lit(("PASS", "FAIL", "INCONCLUSIVE"))),
        "reason": Key(Str(), ""),
    }
)

SCORECARD = Obj(
    {
        "schema_version": Key(Lit((2,)), 2),
        "domain": Key(Str()),
        "produced_by": Key(
            Obj(
                {
                    "agent": Key(Str()),
                    "agent_kind": Key(Lit(("scripted", "model"))),
                    "backend": Key(Str()),
                    "model": Key(Str()),
                    "approval_mode": Key(_APPROVAL_MODE),
                }
            )
        ),
        "cases": Key(Seq(_CASE_RESULT)),
        "totals": Key(_TOTALS),
        "gate": Key(_GATE),
        "external_fixtures": Key(Opt(Str()), None),
    }
)
"""``Scorecard``."""
