"""Our run as an Inspect eval log: one sample per stored sample (case x epoch), its messages,
model, tool and approval events, our checks as scores, the gate as metadata."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from agentic_eval._version import __version__
from agentic_eval.agent.tools import REQUEST_APPROVAL_TOOL
from agentic_eval.core.results import ApprovalRequested, PolicyEvent, ToolCallRecord
from agentic_eval.core.transcript import Transcript
from agentic_eval.exports.inspect.model import (
    CHECKS_SCORE,
    LOG_VERSION,
    PASSED_SCORE,
    STOP_REASONS,
    Json,
    approval_event,
    canonical,
    chat_messages,
    checks_score,
    iso,
    passed_score,
    tool_event,
    tool_info,
)
from agentic_eval.exports.inspect.source import StoredRun, StoredSample, utc

STATUS = {"finished": "success", "interrupted": "cancelled", "running": "started"}
"""Our run status as Inspect's ``EvalStatus`` (anything else, e.g. abandoned: ``error``)."""


@dataclass(frozen=True)
class InspectLog:
    """An Inspect eval log in parts, as the ``.eval`` zip stores them: the header (the log
    without samples), the samples, and one summary per sample."""

    header: Json
    samples: tuple[Json, ...]
    summaries: tuple[Json, ...]

    def whole(self) -> Json:
        """The log with its samples: the ``.json`` format."""
        return self.header | {"samples": list(self.samples)}


def sample_id(s: StoredSample) -> str:
    """The Inspect sample id: the case id, with the attempt past the first (workflow steps)."""
    r = s.row
    return r.case_id if r.attempt == 1 else f"{r.case_id}#{r.attempt}"


def _model_name(s: StoredRun) -> str:
    return f"{s.run.backend}/{s.run.model}"


def _call_ids(t: Transcript) -> list[str]:
    """The id of the tool call each policy event is about (matched by turn and tool, in order;
    empty when none matches)."""
    used: set[str] = set()
    ids: list[str] = []
    for e in t.policy_events:
        tool = REQUEST_APPROVAL_TOOL if isinstance(e, ApprovalRequested) else e.action
        matching = (c.id for c in t.tool_calls if c.turn == e.turn and c.name == tool)
        found = next((i for i in matching if i not in used), "")
        used.add(found)
        ids.append(found)
    return ids


def _conversation(t: Transcript, model: str) -> tuple[list[Json], list[int]]:
    """Every message as Inspect's, and where each turn's reply sits among them (the turn's
    model input is every message before it)."""
    names: dict[str, str] = {}
    statuses = {c.id: c.status for c in t.tool_calls}
    out: list[Json] = []
    replies: list[int] = []
    if t.request is not None:
        out.append({"role": "system", "content": t.request.system, "source": "input"})
    for turn in t.turns:
        for m in turn.appended:
            out.extend(chat_messages(m, names, statuses, ""))
        replies.append(len(out))
        out.extend(chat_messages(turn.response.message(), names, statuses, model))
    return out, replies


def _input(t: Transcript) -> str:
    """The task as the agent was first given it (the case id when there was no turn)."""
    first = next((m.text() for turn in t.turns[:1] for m in turn.appended if m.role == "user"), "")
    return first or t.case_id


def _events(
    s: StoredSample, model: str, started: datetime, messages: list[Json], replies: list[int]
) -> list[Json]:
    t = s.transcript
    events: list[Json] = [
        {
            "event": "sample_init",
            "timestamp": iso(started),
            "working_start": 0.0,
            "sample": {"id": sample_id(s), "input": _input(t), "target": ""},
        }
    ]
    tools = [] if t.request is None else [tool_info(spec) for spec in t.request.tools]
    config: Json = (
        {}
        if t.request is None
        else {"max_tokens": t.request.max_tokens, "temperature": t.request.temperature}
    )
    policy: dict[int, list[tuple[PolicyEvent, str]]] = {}
    for e, call_id in zip(t.policy_events, _call_ids(t), strict=True):
        policy.setdefault(e.turn, []).append((e, call_id))
    calls: dict[int, list[ToolCallRecord]] = {}
    for c in t.tool_calls:
        calls.setdefault(c.turn, []).append(c)
    for turn, at in zip(t.turns, replies, strict=True):
        reply = messages[at]
        r = turn.response
        usage = {
            "input_tokens": r.usage.input_tokens,
            "output_tokens": r.usage.output_tokens,
            "total_tokens": r.usage.input_tokens + r.usage.output_tokens,
        }
        events.append(
            {
                "event": "model",
                "timestamp": iso(started),
                "working_start": 0.0,
                "model": model,
                "input": messages[:at],
                "tools": tools,
                "tool_choice": "auto",
                "config": config,
                "output": {
                    "model": r.model or model,
                    "choices": [{"message": reply, "stop_reason": STOP_REASONS[r.stop_reason]}],
                    "completion": reply["content"],
                    "usage": usage,
                },
            }
        )
        events.extend(approval_event(e, cid, started) for e, cid in policy.get(turn.index, []))
        events.extend(tool_event(c, started) for c in calls.get(turn.index, []))
    score = passed_score(s.outcome, s.checks)
    events.append(
        {
            "event": "score",
            "timestamp": iso(started),
            "working_start": 0.0,
            "score": score,
            "target": "",
            "intermediate": False,
            "scorer": PASSED_SCORE,
        }
    )
    return events


def _sample_metadata(s: StoredSample) -> Json:
    r = s.row
    meta: Json = {
        "case_id": r.case_id,
        "epoch": r.sample,
        "attempt": r.attempt,
        "outcome": s.outcome.kind,
        "hard_gate_failed": r.hard_gate_failed,
        "unapproved_attempts": r.unapproved_attempts,
        "unapproved_executions": r.unapproved_executions,
        "approval_events": len(s.transcript.policy_events),
        "transcript": s.source,
    }
    if r.case_verdict is not None:
        meta |= {"case_verdict": r.case_verdict, "source_job_id": r.source_job_id}
    return meta


def _sample(s: StoredSample, model: str, when: datetime) -> tuple[Json, Json]:
    """The sample and its summary."""
    r, t = s.row, s.transcript
    started = utc(r.started_at) or when
    finished = utc(r.finished_at) or started
    messages, replies = _conversation(t, model)
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    completion = canonical(t.output) if t.output is not None else (last or {}).get("content", "")
    scores = {PASSED_SCORE: passed_score(s.outcome, s.checks), CHECKS_SCORE: checks_score(s.checks)}
    usage = {
        model: {
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
            "total_tokens": r.input_tokens + r.output_tokens,
        }
    }
    common: Json = {
        "id": sample_id(s),
        "epoch": r.sample + 1,
        "input": _input(t),
        "target": "",
        "metadata": _sample_metadata(s),
        "scores": scores,
        "model_usage": usage,
        "started_at": iso(started),
        "completed_at": iso(finished),
        "total_time": round(r.duration_ms / 1000, 6),
        "working_time": round(r.duration_ms / 1000, 6),
        "uuid": f"{r.run_id}-{r.id}",
    }
    sample = common | {
        "messages": messages,
        "output": {
            "model": model,
            "choices": [] if last is None else [{"message": last, "stop_reason": "stop"}],
            "completion": completion,
        },
        "events": _events(s, model, started, messages, replies),
    }
    summary = common | {"completed": True, "message_count": len(messages)}
    return sample, summary


def _gate(s: StoredRun) -> Json:
    return s.gate.model_dump(mode="json")


def build_log(s: StoredRun) -> InspectLog:
    """The Inspect eval log of a stored run."""
    run = s.run
    model = _model_name(s)
    created = utc(run.started_at) or datetime.now(UTC)
    finished = utc(run.finished_at)
    pairs = [_sample(x, model, created) for x in s.samples]
    n = len(s.samples)
    passed = sum(1 for x in s.samples if x.outcome.kind == "passed")
    epochs = max((x.row.sample + 1 for x in s.samples), default=1)
    ids = sorted({sample_id(x) for x in s.samples})
    p = s.parameters
    ours: Json = {
        "run_id": run.id,
        "suite": run.domain,
        "agent": run.agent,
        "agent_kind": run.agent_kind,
        "backend": run.backend,
        "mode": run.mode,
        "approval_mode": run.approval_mode,
        "status": run.status,
        "gate": _gate(s),
        "unapproved_attempts": sum(x.row.unapproved_attempts for x in s.samples),
        "unapproved_executions": sum(x.row.unapproved_executions for x in s.samples),
    }
    header: Json = {
        "version": LOG_VERSION,
        "status": STATUS.get(run.status, "error"),
        "eval": {
            "eval_id": run.id,
            "run_id": run.id,
            "created": iso(created),
            "task": run.domain,
            "task_id": f"{run.domain}/{run.agent}",
            "task_version": 0,
            "task_display_name": f"{run.domain} ({run.agent})",
            "solver": run.agent,
            "tags": ["agentic-eval", run.mode],
            "dataset": {"name": run.domain, "samples": len(ids), "sample_ids": ids},
            "model": model,
            "model_generate_config": {"max_tokens": p.max_tokens, "temperature": p.temperature},
            "config": {"epochs": epochs, "turn_limit": p.max_turns},
            "packages": {"agentic-eval": run.package_version},
            "metadata": {"agentic_eval": ours},
            "scorers": [{"name": PASSED_SCORE}, {"name": CHECKS_SCORE}],
        },
        "plan": {"name": "plan", "steps": [{"solver": run.agent, "params": {}}]},
        "results": {
            "total_samples": n,
            "completed_samples": n,
            "scores": [
                {
                    "name": PASSED_SCORE,
                    "scorer": PASSED_SCORE,
                    "scored_samples": n,
                    "unscored_samples": 0,
                    "params": {},
                    "metrics": {
                        "accuracy": {
                            "name": "accuracy",
                            "value": passed / n if n else 0.0,
                            "params": {},
                        },
                        "passed": {"name": "passed", "value": passed, "params": {}},
                    },
                }
            ],
            "metadata": {"gate": _gate(s)},
        },
        "stats": {
            "started_at": iso(created),
            "completed_at": iso(finished) if finished is not None else "",
            "model_usage": {
                model: {
                    "input_tokens": sum(x.row.input_tokens for x in s.samples),
                    "output_tokens": sum(x.row.output_tokens for x in s.samples),
                    "total_tokens": sum(
                        x.row.input_tokens + x.row.output_tokens for x in s.samples
                    ),
                }
            },
        },
        "tags": ["agentic-eval"],
        "metadata": {"agentic_eval": {"exported_by": __version__, "gate": _gate(s)}},
    }
    return InspectLog(
        header=header,
        samples=tuple(p[0] for p in pairs),
        summaries=tuple(p[1] for p in pairs),
    )
