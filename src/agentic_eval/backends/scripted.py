"""Scripted agents: deterministic Python that answers the conversation the way a model would.

A scripted agent is a generator function. It receives an :class:`AgentTask`, yields tool calls
(one :class:`Call` or a list of them for one turn), receives the results of each turn as a list
of :class:`ToolReply`, and finally yields :class:`Submit`. The backend re-runs the generator over
the conversation for every request, so it holds no state between calls: replaying a scripted
agent's recording is exactly like replaying a model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from agentic_eval.backends.base import BackendError, BackendInfo, CallContext, ModelBackend
from agentic_eval.core.messages import ToolUseBlock
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.task import parse_task_inputs


@dataclass(frozen=True)
class AgentTask:
    """What a scripted agent sees of the case: the task text and its parsed inputs."""

    text: str
    inputs: dict[str, Any]
    tool_names: tuple[str, ...]


@dataclass(frozen=True)
class Call:
    """Call a tool."""

    name: str
    input: dict[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True)
class Submit:
    """Submit the final answer (the ``submit`` tool's input)."""

    output: dict[str, Any]


@dataclass(frozen=True)
class ToolReply:
    """The result of one tool call, parsed from JSON when it is JSON."""

    name: str
    input: dict[str, Any]
    ok: bool
    data: Any
    text: str


Action = Call | list[Call] | Submit
ScriptedAgent = Callable[[AgentTask], Generator[Action, list[ToolReply], None]]
"""A scripted agent: ``def agent(task): replies = yield Call(...); ...; yield Submit({...})``."""


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _replies_by_turn(request: ModelRequest) -> list[list[ToolReply]]:
    """Group the conversation's tool results by the assistant turn that made the calls."""
    calls: dict[str, ToolUseBlock] = {}
    turns: list[list[ToolReply]] = []
    for message in request.messages[1:]:
        if message.role == "assistant":
            for use in message.tool_uses():
                calls[use.id] = use
            continue
        replies: list[ToolReply] = []
        for result in message.tool_results():
            use = calls.get(result.tool_use_id)
            name, args = (use.name, use.input) if use else ("?", {})
            replies.append(
                ToolReply(
                    name=name,
                    input=args,
                    ok=not result.is_error,
                    data=_parse(result.content),
                    text=result.content,
                )
            )
        turns.append(replies)
    return turns


def respond(agent: ScriptedAgent, request: ModelRequest) -> ModelResponse:
    """The scripted agent's next response to ``request`` (pure function of the conversation).

    Raises:
        BackendError: When the agent ends without submitting.
    """
    first = request.messages[0].text() if request.messages else ""
    task = AgentTask(
        text=first,
        inputs=parse_task_inputs(first),
        tool_names=tuple(t.name for t in request.tools),
    )
    gen = agent(task)
    turn = 0
    try:
        action = next(gen)
        for replies in _replies_by_turn(request):
            turn += 1
            action = gen.send(replies)
    except StopIteration:
        raise BackendError("scripted agent stopped without submitting") from None
    finally:
        gen.close()
    if isinstance(action, Submit):
        uses = [ToolUseBlock(id=f"call_{turn}_0", name="submit", input=action.output)]
    else:
        calls = action if isinstance(action, list) else [action]
        uses = [
            ToolUseBlock(id=f"call_{turn}_{i}", name=c.name, input=c.input)
            for i, c in enumerate(calls)
        ]
    return ModelResponse(content=tuple(uses), stop_reason="tool_use", model=request.model)


class ScriptedBackend(ModelBackend):
    """Answers with a scripted agent."""

    def __init__(self, name: str, agent: ScriptedAgent) -> None:
        self.name = name
        self.agent = agent

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """The agent's next move given the conversation so far."""
        del call
        return respond(self.agent, request)

    def info(self) -> BackendInfo:
        """Scripted agents are labelled as such, never as a model."""
        return BackendInfo(
            backend="scripted",
            model=f"scripted:{self.name}",
            agent=self.name,
            agent_kind="scripted",
        )
