"""The runnable unit: a task spec built by hand (no Domain) runs through run_case with scripted,
record and replay backends; checks are isolated plug-ins; suite-code bugs are never the agent's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from agentic_eval import (
    AgentTask,
    ApprovalRequirement,
    Call,
    CaseSpec,
    CheckContext,
    CheckResult,
    RunSettings,
    Submit,
    TaskKind,
    TaskSpec,
    ToolError,
    ToolRegistry,
    check,
    run_case,
)
from agentic_eval.agent import ApprovalRequest
from agentic_eval.backends import ScriptedBackend
from agentic_eval.checks import APPROVAL_GATE
from agentic_eval.evaluation import CaseRun
from agentic_eval.recordings import RecordingBackend, ReplayBackend, agent_dir, read_transcript


@dataclass
class Shop:
    prices: dict[str, int]
    ordered: list[str] = field(default_factory=lambda: [])


TOOLS: ToolRegistry[Shop] = ToolRegistry()


def _order_rule(env: Shop, args: dict[str, Any]) -> ApprovalRequirement | None:
    if args["sku"] == "rule-bug":
        raise KeyError("no such policy row")
    return (
        ApprovalRequirement("order", args["sku"], "dear")
        if env.prices.get(args["sku"], 0) > 100
        else None
    )


@TOOLS.tool()
def price(env: Shop, sku: str) -> int:
    """Price of a SKU.

    Args:
        sku: The SKU.
    """
    if sku not in env.prices and sku != "keyerror":
        raise ToolError(f"unknown sku {sku}")
    return env.prices[sku]  # 'keyerror' raises a bare KeyError: a bug in the suite's code


@TOOLS.tool()
def released(env: Shop, sku: str) -> Any:
    """Release date of a SKU.

    Args:
        sku: The SKU.
    """
    del env, sku
    return {"released": date(2024, 5, 1)}  # not JSON: a bug in the suite's code


@TOOLS.tool()
def label(env: Shop, sku: str) -> str:
    """Shelf label of a SKU.

    Args:
        sku: The SKU.
    """
    del env
    return b"caf\xe9".decode("utf-8", "surrogateescape")  # not valid Unicode: a suite bug


@TOOLS.tool(requires_approval=_order_rule)
def order(env: Shop, sku: str) -> str:
    """Order a SKU.

    Args:
        sku: The SKU.
    """
    env.ordered.append(sku)
    return "ordered"


class Total(BaseModel):
    model_config = ConfigDict(extra="forbid")
    total: int


@check("total", needs_output=True)
def total_check(ctx: CheckContext[Shop]) -> CheckResult:
    assert isinstance(ctx.output, Total)
    want = ctx.case.expected["total"]
    return CheckResult(
        name="total", passed=ctx.output.total == want, expected=want, actual=ctx.output.total
    )


@check("broken")
def broken_check(ctx: CheckContext[Shop]) -> CheckResult:
    raise ZeroDivisionError("the check's own bug")


@check("nothing_ordered")
def nothing_ordered(ctx: CheckContext[Shop]) -> CheckResult:
    return CheckResult(name="nothing_ordered", passed=not ctx.env.ordered)


KIND = TaskKind("sum", Total, (total_check, APPROVAL_GATE, nothing_ordered))


def spec(
    skus: list[str], *, kind: TaskKind = KIND, sample: int = 0, **extra: Any
) -> TaskSpec[Shop]:
    prices = {"a": 3, "b": 4, "c": 500, "huge": 10**25 + 1}
    expected = sum(prices.get(s, 0) for s in skus)
    case = CaseSpec(
        id=f"sum-{'-'.join(skus)}",
        kind="sum",
        instruction="Add up the prices of these SKUs.",
        inputs={"skus": skus},
        expected={"total": expected},
    )
    return TaskSpec(
        suite="shop",
        case=case,
        system_prompt="You add prices.",
        tools=TOOLS,
        make_env=lambda: Shop(dict(prices)),
        kind=kind,
        sample=sample,
        **extra,
    )


def adder(task: AgentTask) -> Iterator[Any]:
    total = 0
    for sku in task.inputs["skus"]:
        tool = {"date": "released", "label": "label"}.get(sku, "price")
        (reply,) = yield Call(tool, {"sku": sku})
        total += reply.data if reply.ok and isinstance(reply.data, int) else 0
    yield Submit({"total": total})


def orderer(task: AgentTask) -> Iterator[Any]:
    yield Call("order", {"sku": task.inputs["skus"][0]})
    yield Submit({"total": 0})


SETTINGS = RunSettings(model="scripted:adder")


async def _run(s: TaskSpec[Shop], agent: Any = adder) -> CaseRun:
    return await run_case(s, ScriptedBackend("adder", agent), SETTINGS)


async def test_a_hand_built_spec_runs_scripted_then_records_then_replays(tmp_path: Path) -> None:
    s = spec(["a", "b"], sample=2)
    scripted = await _run(s)
    assert scripted.result.outcome.kind == "passed" and scripted.result.sample == 2
    recorder = RecordingBackend(ScriptedBackend("adder", adder), tmp_path)
    recorded = await run_case(s, recorder, SETTINGS)
    path = agent_dir(tmp_path, "shop", "adder") / "sum-a-b@2.json"
    assert recorder.written == {path} and read_transcript(path).sample == 2
    replayed = await run_case(s, ReplayBackend(path.parent), SETTINGS)
    assert replayed.reproduced is True and replayed.problem == ""
    assert replayed.transcript == recorded.transcript == scripted.transcript


async def test_integers_beyond_64_bits_record_and_replay_exactly(tmp_path: Path) -> None:
    # The submitted total, the output and the check's values hold a 26-digit integer, which
    # orjson alone would read as a float: replay must read it exactly, not report an edit.
    s = spec(["huge", "a"])
    total = s.case.expected["total"]  # the answer key's sum, beyond 64 bits
    assert total > 2**64
    was, edit = str(total), str(total + 1)
    recorder = RecordingBackend(ScriptedBackend("adder", adder), tmp_path)
    recorded = await run_case(s, recorder, SETTINGS)
    assert recorded.result.outcome.kind == "passed"
    (path,) = recorder.written
    assert was.encode() in path.read_bytes()
    replayed = await run_case(s, ReplayBackend(path.parent), SETTINGS)
    assert (replayed.reproduced, replayed.problem) == (True, "")
    assert replayed.transcript == recorded.transcript
    # An edit of that number is still an edit: in the output, named with its exact values...
    text = path.read_text()
    data = json.loads(text)
    data["output"]["total"] += 1
    path.write_text(json.dumps(data, indent=2))
    edited = await run_case(s, ReplayBackend(path.parent), SETTINGS)
    assert edited.reproduced is False
    assert edited.problem == (
        f"replay diverged: case sum-huge-a, field output.total: recorded {edit}, now {was}"
    )
    # ... and in a response, caught by its sha256 before it is served.
    path.write_text(text.replace(was, edit))
    edited = await run_case(s, ReplayBackend(path.parent), SETTINGS)
    assert edited.reproduced is False
    assert "turn 2, field turns[2].response: the recorded response does not match its sha256" in (
        edited.problem
    )


class Measure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: float


async def test_a_float_beyond_64_bits_edited_into_the_integer_it_rounds_to_is_an_edit(
    tmp_path: Path,
) -> None:
    # 1e25 is a float; 10000000000000000905969664 is an integer (orjson would read it as the
    # same float, so only an exact reading tells the edit from the recording).
    kind = TaskKind("measure", Measure)
    s = spec(["a"], kind=kind)

    def measurer(task: AgentTask) -> Iterator[Any]:
        del task
        yield Submit({"value": 1e25})

    recorder = RecordingBackend(ScriptedBackend("adder", measurer), tmp_path)
    await run_case(s, recorder, SETTINGS)
    (path,) = recorder.written
    text = path.read_text()
    assert '"value": 1e+25' in text
    replayed = await run_case(s, ReplayBackend(path.parent), SETTINGS)
    assert (replayed.reproduced, replayed.problem) == (True, "")
    for n in ("10000000000000000905969664", "9999999999999999999999999"):
        path.write_text(
            text.replace('"output": {\n    "value": 1e+25', f'"output": {{\n    "value": {n}')
        )
        assert path.read_text() != text
        edited = await run_case(s, ReplayBackend(path.parent), SETTINGS)
        assert edited.reproduced is False
        assert (
            edited.problem
            == f"replay diverged: case sum-a, field output.value: recorded {n}, now 1e+25"
        )


async def test_a_crashing_check_is_reported_beside_the_others() -> None:
    kind = TaskKind("sum", Total, (total_check, broken_check, nothing_ordered))
    run = await _run(spec(["a"], kind=kind))
    checks = {c.name: c for c in run.result.checks}
    assert checks["total"].passed and checks["nothing_ordered"].passed  # still reported
    assert not checks["broken"].passed and "ZeroDivisionError" in checks["broken"].message
    assert run.result.outcome.kind == "error"
    assert run.result.outcome.where == "check broken raised ZeroDivisionError"
    assert not run.result.hard_gate_failed  # a suite bug is not an agent's hard-gate failure


@pytest.mark.parametrize(
    ("skus", "agent", "where"),
    [
        (["keyerror"], adder, "tool price raised KeyError"),
        (["date"], adder, "tool released returned a value that is not JSON-serialisable"),
        (["label"], adder, "tool label returned text that is not valid Unicode"),
        (["rule-bug"], orderer, "approval rule of order raised KeyError"),
    ],
)
async def test_suite_code_that_raises_ends_the_case_as_error_naming_it(
    skus: list[str], agent: Any, where: str
) -> None:
    run = await _run(spec(skus), agent)
    assert run.result.outcome.kind == "error", run.result.outcome
    assert run.result.outcome.where == where
    assert run.transcript is not None and run.transcript.tool_calls[-1].status == "error"


async def test_an_expected_tool_error_is_shown_to_the_agent_and_judged_normally() -> None:
    run = await _run(spec(["zzz", "a"]))
    assert run.transcript is not None
    assert run.transcript.tool_calls[0].result == "ToolError: unknown sku zzz"
    assert run.result.outcome.kind == "passed"  # the agent carried on and got it right


async def test_broken_env_factory_and_approver_are_the_suites_errors() -> None:
    def no_env() -> Shop:
        raise FileNotFoundError("fixtures.json")

    s = spec(["a"])
    run = await _run(TaskSpec(**{**s.__dict__, "make_env": no_env}))
    assert run.result.outcome.kind == "error"
    assert run.result.outcome.where == "make_env raised FileNotFoundError"

    def bad_approver(request: ApprovalRequest) -> bool:
        raise RuntimeError("approver down")

    def asks(task: AgentTask) -> Iterator[Any]:
        args = {"action": "order", "target": "c", "reason": "dear", "policy_reason": "x"}
        yield Call("request_approval", {**args, "figures": {}})
        yield Submit({"total": 0})

    run = await _run(TaskSpec(**{**spec(["c"]).__dict__, "approver": bad_approver}), asks)
    assert run.result.outcome.where == "approver raised RuntimeError"


async def test_a_domain_whose_task_kind_raises_gets_an_error_case_not_a_crash() -> None:
    from agentic_eval.domains import get_domain

    domain = get_domain("retail_ops")
    case = domain.load_cases()[0].model_copy(update={"kind": "no_such_kind"})
    (s,) = domain.task_specs([case])
    run = await run_case(s, ScriptedBackend("reference", domain.agents()["reference"]), SETTINGS)
    assert run.result.outcome.kind == "error"
    assert run.result.outcome.where == "domain retail_ops: task_kind() raised KeyError"
    assert run.result.outcome.reason == (
        "domain retail_ops: task_kind() raised KeyError: 'no_such_kind'"
    )
