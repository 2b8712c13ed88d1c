"""Scripted agents: deterministic Python that answers the conversation the way a model would.

A scripted agent is a generator function. It receives an :class:`AgentTask`, yields tool calls
(one :class:`Call` or a list of them for one turn), receives the results of each turn as a list
of :class:`ToolReply`, and finally yields :class:`Submit`. In a conversation with a simulated
user it may also yield :class:`Say` (a reply of text alone, to the user): the user's answer comes
back as one :class:`ToolReply` named :data:`USER` whose ``text`` is what the user said. Its
answer is a pure function of the conversation (:func:`respond` re-runs the generator over it),
so replaying a scripted agent's recording is exactly like replaying a model's.
:class:`ScriptedBackend` gets the same answers faster: when a request extends the very
conversation it answered last for that sample (the same message objects, then the turn's new
messages), it resumes that sample's generator with the new results instead of re-running it from
the start; any other request is answered by a re-run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_eval.backends.base import BackendError, BackendInfo, CallContext, ModelBackend
from agentic_eval.core.defaults import SUBMIT_TOOL
from agentic_eval.core.messages import Message, TextBlock, ToolUseBlock, trusted
from agentic_eval.core.model import ModelRequest, ModelResponse, ToolSpec, Usage
from agentic_eval.core.task import parse_task_inputs


@dataclass(frozen=True)
class AgentTask:
    """What a scripted agent sees of the case: the task text and its parsed inputs."""

    text: str
    inputs: dict[str, Any]
    tool_names: tuple[str, ...]
    case_id: str = ""
    """The case being run (scripted agents may look up what they know about it)."""


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
class Say:
    """Reply with text alone: said to the simulated user of a conversation (with no user, the
    harness answers with its nudge to submit)."""

    text: str


USER = "user"
"""The :attr:`ToolReply.name` of the user's answer to a :class:`Say`."""


@dataclass(frozen=True)
class ToolReply:
    """The result of one tool call, parsed from JSON when it is JSON."""

    name: str
    input: dict[str, Any]
    ok: bool
    data: Any
    text: str

    @classmethod
    def read_on_use(cls, name: str, input: dict[str, Any], ok: bool, text: str) -> ToolReply:
        """A reply whose ``data`` is parsed from ``text`` when first read: many agents read a
        result's text only (or keep what they read of it by its text), so only those that
        look pay for the parse."""
        reply = cls.__new__(cls)
        for attr, value in (("name", name), ("input", input), ("ok", ok), ("text", text)):
            object.__setattr__(reply, attr, value)
        return reply

    def __getattr__(self, attr: str) -> Any:
        # called only when normal lookup fails: ``data`` of a reply made by read_on_use,
        # before it is first read
        if attr != "data":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
        data = _parse(self.text)
        object.__setattr__(self, "data", data)
        return data


Action = Call | list[Call] | Submit | Say
ScriptedAgent = Callable[[AgentTask], Generator[Action, list[ToolReply], None]]
"""A scripted agent: ``def agent(task): replies = yield Call(...); ...; yield Submit({...})``."""


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _replies_by_turn(
    messages: Sequence[Message], calls: dict[str, ToolUseBlock]
) -> list[list[ToolReply]]:
    """Group the tool results of ``messages`` (the conversation past its task message, or the
    part of it past what ``calls`` has seen) by the assistant turn that made the calls;
    ``calls`` collects the calls by id as they are met."""
    turns: list[list[ToolReply]] = []
    for message in messages:
        if message.role == "assistant":
            for use in message.tool_uses():
                calls[use.id] = use
            continue
        replies: list[ToolReply] = []
        results = message.tool_results()
        if not results:  # a reply of text alone: the user's answer
            text = message.text()
            turns.append([ToolReply(name=USER, input={}, ok=True, data=text, text=text)])
            continue
        for result in results:
            use = calls.get(result.tool_use_id)
            name, args = (use.name, use.input) if use else ("?", {})
            reply = ToolReply.read_on_use(name, args, not result.is_error, result.content)
            replies.append(reply)
        turns.append(replies)
    return turns


_NO_USAGE = Usage()
"""A scripted agent's usage (frozen: one for every response)."""


@dataclass
class _Session:
    """A scripted agent's generator part-way through one conversation."""

    gen: Generator[Action, list[ToolReply], None]
    action: Action
    """What the generator yielded last."""
    tools: tuple[ToolSpec, ...]
    """The tools of the request that started it (the agent saw their names)."""
    seen: tuple[Message, ...] = ()
    """The messages of the last request it was advanced over."""
    calls: dict[str, ToolUseBlock] = field(default_factory=lambda: {})
    """The calls met so far, by id."""
    turn: int = 0
    """Turns of replies sent into it."""

    def advance(self, messages: Sequence[Message]) -> None:
        """Send the replies of each turn in ``messages`` into the generator.

        Raises:
            BackendError: When the agent ends without submitting (the generator is closed).
        """
        try:
            for replies in _replies_by_turn(messages, self.calls):
                self.turn += 1
                self.action = self.gen.send(replies)
        except StopIteration:
            self.gen.close()
            raise _stopped(self.tools) from None
        except BaseException:
            self.gen.close()
            raise

    def response(self, model: str) -> ModelResponse:
        """The response answering the conversation advanced so far."""
        action, turn = self.action, self.turn
        if isinstance(action, Say):
            text = TextBlock(text=action.text)
            return ModelResponse(content=(text,), stop_reason="end_turn", model=model)
        if isinstance(action, Submit):
            uses = [ToolUseBlock(id=f"call_{turn}_0", name="submit", input=action.output)]
        else:
            calls = action if isinstance(action, list) else [action]
            uses = [
                ToolUseBlock(id=f"call_{turn}_{i}", name=c.name, input=c.input)
                for i, c in enumerate(calls)
            ]
        if type(model) is not str:  # pragma: no cover - a request's model is a str
            return ModelResponse(content=tuple(uses), stop_reason="tool_use", model=model)
        # The blocks were just validated and the rest is fixed: what the constructor would
        # build, without validating the blocks again (which costs more than making them).
        return trusted(
            ModelResponse,
            {"content": tuple(uses), "stop_reason": "tool_use", "usage": _NO_USAGE, "model": model},
            {"content", "stop_reason", "model"},  # usage left to its default
        )


def _stopped(tools: tuple[ToolSpec, ...]) -> BackendError:
    """The error of a scripted agent whose generator ended while the episode went on."""
    if any(t.name == SUBMIT_TOOL for t in tools):
        return BackendError("scripted agent stopped without submitting")
    return BackendError("scripted agent stopped before the episode ended (its generator returned)")


def _start(agent: ScriptedAgent, request: ModelRequest, case_id: str = "") -> _Session:
    """A fresh generator of ``agent`` over ``request``'s task, at its first action."""
    first = request.messages[0].text() if request.messages else ""
    task = AgentTask(
        text=first,
        inputs=parse_task_inputs(first),
        tool_names=tuple(t.name for t in request.tools),
        case_id=case_id,
    )
    gen = agent(task)
    try:
        action = next(gen)
    except StopIteration:
        gen.close()
        raise _stopped(request.tools) from None
    except BaseException:
        gen.close()
        raise
    return _Session(gen, action, request.tools, request.messages[:1])


def respond(agent: ScriptedAgent, request: ModelRequest, case_id: str = "") -> ModelResponse:
    """The scripted agent's next response to ``request`` (pure function of the conversation
    and the case id).

    Raises:
        BackendError: When the agent ends without submitting.
    """
    session = _start(agent, request, case_id)
    session.advance(request.messages[1:])
    session.gen.close()
    return session.response(request.model)


def _extends(messages: tuple[Message, ...], seen: tuple[Message, ...]) -> bool:
    """Whether ``messages`` starts with the very message objects of ``seen``."""
    if len(messages) < len(seen):
        return False
    return all(now is was for now, was in zip(messages, seen, strict=False))


MAX_SESSIONS = 64
"""Conversations a :class:`ScriptedBackend` keeps a generator for (a sample that ended without
submitting leaves one behind; the oldest is closed first)."""


class ScriptedBackend(ModelBackend):
    """Answers with a scripted agent, resuming each sample's generator turn by turn."""

    def __init__(self, name: str, agent: ScriptedAgent) -> None:
        self.name = name
        self.agent = agent
        self._sessions: dict[tuple[str, str, int, int], _Session] = {}

    async def start_case(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> None:
        """A sample starts: any generator left from an earlier run of it is closed."""
        session = self._sessions.pop((domain, case_id, sample, attempt), None)
        if session is not None:
            session.gen.close()

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """The agent's next move given the conversation so far: :func:`respond`'s answer."""
        key = (call.domain, call.case_id, call.sample, call.attempt)
        session = self._sessions.pop(key, None)
        messages = request.messages
        if (
            session is not None
            and session.tools is request.tools
            and len(session.seen) > 0
            and _extends(messages, session.seen)
        ):
            session.advance(messages[len(session.seen) :])
        else:
            if session is not None:
                session.gen.close()
            session = _start(self.agent, request, call.case_id)
            session.advance(messages[1:])
        response = session.response(request.model)
        if isinstance(session.action, Submit):
            session.gen.close()
        else:
            session.seen = messages
            self._sessions[key] = session
            if len(self._sessions) > MAX_SESSIONS:
                oldest = next(iter(self._sessions))
                self._sessions.pop(oldest).gen.close()
        return response

    async def aclose(self) -> None:
        """Close the generators of conversations that never submitted."""
        sessions, self._sessions = self._sessions, {}
        for session in sessions.values():
            session.gen.close()

    def info(self) -> BackendInfo:
        """Scripted agents are labelled as such, never as a model."""
        return BackendInfo(
            backend="scripted",
            model=f"scripted:{self.name}",
            agent=self.name,
            agent_kind="scripted",
        )
