"""A sample's transcript turn by turn, for the viewer's sample page.

Each turn shows what the harness sent (the task, tool results pretty-printed when they are JSON),
then the model's reply (its text, its tool calls with their arguments), each call marked with
what came of it: executed, an error, or blocked by the approval checkpoint; then the approval
events (what the agent attempted and what actually executed) and the submitted output. Every
piece of text goes through :func:`agentic_eval.report.escape.html_text`.
"""

from __future__ import annotations

import json
from typing import Any

from agentic_eval.core.messages import ContentBlock, TextBlock, ToolResultBlock, ToolUseBlock
from agentic_eval.core.results import ApprovalRequested, MustApproveCall, PolicyEvent
from agentic_eval.core.transcript import Transcript, Turn
from agentic_eval.report.escape import html_text

MAX_CHARS = 20_000
"""Longer texts are cut on the page (the store or the transcript file holds them whole)."""
_STATUS = {"ok": "executed", "error": "error", "blocked": "BLOCKED by the approval checkpoint"}


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return f"{text[:MAX_CHARS]}... ({len(text) - MAX_CHARS} more characters)"


def pretty(value: Any) -> str:
    """JSON data indented for reading (keys sorted, non-ASCII kept)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def pretty_text(text: str) -> str:
    """``text`` indented when it is a JSON object or array, as it is otherwise."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return pretty(json.loads(stripped))
        except ValueError:
            pass
    return text


def _block(role: str, text: str, css: str, note: str = "") -> str:
    extra = f" <span class='status status-{css}'>{html_text(note)}</span>" if note else ""
    return (
        f"<div class='block'><span class='role role-{css}'>{html_text(role)}</span>{extra}"
        f"<pre>{html_text(_cut(text))}</pre></div>"
    )


def _content(b: ContentBlock, speaker: str, t: Transcript) -> str:
    calls = {c.id: c for c in t.tool_calls}
    if isinstance(b, TextBlock):
        return _block(speaker, b.text, "assistant" if speaker == "assistant" else "user")
    if isinstance(b, ToolResultBlock):
        call = calls.get(b.tool_use_id)
        name = f"tool result ({call.name})" if call else "tool result"
        status = call.status if call else ("error" if b.is_error else "ok")
        css = {"ok": "tool-result", "error": "tool-error", "blocked": "tool-blocked"}[status]
        return _block(name, pretty_text(b.content), css)
    assert isinstance(b, ToolUseBlock)
    call = calls.get(b.id)
    note = _STATUS[call.status] if call else "not run"
    css = "tool-call" if call is None or call.status == "ok" else f"tool-{call.status}"
    return _block(f"tool call {b.name}", pretty(b.input), css, note)


def _turn(turn: Turn, t: Transcript) -> str:
    usage = turn.response.usage
    head = (
        f"<div class='turn-head muted'>turn {turn.index} · {usage.input_tokens} input / "
        f"{usage.output_tokens} output tokens · stopped: {html_text(turn.response.stop_reason)}"
        "</div>"
    )
    sent = "".join(_content(b, m.role, t) for m in turn.appended for b in m.content)
    reply = "".join(_content(b, "assistant", t) for b in turn.response.content)
    return f"<li class='turn' value='{turn.index}'>{head}{sent}{reply}</li>"


def _event(e: PolicyEvent) -> str:
    if isinstance(e, ApprovalRequested):
        verdict = "granted" if e.granted else "denied"
        return (
            f"<tr data-event='approval_requested'><td>{e.turn}</td><td>asked approval</td>"
            f"<td><code>{html_text(e.action)}</code> on {html_text(e.target)}</td>"
            f"<td>{html_text(verdict)}</td><td>-</td>"
            f"<td>{html_text(e.reason or e.explanation)}</td></tr>"
        )
    assert isinstance(e, MustApproveCall)
    approved = "approved" if e.approved else "NOT approved"
    executed = "executed" if e.executed else "not executed"
    css = "bad" if e.executed and not e.approved else ""
    return (
        f"<tr data-event='must_approve_call' class='{css}'><td>{e.turn}</td>"
        f"<td>must-approve call</td><td><code>{html_text(e.action)}</code> on "
        f"{html_text(e.target)}</td><td>{html_text(approved)}</td><td>{html_text(executed)}</td>"
        f"<td>{html_text(e.reason)}{html_text(' (' + e.note + ')' if e.note else '')}</td></tr>"
    )


def transcript_html(t: Transcript) -> str:
    """The turns, the approval events and the output of a transcript."""
    out = [f"<ol class='turns' start='0'>{''.join(_turn(x, t) for x in t.turns)}</ol>"]
    if not t.turns:
        out = ["<p class='muted'>No model turn.</p>"]
    if t.policy_events:
        rows = "".join(_event(e) for e in t.policy_events)
        out.append(
            "<h3>Approval checkpoint: attempted and executed</h3><table class='policy'>"
            "<tr><th>turn</th><th>event</th><th>call</th><th>approval</th><th>executed</th>"
            f"<th>why</th></tr>{rows}</table>"
        )
    if t.output is not None:
        shown = html_text(_cut(pretty(t.output)))
        out.append(f"<h3>Submitted output</h3><pre class='output'>{shown}</pre>")
    return "".join(out)
