"""Inspect's log shapes, as plain JSON dicts built from our own values.

Each function returns one object of an Inspect eval log (inspect_ai's ``EvalLog`` schema,
version 2): a chat message, a tool call, a score, an event. Only the fields we have are written;
Inspect's reader fills its defaults for the rest. inspect_ai is never imported: the shapes follow
its pydantic models (``inspect_ai.log``, ``inspect_ai.model``, ``inspect_ai.event``), and a test
reads our files with Inspect's own reader.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentic_eval.core.model import ToolSpec
from agentic_eval.core.results import (
    ApprovalRequested,
    CheckResult,
    MustApproveCall,
    Outcome,
    PolicyEvent,
    ToolCallRecord,
)

Json = dict[str, Any]

LOG_VERSION = 2
"""The Inspect log schema version written (``EvalLog.version``)."""

PASSED_SCORE = "passed"
"""The score whose value is ``C`` exactly when the sample's outcome is ``passed``."""
CHECKS_SCORE = "checks"
"""The score holding every check's result (1 held, 0 failed), by check name."""

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "refusal": "content_filter",
    "other": "unknown",
}
"""Our stop reasons as Inspect's (``inspect_ai.model.StopReason``)."""


def iso(moment: datetime) -> str:
    """An aware datetime as Inspect writes one (ISO 8601 with its offset)."""
    return moment.isoformat()


def tool_call(block: ToolUseBlock) -> Json:
    """A tool call the model asked for (``inspect_ai.tool.ToolCall``)."""
    return {"id": block.id, "function": block.name, "arguments": block.input, "type": "function"}


def _text(blocks: list[TextBlock]) -> str:
    return "\n".join(b.text for b in blocks)


def tool_message(block: ToolResultBlock, names: dict[str, str], status: str | None) -> Json:
    """A tool result (``ChatMessageTool``); a failed or blocked call carries Inspect's error."""
    out: Json = {"role": "tool", "content": block.content, "tool_call_id": block.tool_use_id}
    if block.tool_use_id in names:
        out["function"] = names[block.tool_use_id]
    if block.is_error:
        kind = "approval" if status == "blocked" else "unknown"
        out["error"] = {"type": kind, "message": block.content}
    return out


def chat_messages(
    message: Message, names: dict[str, str], statuses: dict[str, str], model: str
) -> list[Json]:
    """One of our messages as Inspect chat messages: a user message's tool results become tool
    messages (one per result, first) and its text a user message; an assistant message keeps
    its text and its tool calls. ``names`` learns each call's tool, for its result."""
    texts = [b for b in message.content if isinstance(b, TextBlock)]
    if message.role == "assistant":
        calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
        for c in calls:
            names[c.id] = c.name
        out: Json = {"role": "assistant", "content": _text(texts), "source": "generate"}
        if calls:
            out["tool_calls"] = [tool_call(c) for c in calls]
        if model:
            out["model"] = model
        return [out]
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    messages = [tool_message(r, names, statuses.get(r.tool_use_id)) for r in results]
    if texts:
        messages.append({"role": "user", "content": _text(texts), "source": "input"})
    return messages


def tool_info(spec: ToolSpec) -> Json:
    """A tool offered to the model (``inspect_ai.tool.ToolInfo``)."""
    schema = spec.input_schema
    params: Json = {
        "type": "object",
        "properties": schema.get("properties", {}),
        "required": schema.get("required", []),
    }
    if isinstance(schema.get("additionalProperties"), bool):
        params["additionalProperties"] = schema["additionalProperties"]
    return {"name": spec.name, "description": spec.description, "parameters": params}


def passed_score(outcome: Outcome, checks: tuple[CheckResult, ...]) -> Json:
    """Our outcome as Inspect's ``Score``: ``C`` when passed, else ``I``; the answer is the
    outcome (passed, check_failed, error, transient), the explanation says why."""
    failed = [c.name for c in checks if not c.passed]
    if outcome.kind == "passed":
        why = f"every check held ({len(checks)})"
    else:
        why = outcome.reason or f"failed: {', '.join(failed)}"
    return {
        "value": "C" if outcome.kind == "passed" else "I",
        "answer": outcome.kind,
        "explanation": why,
        "metadata": {
            "where": outcome.where,
            "failed_checks": failed,
            "hard_gates_failed": [c.name for c in checks if c.hard_gate and not c.passed],
        },
    }


def checks_score(checks: tuple[CheckResult, ...]) -> Json:
    """Every check as one Inspect ``Score`` whose value maps check name to 1 (held) or 0."""
    return {
        "value": {c.name: 1 if c.passed else 0 for c in checks},
        "explanation": "\n".join(
            f"{'held' if c.passed else 'FAILED'}: {c.name}"
            + (" [hard gate]" if c.hard_gate else "")
            + (f" - {c.message}" if c.message else "")
            for c in checks
        ),
        "metadata": {
            c.name: {
                "hard_gate": c.hard_gate,
                "message": c.message,
                "expected": c.expected,
                "actual": c.actual,
            }
            for c in checks
            if not c.passed
        },
    }


def _base(kind: str, at: datetime) -> Json:
    return {"event": kind, "timestamp": iso(at), "working_start": 0.0}


def tool_event(call: ToolCallRecord, at: datetime) -> Json:
    """A tool call and its result (``ToolEvent``); blocked calls carry an approval error."""
    out = _base("tool", at) | {
        "type": "function",
        "id": call.id,
        "function": call.name,
        "arguments": call.input,
        "result": call.result,
        "completed": iso(at),
    }
    if call.status != "ok":
        kind = "approval" if call.status == "blocked" else "unknown"
        out["error"] = {"type": kind, "message": call.result}
    return out


def approval_event(event: PolicyEvent, call_id: str, at: datetime) -> Json:
    """One approval checkpoint event as Inspect's ``ApprovalEvent``.

    An approval the agent asked for is decided by the approver (approve or reject). A
    must-approve call is decided by the checkpoint: ``approve`` when a granted approval covered
    it, ``reject`` when it was blocked, and, in observe mode, ``escalate`` for an unapproved
    call that executed (the checkpoint let it through and reported it). The metadata holds the
    whole event as we recorded it.
    """
    meta = event.model_dump(mode="json")
    call = {"id": call_id, "function": event.action, "arguments": event.arguments}
    if isinstance(event, ApprovalRequested):
        return _base("approval", at) | {
            "message": event.reason or f"approve {event.action} on {event.target}",
            "call": call,
            "approver": "approver",
            "decision": "approve" if event.granted else "reject",
            "explanation": event.explanation or None,
            "metadata": meta,
        }
    assert isinstance(event, MustApproveCall)
    decision = "approve" if event.approved else ("escalate" if event.executed else "reject")
    return _base("approval", at) | {
        "message": f"{event.action} on {event.target} must be approved: {event.reason}",
        "call": call,
        "approver": f"checkpoint ({event.mode})",
        "decision": decision,
        "explanation": event.note
        or ("covered by a granted approval" if event.approved else "no approval covered it"),
        "metadata": meta,
    }


def canonical(value: Any) -> str:
    """Canonical JSON of a value (the final output, as the completion's text)."""
    return canonical_json(value)
