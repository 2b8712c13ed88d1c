"""The user's side of a conversation, as the loop drives it (:mod:`agentic_eval.agent.user` says
who the user is).

For each reply it wants from the user, the loop calls :meth:`Conversation.reply`: the user is
sent its own view of the conversation (its prompt, the agent's lines as the other party's, its
own lines, tool calls and their results) and answers. A user with tools of its own (tau2-bench's
dual control: they act on the case's environment, which the agent's tools share) may call them
before it answers; each call runs at once and its result goes back to the user, until it
answers with text alone. Every model call of the user is a :class:`UserTurn` of the transcript,
every call of its tools a record of ``user_tool_calls``: both are replayed (the user's replies
from the recording, its tools live) and compared like the agent's.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentic_eval.agent.run import AgentRun
from agentic_eval.agent.tools import (
    DomainFault,
    ToolArgumentError,
    ToolError,
    ToolRegistry,
    first_validation_error,
)
from agentic_eval.agent.user import SimulatedUser, opening_message, said_by_agent, said_by_user
from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    CallContext,
    ModelBackend,
    ReplayDivergence,
    TransientBackendError,
)
from agentic_eval.core.canonical import canonical_bytes
from agentic_eval.core.messages import Message, ToolResultBlock, trusted
from agentic_eval.core.model import ModelRequest, ModelResponse, encode_response
from agentic_eval.core.results import Outcome, ToolCallRecord, Utterance
from agentic_eval.core.text import redact
from agentic_eval.core.transcript import UserTurn, says_stop

MAX_USER_STEPS = 8
"""Model calls the user may make for one reply (tool calls before it answers)."""


class Conversation:
    """Asks the user for each reply and records it in the run."""

    def __init__(
        self,
        run: AgentRun,
        user: SimulatedUser,
        backend: ModelBackend,
        call: CallContext,
        env: Any,
    ) -> None:
        self.run, self.user, self.backend, self.call, self.env = run, user, backend, call, env
        self.tools: ToolRegistry[Any] = user.tools if user.tools is not None else ToolRegistry()
        self.history: list[Message] = [opening_message()]
        """The conversation from the user's side."""

    def agent_said(self, text: str, turn: int) -> None:
        """The agent's reply of text alone at ``turn``, said to the user."""
        self.run.dialogue.append(Utterance(speaker="agent", text=text, turn=turn))
        self.history.append(said_by_agent(text))

    async def reply(self, after: int) -> str | None:
        """The user's answer to the agent's last line (``after``: its turn; -1: the opening).

        None when the user's backend or tools failed (the run's outcome says so); a reply
        holding the stop signal sets ``run.ended`` (and is not said to the agent)."""
        run = self.run
        for _ in range(MAX_USER_STEPS):
            response = await self._ask(after)
            if response is None:
                return None
            self.history.append(said_by_user(response))
            uses = response.tool_uses()
            if not uses:
                text = response.text()
                run.dialogue.append(Utterance(speaker="user", text=text, turn=after))
                if says_stop(text):
                    run.ended = "user"
                return text
            results: list[ToolResultBlock] = []
            for use in uses:
                index = len(run.user_turns) - 1
                try:
                    text, status = self._run_tool(use.name, use.input)
                except DomainFault as fault:
                    reason = f"the user's {fault.reason}"
                    run.outcome = Outcome(kind="error", reason=reason, where=fault.where)
                    return None
                run.user_tool_calls.append(
                    ToolCallRecord(
                        turn=index,
                        id=use.id,
                        name=use.name,
                        input=use.input,
                        result=text,
                        status=status,
                    )
                )
                results.append(
                    ToolResultBlock(tool_use_id=use.id, content=text, is_error=status != "ok")
                )
            self.history.append(trusted(Message, {"role": "user", "content": tuple(results)}))
        run.outcome = Outcome(
            kind="error",
            reason=f"the user made {MAX_USER_STEPS} model calls without replying",
            where=f"user turn {len(run.user_turns) - 1}",
        )
        return None

    async def _ask(self, after: int) -> ModelResponse | None:
        """One model call of the user, recorded; None (and the run's outcome) when it failed."""
        run, call, user = self.run, self.call, self.user
        index = len(run.user_turns)
        request = ModelRequest(
            model=user.model_name(),
            system=user.system(),
            messages=tuple(self.history),
            tools=self.tools.specs(),
            max_tokens=user.max_tokens,
            temperature=float(user.temperature),
        )
        key = request.key()
        where = f"user turn {index}"
        try:
            response = await self.backend.complete(
                request,
                CallContext(
                    call.domain, call.case_id, index, key, call.sample, call.attempt, "user"
                ),
            )
            if not isinstance(response, ModelResponse):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(f"the user's backend returned {type(response).__name__}")
            encoded = encode_response(response)
        except AuthenticationFailed:
            raise
        except ReplayDivergence as exc:  # names the case, the user turn and the field itself
            run.outcome = Outcome(kind="error", reason=redact(str(exc)), where=where)
            return None
        except TransientBackendError as exc:
            reason = redact(f"the user's model, {where}: {exc}")
            run.outcome = Outcome(kind="transient", reason=reason, where=where)
            return None
        except BackendError as exc:
            reason = redact(f"the user's model, {where}: {exc}")
            run.outcome = Outcome(kind="error", reason=reason, where=where)
            return None
        except Exception as exc:
            reason = redact(f"the user's backend raised {type(exc).__name__}, {where}: {exc}")
            run.outcome = Outcome(kind="error", reason=reason, where=where)
            return None
        turn = UserTurn(
            index=index, after=after, request_key=key, response=response, response_key=encoded.key
        )
        run.user_turns.append(turn)
        run.user_turns_json.append(canonical_bytes(turn))
        return response

    def _run_tool(self, name: str, raw: dict[str, Any]) -> tuple[str, Any]:
        """Run one of the user's tools on the environment: (result text, status).

        Raises:
            DomainFault: The tool raised something other than a ToolError (the suite's bug).
        """
        tool = self.tools.get(name)
        if tool is None:
            return f"unknown tool {name!r}; available: {', '.join(self.tools.names())}", "error"
        try:
            args = tool.validate(raw)
        except ValidationError as exc:
            return f"invalid arguments: {first_validation_error(exc)}", "error"
        try:
            return tool.invoke(self.env, args), "ok"
        except ToolArgumentError as exc:
            return f"invalid arguments: {exc}", "error"
        except ToolError as exc:
            return f"ToolError: {exc}", "error"
