"""The scripted backend resumes a sample's generator turn by turn, and answers exactly what
``respond`` (a re-run of the agent over the whole conversation) answers."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

from agentic_eval.backends.base import BackendError, CallContext, ModelBackend
from agentic_eval.backends.scripted import (
    Action,
    AgentTask,
    Call,
    ScriptedBackend,
    Submit,
    ToolReply,
    respond,
)
from agentic_eval.core.canonical import canonical_bytes
from agentic_eval.core.messages import Message
from agentic_eval.core.model import ModelRequest, ModelResponse, ToolSpec
from agentic_eval.domains import get_domain
from agentic_eval.evaluation.runner import run_tasks
from agentic_eval.evaluation.settings import RunSettings


class Checked(ModelBackend):
    """Answers with a scripted backend and holds every answer to ``respond``'s."""

    def __init__(self, name: str, agent: Any) -> None:
        self.inner = ScriptedBackend(name, agent)
        self.agent = agent
        self.compared = 0

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        got = await self.inner.complete(request, call)
        assert canonical_bytes(got) == canonical_bytes(respond(self.agent, request))
        self.compared += 1
        return got

    def info(self) -> Any:
        return self.inner.info()


@pytest.mark.parametrize("agent", ["reference", "naive"])
def test_every_resumed_answer_is_the_rerun_answer(agent: str) -> None:
    domain = get_domain("retail_ops")
    specs = domain.task_specs(domain.load_cases(), samples=2)
    backend = Checked(agent, domain.agents()[agent])
    done = asyncio.run(run_tasks(specs, backend, RunSettings(f"scripted:{agent}")))
    assert len(done.cases) == len(specs)
    assert backend.compared > 2 * len(specs)  # most samples take several turns
    assert backend.inner._sessions == {}  # pyright: ignore[reportPrivateUsage]


def _counting() -> tuple[list[int], Any]:
    started: list[int] = []

    def agent(task: AgentTask) -> Generator[Action, list[ToolReply], None]:
        started.append(1)
        replies = yield Call("lookup", {"n": 1})
        replies = yield [Call("lookup", {"n": 2}), Call("lookup", {"n": 3})]
        yield Submit({"seen": [r.data for r in replies]})

    return started, agent


def _request(*messages: Any) -> ModelRequest:
    return ModelRequest.model_validate(
        {"model": "m", "system": "s", "messages": list(messages), "tools": [], "max_tokens": 10}
    )


def _results(response: ModelResponse, value: int) -> Message:
    return Message.model_validate(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": u.id, "content": str(value + i)}
                for i, u in enumerate(response.tool_uses())
            ],
        }
    )


def test_it_resumes_the_same_conversation_and_reruns_any_other() -> None:
    started, agent = _counting()
    backend = ScriptedBackend("counting", agent)
    call = CallContext("d", "c", 0)
    task = {"role": "user", "content": [{"type": "text", "text": "go"}]}

    async def go() -> None:
        first_request = _request(task)
        first = await backend.complete(first_request, call)
        assert started == [1]
        # the same message objects as the request answered, then the turn's new ones
        second_request = first_request.model_copy(
            update={"messages": (*first_request.messages, first.message(), _results(first, 10))}
        )
        second = await backend.complete(second_request, call)
        assert started == [1]  # resumed, not re-run
        assert canonical_bytes(second) == canonical_bytes(respond(agent, second_request))
        third_request = second_request.model_copy(
            update={"messages": (*second_request.messages, second.message(), _results(second, 20))}
        )
        third_request = ModelRequest.model_validate(third_request.model_dump())  # new objects
        started.clear()
        third = await backend.complete(third_request, call)
        assert started == [1]  # a conversation it did not answer is re-run from the start
        assert third.tool_uses()[0].input == {"seen": [20, 21]}
        assert backend._sessions == {}  # pyright: ignore[reportPrivateUsage]

    asyncio.run(go())


def test_an_agent_that_stops_without_submitting_is_a_backend_error() -> None:
    def quits(task: AgentTask) -> Generator[Action, list[ToolReply], None]:
        yield Call("lookup")

    backend = ScriptedBackend("quits", quits)
    call = CallContext("d", "c", 0)

    async def go() -> None:
        request = _request({"role": "user", "content": [{"type": "text", "text": "go"}]})
        first = await backend.complete(request, call)
        then = request.model_copy(
            update={"messages": (*request.messages, first.message(), _results(first, 1))}
        )
        with pytest.raises(BackendError, match="stopped before the episode ended"):
            await backend.complete(then, call)  # no submit offered: nothing to submit
        assert backend._sessions == {}  # pyright: ignore[reportPrivateUsage]
        submit = {"name": "submit", "description": "d", "input_schema": {"type": "object"}}
        offered = then.model_copy(update={"tools": (ToolSpec.model_validate(submit),)})
        with pytest.raises(BackendError, match="stopped without submitting"):
            await backend.complete(offered, call)

    asyncio.run(go())
