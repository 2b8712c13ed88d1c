"""The simulated user: the third participant of a conversation (beside the agent and its tools).

A domain (or one of its cases) may declare a :class:`SimulatedUser`: what the user wants, knows
and will accept (its ``instructions``) and who plays it: a scripted function of the dialogue
(deterministic, like a scripted agent) or a model behind any provider's backend, with its own
model name and prompt. The user opens the conversation; from then on every reply of the agent
that holds text and no tool call goes to the user, whose answer is the agent's next message. The
user ends the conversation by saying :data:`STOP` (tau-bench's signal).

Each user turn is a model call like the agent's: a request (the user's system prompt and the
dialogue seen from the user's side, agent lines as the other party's) and a response. The loop
records both in the transcript (``user_turns``), so a replay serves them keyless, and a replay
that asks for a user turn the recording does not hold, or whose request differs, names the case,
the user turn and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from agentic_eval.backends.base import BackendError, BackendInfo, CallContext, ModelBackend
from agentic_eval.backends.scripted import Call, ToolReply
from agentic_eval.core.messages import Message, TextBlock, ToolUseBlock, trusted
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.results import Utterance
from agentic_eval.core.text import exception_text
from agentic_eval.core.transcript import USER_STOP

STOP = USER_STOP
"""A user reply holding this ends the conversation (the rest of the reply is still said)."""
OPENING = "Hi! How can I help you today?"
"""What the agent's side says before the user's first turn (the user sees it; the agent under
test does not: its first message is the user's opening)."""

USER_PROMPT = """You are a user talking to a customer service agent. Your instructions:

{instructions}

Rules:
- Say one message at a time, as the user, in plain language; never act as the agent.
- Only give information the instructions hold, and only when it is asked for or needed.
- Do not invent details. If the agent asks something the instructions do not cover, say you \
do not know.
- When what you wanted is done, or cannot be done, end the conversation by writing {stop} on \
its own in your message."""


if TYPE_CHECKING:
    from agentic_eval.agent.tools import ToolRegistry


@dataclass(frozen=True)
class UserView:
    """What a scripted user sees when it is asked to speak."""

    case_id: str
    instructions: str
    dialogue: tuple[Utterance, ...]
    """Everything said so far, in order (empty for the opening)."""
    results: tuple[ToolReply, ...] = ()
    r"""The results of the user's own tool calls it made last, before this reply (a user with
    tools: it returned ``Call``\ s and now sees what they did)."""

    @property
    def last(self) -> str:
        """What the agent said last ("" for the opening)."""
        for u in reversed(self.dialogue):
            if u.speaker == "agent":
                return u.text
        return ""

    @property
    def turn(self) -> int:
        """How many times the user has spoken already (0: this is the opening)."""
        return sum(1 for u in self.dialogue if u.speaker == "user")


ScriptedUser = Callable[[UserView], "str | Call | list[Call]"]
"""A scripted user: ``def user(view) -> str``, its reply (holding :data:`STOP` to end); a user
with tools may return a :class:`~agentic_eval.backends.scripted.Call` (or a list) instead, and
is asked again with their results in ``view.results``."""


@dataclass(frozen=True)
class SimulatedUser:
    """The user of a conversation: instructions, and a script or a model to play it.

    Give exactly one of ``script`` (a :data:`ScriptedUser`) and ``backend`` (any
    :class:`~agentic_eval.backends.base.ModelBackend`: the anthropic or openai backend, the
    fake provider, a local model; ``model`` is the model name sent to it).
    """

    instructions: str
    script: ScriptedUser | None = None
    backend: ModelBackend | None = None
    model: str = ""
    name: str = "user"
    """Label of a scripted user (its requests name the model ``scripted-user:<name>``)."""
    prompt: str = USER_PROMPT
    """The user model's system prompt: ``{instructions}`` and ``{stop}`` are filled in."""
    max_tokens: int = 1024
    temperature: float = 0.0
    tools: ToolRegistry[Any] | None = None
    """The user's own tools (tau2-bench's dual control): they act on the case's environment,
    which the agent's tools share; the user may call them before each reply. Their calls are
    in the transcript's ``user_tool_calls`` and in ``ctx.user_tool_calls`` for the checks."""

    def __post_init__(self) -> None:
        if (self.script is None) == (self.backend is None):
            raise ValueError("a SimulatedUser needs exactly one of script= and backend=")
        if self.backend is not None and not self.model:
            raise ValueError("a SimulatedUser played by a model needs model=")
        if self.script is not None and not callable(self.script):
            raise ValueError(
                f"a SimulatedUser's script= is called; got {type(self.script).__name__}"
            )
        if self.backend is not None and not callable(getattr(self.backend, "complete", None)):
            raise ValueError(
                f"a SimulatedUser's backend= is a ModelBackend; got {type(self.backend).__name__}"
            )
        from agentic_eval.agent.tools import ToolRegistry

        if self.tools is not None and not isinstance(self.tools, ToolRegistry):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(
                f"a SimulatedUser's tools= is a ToolRegistry; got {type(self.tools).__name__}"
            )

    def model_name(self) -> str:
        """The model name of the user's requests."""
        return self.model if self.backend is not None else f"scripted-user:{self.name}"

    def system(self) -> str:
        """The user's system prompt."""
        return self.prompt.replace("{instructions}", self.instructions).replace("{stop}", STOP)

    def make_backend(self) -> ModelBackend:
        """Who answers the user's turns (before a replay takes them over)."""
        if self.backend is not None:
            return self.backend
        assert self.script is not None
        return ScriptedUserBackend(self.name, self.script, self.instructions)


def opening_message() -> Message:
    """The first message the user sees: :data:`OPENING`, from the agent's side."""
    return _message("user", OPENING)


def said_by_agent(text: str) -> Message:
    """An agent's line as the user sees it (the other party's)."""
    return _message("user", text)


def said_by_user(response: ModelResponse) -> Message:
    """The user's own reply (text, or calls of its tools) in its view of the conversation."""
    return response.message()


def user_request(user: SimulatedUser, dialogue: tuple[Utterance, ...]) -> ModelRequest:
    """The request the user is sent after ``dialogue`` when it has no tools: its prompt, and
    the dialogue from its side (the agent's lines, opened by :data:`OPENING`, as the other
    party's; its own as the assistant's)."""
    messages = [opening_message()]
    for u in dialogue:
        messages.append(_message("assistant" if u.speaker == "user" else "user", u.text))
    return ModelRequest(
        model=user.model_name(),
        system=user.system(),
        messages=tuple(messages),
        tools=(),
        max_tokens=user.max_tokens,
        temperature=float(user.temperature),
    )


def _message(role: str, text: str) -> Message:
    block = trusted(TextBlock, {"type": "text", "text": text})
    return trusted(Message, {"role": role, "content": (block,)})


def dialogue_of(request: ModelRequest) -> tuple[tuple[Utterance, ...], tuple[ToolReply, ...]]:
    """The dialogue a user request carries (the turns are not in the request and are -1), and
    the results of the user's tool calls when it is the last thing in it."""
    lines: list[Utterance] = []
    calls: dict[str, ToolUseBlock] = {}
    results: list[ToolReply] = []
    for m in request.messages[1:]:
        results = []
        for use in m.tool_uses():
            calls[use.id] = use
        replies = m.tool_results()
        for r in replies:
            use = calls.get(r.tool_use_id)
            name, args = (use.name, use.input) if use else ("?", {})
            results.append(
                ToolReply(
                    name=name, input=args, ok=not r.is_error, data=_parse(r.content), text=r.content
                )
            )
        text = m.text()
        said = text or (m.role == "assistant" and not m.tool_uses())  # an empty reply is a line
        if said and not replies:
            speaker = "user" if m.role == "assistant" else "agent"
            lines.append(Utterance(speaker=speaker, text=text, turn=-1))
    return tuple(lines), tuple(results)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class ScriptedUserBackend(ModelBackend):
    """Plays a scripted user: its reply is a pure function of the dialogue in the request."""

    def __init__(self, name: str, script: ScriptedUser, instructions: str) -> None:
        self.name, self.script, self.instructions = name, script, instructions

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """The script's reply to the dialogue of ``request``.

        Raises:
            BackendError: The script raised or did not return text (named as the user's).
        """
        dialogue, results = dialogue_of(request)
        view = UserView(call.case_id, self.instructions, dialogue, results)
        try:
            said: Any = self.script(view)
        except Exception as exc:
            raise BackendError(f"scripted user {self.name} raised {exception_text(exc)}") from None
        if isinstance(said, str):
            block = TextBlock(text=said)
            return ModelResponse(content=(block,), stop_reason="end_turn", model=request.model)
        calls = cast("list[Any]", said if isinstance(said, list) else [said])
        if not calls or not all(isinstance(c, Call) for c in calls):
            raise BackendError(
                f"scripted user {self.name} returned {type(cast(object, said)).__name__}, not "
                "text or Call"
            )
        uses = tuple(
            ToolUseBlock(id=f"user_call_{call.turn}_{i}", name=c.name, input=c.input)
            for i, c in enumerate(calls)
        )
        return ModelResponse(content=uses, stop_reason="tool_use", model=request.model)

    def info(self) -> BackendInfo:
        """A scripted user."""
        return BackendInfo(
            backend="scripted",
            model=f"scripted-user:{self.name}",
            agent=self.name,
            agent_kind="scripted",
        )
