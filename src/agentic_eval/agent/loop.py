"""The agent loop: one loop for every backend.

System prompt and task go in; tool calls are executed through the registry and their results fed
back, until the agent submits its answer through ``submit`` (whose input schema is the case's
output model) or a limit is hit. Nothing the agent does raises out of this loop: every failure
becomes an :class:`~agentic_eval.core.results.Outcome`.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentic_eval.agent.approval import REQUEST_APPROVAL_SPEC, ApprovalCheckpoint, blocked_message
from agentic_eval.agent.conversation import Conversation
from agentic_eval.agent.run import AgentRun, Limits
from agentic_eval.agent.tools import (
    REQUEST_APPROVAL_TOOL,
    SUBMIT_TOOL,
    DomainFault,
    ToolArgumentError,
    ToolError,
    ToolRegistry,
    all_validation_errors,
    first_validation_error,
)
from agentic_eval.agent.user import SimulatedUser
from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    CallContext,
    ModelBackend,
    TransientBackendError,
)
from agentic_eval.core.canonical import canonical_bytes, spliced_bytes
from agentic_eval.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    trusted,
    user_text,
)
from agentic_eval.core.model import (
    ModelRequest,
    ModelResponse,
    RequestKeyBuilder,
    ToolSpec,
    encode_response,
)
from agentic_eval.core.results import Outcome, ToolCallRecord
from agentic_eval.core.text import exception_text, redact
from agentic_eval.core.transcript import USER_STOP, RequestTemplate, Turn, encode_turn

Env = TypeVar("Env")

NUDGE = "Call the `submit` tool with your final answer; do not answer in plain text."


@functools.lru_cache(maxsize=256)
def submit_spec(output_model: type[BaseModel]) -> ToolSpec:
    """The ``submit`` tool: its input schema is the case's output model (computed once)."""
    schema = output_model.model_json_schema()
    schema.pop("title", None)
    return ToolSpec(
        name=SUBMIT_TOOL,
        description="Submit your final answer. Call it exactly once, when you are done.",
        input_schema=schema,
    )


async def run_agent(
    backend: ModelBackend,
    call: CallContext,
    *,
    model: str,
    system: str,
    task: str,
    tools: ToolRegistry[Env],
    env: Env,
    output_model: type[BaseModel] | None,
    checkpoint: ApprovalCheckpoint,
    limits: Limits,
    temperature: float = 0.0,
    user: SimulatedUser | None = None,
    user_backend: ModelBackend | None = None,
) -> AgentRun:
    """Run the agent until it submits or a limit is hit.

    Args:
        backend: Where responses come from.
        call: Domain, case, epoch and attempt (the turn is filled in per call).
        model: Model name sent in requests.
        system: System prompt.
        task: The task text (first user message).
        tools: The domain's tools.
        env: The case's environment (tools read and change it).
        output_model: Pydantic model the submitted answer must validate against (None: the
            task has no ``submit``; the episode ends when the user stops, a tool ends it or,
            with no user, at the agent's first reply of text alone).
        checkpoint: Approval checkpoint for must-approve calls.
        limits: Turn and token limits.
        temperature: Sampling temperature.
        user: The simulated user of a conversation (None: the agent works alone, and a reply
            of text alone gets the fixed nudge to submit). The user opens the conversation.
        user_backend: Who answers the user's turns (default: ``user.make_backend()``).

    Returns:
        The run. Never raises for agent or provider failures; only
        :class:`AuthenticationFailed` propagates, since no run can proceed without credentials.
    """
    tool_specs = _offered(tools.specs(), tools.has_approval_rules(), output_model)
    run = AgentRun()
    messages: list[Message] = []
    keys = RequestKeyBuilder(model, system, tool_specs, limits.max_tokens, temperature)
    appended: list[Message] = []
    appended_json: list[bytes] = []
    """The messages the harness added since the last response, and their canonical JSON."""

    def add(message: Message, encoded: bytes | None = None) -> None:
        messages.append(message)
        appended.append(message)
        appended_json.append(keys.append(message, encoded))

    talk = None
    if user is not None:
        talk = Conversation(run, user, user_backend or user.make_backend(), call, env)
        opening = await talk.reply(-1)
        if opening is None or run.ended:
            return _unsubmitted(run, output_model)
        task = opening
    add(_task_message(task))
    temperature = float(temperature)
    for turn in range(limits.max_turns):
        # Every part is an already-validated model: build without re-validating (hot path).
        request = trusted(
            ModelRequest,
            {
                "model": model,
                "system": system,
                "messages": tuple(messages),
                "tools": tool_specs,
                "max_tokens": limits.max_tokens,
                "temperature": temperature,
            },
        )
        if run.request is None:
            run.request = RequestTemplate.of(request)
            run.request_json = keys.template
        request_key = keys.key()
        try:
            response = await backend.complete(
                request,
                CallContext(
                    call.domain, call.case_id, turn, request_key, call.sample, call.attempt
                ),
            )
            if not isinstance(response, ModelResponse):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(f"the backend returned {type(response).__name__}, not a response")
            encoded = encode_response(response)
        except AuthenticationFailed:
            raise
        except TransientBackendError as exc:
            run.outcome = Outcome(kind="transient", reason=redact(str(exc)), where=f"turn {turn}")
            return run
        except BackendError as exc:
            run.outcome = Outcome(kind="error", reason=redact(str(exc)), where=f"turn {turn}")
            return run
        except Exception as exc:  # a broken backend is a harness error, never a crash
            reason = redact(exception_text(exc))
            run.outcome = Outcome(kind="error", reason=reason, where=f"turn {turn}")
            return run
        run.turns.append(
            trusted(
                Turn,
                {
                    "index": turn,
                    "request_key": request_key,
                    "appended": tuple(appended),
                    "response": response,
                    "response_key": encoded.key,
                },
            )
        )
        run.turns_json.append(
            encode_turn(turn, request_key, appended_json, encoded.response, encoded.key)
        )
        appended.clear()
        appended_json.clear()
        run.input_tokens += response.usage.input_tokens
        run.output_tokens += response.usage.output_tokens
        messages.append(response.message())
        keys.append(messages[-1], encoded.message)
        budget = limits.max_total_tokens
        if budget is not None and run.input_tokens + run.output_tokens > budget:
            run.outcome = Outcome(
                kind="error",
                reason=f"exceeded the token budget ({budget})",
                where=f"turn {turn}",
            )
            return run
        uses = response.tool_uses()
        if not uses:
            if response.stop_reason == "max_tokens":
                run.outcome = Outcome(
                    kind="error",
                    reason=f"response cut off at max_tokens ({limits.max_tokens})",
                    where=f"turn {turn}",
                )
                return run
            if talk is not None:
                talk.agent_said(response.text(), turn)
                answer = await talk.reply(turn)
                if answer is None or run.ended:
                    return _unsubmitted(run, output_model)
                add(_task_message(answer))
                continue
            if output_model is None:
                run.ended = "agent"
                return run
            add(user_text(NUDGE))
            continue
        results: list[ToolResultBlock] = []
        for at, use in enumerate(uses):
            if use.name == SUBMIT_TOOL and output_model is not None:
                _submit(run, use, turn, output_model)
                return _unrun(run, uses[at + 1 :], turn)
            try:
                results.append(await _execute(run, use, turn, tools, env, checkpoint))
                ender = tools.get(use.name)
                if ender is not None and ender.ends_episode and results[-1].is_error is False:
                    run.ended = f"tool {use.name}"
                    return _unrun(_unsubmitted(run, output_model), uses[at + 1 :], turn)
            except DomainFault as fault:
                run.tool_calls.append(
                    ToolCallRecord(
                        turn=turn,
                        id=use.id,
                        name=use.name,
                        input=use.input,
                        result=f"the suite's code failed: {fault.error}",
                        status="error",
                    )
                )
                run.outcome = Outcome(kind="error", reason=fault.reason, where=fault.where)
                return run
        content = tuple(results)
        add(trusted(Message, {"role": "user", "content": content}), _results_json(content))
    last = run.dialogue[-1] if run.dialogue else None  # the user answered the last turn's line:
    talking = last is not None and last.speaker == "user" and last.turn == limits.max_turns - 1
    run.outcome = Outcome(
        kind="error",
        reason=f"exceeded max turns ({limits.max_turns}) "
        + ("without submitting" if output_model is not None else "before the episode ended")
        + (f" (the user had not said {USER_STOP})" if talking else ""),
        where=f"turn {limits.max_turns - 1}",
    )
    return run


_last_offered: list[
    tuple[tuple[ToolSpec, ...], bool, type[BaseModel] | None, tuple[ToolSpec, ...]]
] = []


def _offered(
    specs: tuple[ToolSpec, ...], approval: bool, output_model: type[BaseModel] | None
) -> tuple[ToolSpec, ...]:
    """The tools offered to the model: the domain's, ``request_approval`` when a tool has an
    approval rule, and ``submit``. The same tuple for every case of a suite (a one-entry memo,
    holding what it was made from, so their ids cannot be reused), which lets the request key
    builder recognise the tools by identity."""
    for was_specs, was_approval, was_model, offered in _last_offered:
        if was_specs is specs and was_approval is approval and was_model is output_model:
            return offered
    extra = (REQUEST_APPROVAL_SPEC,) if approval else ()
    submit = () if output_model is None else (submit_spec(output_model),)
    offered = (*specs, *extra, *submit)
    _last_offered[:] = [(specs, approval, output_model, offered)]
    return offered


def _unsubmitted(run: AgentRun, output_model: type[BaseModel] | None) -> AgentRun:
    """A run whose episode ended before ``submit`` (the user stopped, a tool ended it): in a
    task that asks for an answer, a failure of the agent, judged by the checks all the same."""
    if run.ended and run.outcome is None and output_model is not None:
        why = "the user ended the conversation" if run.ended == "user" else f"{run.ended} ran"
        run.outcome = Outcome(
            kind="check_failed",
            reason=f"the episode ended ({why}) without a submitted answer",
            where="episode end",
        )
    return run


def _task_message(task: str) -> Message:
    """The first user message (:func:`user_text`; built without re-validating a plain str)."""
    if type(task) is not str:
        return user_text(task)  # validated: it says what is wrong
    block = trusted(TextBlock, {"type": "text", "text": task})
    return trusted(Message, {"role": "user", "content": (block,)})


def _results_json(results: tuple[ToolResultBlock, ...]) -> bytes:
    """Canonical JSON of the user message holding ``results`` (blocks the loop built, whose
    fields are all strings and booleans, so their instance dicts are their JSON form): one
    orjson call, where pydantic's serialiser costs more on the replay hot path (a test holds
    the two together)."""
    encoded = spliced_bytes({"content": [b.__dict__ for b in results], "role": "user"})
    if encoded is None:  # pragma: no cover - strings and booleans are always JSON
        return canonical_bytes(trusted(Message, {"role": "user", "content": results}))
    return encoded


def _submit(run: AgentRun, use: ToolUseBlock, turn: int, output_model: type[BaseModel]) -> None:
    try:
        run.output = output_model.model_validate(use.input)
    except ValidationError as exc:
        reason = f"output failed its schema: {first_validation_error(exc)}"
        run.outcome = Outcome(kind="check_failed", reason=reason, where=f"turn {turn}, submit")
        run.detail = "output failed its schema:\n" + all_validation_errors(exc)
        status, result = "error", reason
    else:
        status, result = "ok", "submitted"
    run.tool_calls.append(_record(turn, use, result, status))


def _unrun(run: AgentRun, uses: Any, turn: int) -> AgentRun:
    """``run`` with the calls of its last turn that never ran (the episode had ended)."""
    run.unrun_calls.extend(_record(turn, u, UNRUN, "error") for u in uses)
    return run


UNRUN = "not run: the episode had ended"


def _record(turn: int, use: ToolUseBlock, result: str, status: Any) -> ToolCallRecord:
    """The trace entry of a call (its parts are validated: the model's call and our result)."""
    return trusted(
        ToolCallRecord,
        {
            "turn": turn,
            "id": use.id,
            "name": use.name,
            "input": use.input,
            "result": result,
            "status": status,
        },
    )


async def _execute(
    run: AgentRun,
    use: ToolUseBlock,
    turn: int,
    tools: ToolRegistry[Env],
    env: Env,
    checkpoint: ApprovalCheckpoint,
) -> ToolResultBlock:
    text, status = await _dispatch(use, turn, tools, env, checkpoint)
    run.tool_calls.append(_record(turn, use, text, status))
    return trusted(
        ToolResultBlock,
        {"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": status != "ok"},
    )


async def _dispatch(
    use: ToolUseBlock,
    turn: int,
    tools: ToolRegistry[Env],
    env: Env,
    checkpoint: ApprovalCheckpoint,
) -> tuple[str, Any]:
    if use.name == REQUEST_APPROVAL_TOOL and tools.has_approval_rules():
        text, is_error = await checkpoint.request(turn, use.input, tools, env)
        return text, "error" if is_error else "ok"
    tool = tools.get(use.name)
    if tool is None:
        return f"unknown tool {use.name!r}; available: {', '.join(tools.names())}", "error"
    try:
        args = tool.validate(use.input)
    except ValidationError as exc:
        return f"invalid arguments: {first_validation_error(exc)}", "error"
    requirement = tool.approval_needed(env, args)
    if requirement is not None:
        executes, note = checkpoint.admit(turn, requirement, tool.bound_arguments(args))
        if not executes:
            return blocked_message(requirement, note), "blocked"
    try:
        return tool.invoke(env, args), "ok"
    except ToolError as exc:  # an expected failure, shown to the agent: nothing executed
        if requirement is not None:
            checkpoint.refused()
        if isinstance(exc, ToolArgumentError):  # like a schema failure: the call never ran
            return f"invalid arguments: {exc}", "error"
        return f"ToolError: {exc}", "error"
