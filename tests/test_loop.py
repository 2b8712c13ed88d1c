"""The agent loop: every agent failure is an outcome, tools and the approval checkpoint behave."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from agentic_eval.agent import ApprovalCheckpoint, ApprovalRequirement, Limits, ToolRegistry
from agentic_eval.agent.loop import NUDGE, AgentRun, run_agent
from agentic_eval.backends import (
    AuthenticationFailed,
    CallContext,
    ModelBackend,
    ProviderRequestError,
    TransientBackendError,
)
from agentic_eval.core import ModelRequest, ModelResponse, TextBlock, ToolUseBlock


@dataclass
class Env:
    paid: list[str] = field(default_factory=lambda: [])


def _must_approve(env: Env, args: dict[str, Any]) -> ApprovalRequirement | None:
    del env
    if args["amount"] > 100:
        return ApprovalRequirement("pay", args["invoice"], "above the limit")
    return None


TOOLS: ToolRegistry[Env] = ToolRegistry()


@TOOLS.tool()
def lookup(env: Env, key: str) -> dict[str, str]:
    """Look a key up.

    Args:
        key: The key.
    """
    del env
    if key == "boom":
        raise RuntimeError("disk on fire")
    return {"key": key, "value": key.upper()}


@TOOLS.tool(requires_approval=_must_approve)
def pay(env: Env, invoice: str, amount: int) -> str:
    """Pay an invoice.

    Args:
        invoice: Invoice id.
        amount: Amount.
    """
    env.paid.append(invoice)
    return "paid"


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: str


class Scripted(ModelBackend):
    """Answers with a fixed list of responses (or raises what it is given)."""

    def __init__(self, *items: ModelResponse | Exception) -> None:
        self.items = list(items)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        self.requests.append(request)
        item = self.items.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def use(name: str, i: int = 0, **args: Any) -> ModelResponse:
    return ModelResponse(
        content=(ToolUseBlock(id=f"t{i}", name=name, input=args),), stop_reason="tool_use"
    )


async def go(
    backend: ModelBackend,
    env: Env | None = None,
    *,
    mode: str = "enforce",
    grant: bool = False,
    limits: Limits | None = None,
    tools: ToolRegistry[Env] = TOOLS,
) -> AgentRun:
    checkpoint = ApprovalCheckpoint(mode, lambda request: grant)  # type: ignore[arg-type]
    run = await run_agent(
        backend,
        CallContext("d", "c", 0),
        model="m",
        system="sys",
        task="do it",
        tools=tools,
        env=env or Env(),
        output_model=Answer,
        checkpoint=checkpoint,
        limits=limits or Limits(max_turns=5),
    )
    run.policy = checkpoint.events  # type: ignore[attr-defined]
    return run


async def test_tool_calls_results_and_submit() -> None:
    backend = Scripted(use("lookup", key="a"), use("submit", 1, value="A"))
    run = await go(backend)
    assert run.outcome is None
    assert isinstance(run.output, Answer) and run.output.value == "A"
    second = backend.requests[1].messages[-1].tool_results()[0]
    assert second.content == '{"key":"a","value":"A"}' and not second.is_error
    tool_names = [t.name for t in backend.requests[0].tools]
    assert tool_names == ["lookup", "pay", "request_approval", "submit"]
    assert backend.requests[0].tools[-1].input_schema["properties"]["value"]["type"] == "string"


async def test_a_tool_raising_a_non_tool_error_ends_the_case_as_the_domains_error() -> None:
    backend = Scripted(use("lookup", key="boom"), use("submit", 1, value="x"))
    run = await go(backend)
    assert run.tool_calls[0].status == "error"
    assert run.outcome is not None and run.outcome.kind == "error"
    assert run.outcome.where == "tool lookup raised RuntimeError"
    assert "disk on fire" in run.outcome.reason
    assert len(backend.requests) == 1  # the agent is not asked to carry on over a broken tool


async def test_unknown_tool_and_invalid_arguments_are_error_results() -> None:
    backend = Scripted(use("nope"), use("lookup", 1, wrong=1), use("submit", 2, value="x"))
    run = await go(backend)
    assert run.tool_calls[0].result.startswith("unknown tool 'nope'")
    assert run.tool_calls[1].result.startswith("invalid arguments: key: Field required")
    assert run.outcome is None


async def test_schema_invalid_output_is_check_failed() -> None:
    run = await go(Scripted(use("submit", value=3)))
    assert run.outcome is not None and run.outcome.kind == "check_failed"
    assert "output failed its schema: value" in run.outcome.reason
    assert run.output is None


async def test_max_turns_is_an_error_outcome() -> None:
    run = await go(
        Scripted(*[use("lookup", i, key="a") for i in range(3)]), limits=Limits(max_turns=3)
    )
    assert run.outcome is not None and run.outcome.kind == "error"
    assert "exceeded max turns (3)" in run.outcome.reason


async def test_text_only_reply_is_nudged_and_cut_off_reply_is_an_error() -> None:
    text = ModelResponse(content=(TextBlock(text="hmm"),), stop_reason="end_turn")
    backend = Scripted(text, use("submit", value="ok"))
    run = await go(backend)
    assert run.outcome is None
    assert backend.requests[1].messages[-1].text() == NUDGE
    cut = ModelResponse(content=(TextBlock(text="I will"),), stop_reason="max_tokens")
    run = await go(Scripted(cut))
    assert run.outcome is not None and run.outcome.kind == "error"
    assert "max_tokens" in run.outcome.reason


async def test_token_budget() -> None:
    from agentic_eval.core import Usage

    big = use("lookup", key="a").model_copy(
        update={"usage": Usage(input_tokens=90, output_tokens=20)}
    )
    run = await go(Scripted(big), limits=Limits(max_total_tokens=100))
    assert run.outcome is not None and "token budget (100)" in run.outcome.reason


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TransientBackendError("429 rate limited"), "transient"),
        (ProviderRequestError("400 bad request"), "error"),
        (ValueError("backend bug"), "error"),
    ],
)
async def test_backend_failures_become_outcomes(exc: Exception, kind: str) -> None:
    run = await go(Scripted(exc))
    assert run.outcome is not None and run.outcome.kind == kind
    assert str(exc) in run.outcome.reason and run.outcome.where == "turn 0"


async def test_authentication_failure_propagates() -> None:
    with pytest.raises(AuthenticationFailed):
        await go(Scripted(AuthenticationFailed("401")))


async def test_enforce_blocks_unapproved_must_approve_call() -> None:
    env = Env()
    run = await go(Scripted(use("pay", invoice="I1", amount=500), use("submit", 1, value="x")), env)
    assert env.paid == []
    assert run.tool_calls[0].status == "blocked"
    event = run.policy[0]  # type: ignore[attr-defined]
    assert (event.approved, event.executed, event.mode) == (False, False, "enforce")


async def test_observe_lets_it_execute_and_records_it() -> None:
    env = Env()
    run = await go(
        Scripted(use("pay", invoice="I1", amount=500), use("submit", 1, value="x")),
        env,
        mode="observe",
    )
    assert env.paid == ["I1"]
    event = run.policy[0]  # type: ignore[attr-defined]
    assert (event.approved, event.executed, event.mode) == (False, True, "observe")


async def test_granted_approval_admits_the_call_and_small_calls_need_none() -> None:
    env = Env()
    backend = Scripted(
        use(
            "request_approval", action="pay", target="I1", reason="r", policy_reason="x", figures={}
        ),
        use("pay", 1, invoice="I1", amount=500),
        use("pay", 2, invoice="I2", amount=5),
        use("submit", 3, value="x"),
    )
    run = await go(backend, env, grant=True)
    assert env.paid == ["I1", "I2"]
    assert json.loads(run.tool_calls[0].result) == {
        "action": "pay",
        "approved": True,
        "arguments": {},
        "explanation": "",
        "target": "I1",
    }
    kinds = [e.type for e in run.policy]  # type: ignore[attr-defined]
    assert kinds == ["approval_requested", "must_approve_call"]


async def test_incremental_request_keys_equal_the_canonical_key() -> None:
    text = ModelResponse(content=(TextBlock(text="hmm"),), stop_reason="end_turn")
    backend = Scripted(use("lookup", key="a"), text, use("submit", 2, value="A"))
    run = await go(backend)
    assert len(run.turns) == 3
    for request, turn in zip(backend.requests, run.turns, strict=True):
        assert turn.request_key == request.key()


async def test_a_tool_registered_after_a_run_is_offered_in_the_next_and_keys_follow() -> None:
    # The offered tools and the request's fixed JSON are memoised per registry: a registration
    # must show in the next request, and in its key.
    tools: ToolRegistry[Env] = ToolRegistry()
    tools.add(TOOLS.get("lookup"))  # type: ignore[arg-type]

    async def one() -> tuple[ModelRequest, AgentRun]:
        backend = Scripted(use("submit", 0, value="x"))
        run = await go(backend, tools=tools)
        return backend.requests[0], run

    before, first = await one()
    assert [t.name for t in before.tools] == ["lookup", "submit"]
    tools.add(TOOLS.get("pay"))  # type: ignore[arg-type]
    after, second = await one()
    assert [t.name for t in after.tools] == ["lookup", "pay", "request_approval", "submit"]
    assert first.turns[0].request_key == before.key()
    assert second.turns[0].request_key == after.key() != before.key()
