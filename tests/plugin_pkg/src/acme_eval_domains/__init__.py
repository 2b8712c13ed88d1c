"""A domain in its own package, written by following the README's "Add your own domain" guide.

It is installed by tests/test_plugin_package.py (never imported by the test process itself) and
registered through the ``agentic_eval.domains`` entry point. ``acme_broken`` fails to import and
``acme_class`` names the class instead of an instance: both must be reported, not fatal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval import (
    AgentTask,
    Call,
    CaseSpec,
    CheckContext,
    CheckResult,
    Domain,
    Submit,
    TaskKind,
    ToolError,
    ToolRegistry,
    check,
)


class Fixtures(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    prices: dict[str, int]


FIXTURES = Fixtures(prices={"O-1": 1200, "O-2": 800})


def refund_due(fx: Fixtures, order_id: str) -> int:
    """The answer key."""
    return fx.prices[order_id]


TOOLS: ToolRegistry[Fixtures] = ToolRegistry()


@TOOLS.tool()
def get_order(env: Fixtures, order_id: str) -> dict[str, Any]:
    """Look an order up.

    Args:
        order_id: The order id, e.g. O-1.
    """
    if order_id not in env.prices:
        raise ToolError(f"no order {order_id}")
    return {"order_id": order_id, "paid_cents": env.prices[order_id]}


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    refund_cents: int = Field(description="What to refund, in cents.")


@check("refund_cents", needs_output=True)
def refund_cents(ctx: CheckContext[Fixtures]) -> CheckResult:
    assert isinstance(ctx.output, Answer)
    want = ctx.case.expected["refund_cents"]
    return CheckResult(name="refund_cents", passed=ctx.output.refund_cents == want)


KIND = TaskKind("refund", Answer, (refund_cents,))


def reference(task: AgentTask) -> Iterator[Any]:
    (reply,) = yield Call("get_order", {"order_id": task.inputs["order_id"]})
    yield Submit({"refund_cents": reply.data["paid_cents"]})


class AcmeRefunds(Domain[Fixtures]):
    name = "acme_refunds"
    system_prompt = "You compute refunds. Use the tools; finish with submit."
    description = "Acme's refunds, from a separately installed package"

    def fixtures(self) -> Fixtures:
        return FIXTURES

    def build_cases(self) -> list[CaseSpec]:
        return [
            CaseSpec(
                id=f"refund-{o}",
                kind="refund",
                instruction="Refund the order in full.",
                inputs={"order_id": o},
                expected={"refund_cents": refund_due(FIXTURES, o)},
            )
            for o in FIXTURES.prices
        ]

    def make_env(self, case: CaseSpec) -> Fixtures:
        return FIXTURES.model_copy(deep=True)

    def tools(self) -> ToolRegistry[Fixtures]:
        return TOOLS

    def task_kind(self, case: CaseSpec) -> TaskKind:
        return KIND

    def agents(self) -> dict[str, Any]:
        return {"reference": reference}


DOMAIN = AcmeRefunds()
