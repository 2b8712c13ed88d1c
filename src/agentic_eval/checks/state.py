"""The final-state gate: the environment a run leaves must equal the one the answer key computes.

This is tau-bench's principle (the final database must equal the one the gold actions
produce), made a hard gate every domain with state-changing tools can reuse. A domain describes
its final state as *records*: every record a mutating tool created or changed, keyed by a
stable name (``payment INV-5010``, ``claim CLM-3001``), each a flat mapping of its consequential
fields (order line, SKU, type, amount, IBAN, status...) to canonical JSON values
(:mod:`agentic_eval.core.identifiers`). The answer key computes the expected records from the
fixtures into ``case.expected["final_state"]``; the gate compares the two record by record and
field by field and names the first differences. Records nobody touched are in neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from agentic_eval.checks.base import Check, CheckContext, FunctionCheck
from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.results import CheckResult

__all__ = [
    "FINAL_STATE_GATE_NAME",
    "FINAL_STATE_KEY",
    "StateRecords",
    "final_state_gate",
    "state_differences",
]

FINAL_STATE_GATE_NAME = "final_state_matches"
FINAL_STATE_KEY = "final_state"
"""The key of ``case.expected`` holding the answer key's expected records."""

StateRecords = dict[str, dict[str, Any]]
"""Record name -> {field: canonical JSON value}."""


def _show(value: Any) -> str:
    return canonical_json(value) if not isinstance(value, str) else repr(value)


def state_differences(
    expected: Mapping[str, Mapping[str, Any]], actual: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Every difference between two sets of records, one line each, in record order.

    Values are compared as canonical JSON, so ``1`` and ``1.0`` differ and key order does not.
    """
    problems: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        want, got = expected.get(name), actual.get(name)
        if got is None:
            problems.append(f"{name}: expected {_show(dict(want or {}))}, not in the final state")
            continue
        if want is None:
            problems.append(
                f"{name}: not expected (the task should not create or change it), "
                f"found {_show(dict(got))}"
            )
            continue
        for field in sorted(set(want) | set(got)):
            if field not in got:
                problems.append(f"{name}: {field} expected {_show(want[field])}, absent")
            elif field not in want:
                problems.append(f"{name}: {field} not expected, found {_show(got[field])}")
            elif canonical_json(want[field]) != canonical_json(got[field]):
                problems.append(
                    f"{name}: {field} expected {_show(want[field])}, found {_show(got[field])}"
                )
    return problems


def final_state_gate(
    observe: Callable[[Any], StateRecords], *, name: str = FINAL_STATE_GATE_NAME
) -> Check:
    """Hard gate: the final environment's records equal ``case.expected["final_state"]``.

    Args:
        observe: The domain's view of an environment as records (the same function its answer
            key uses on the environment the gold actions leave, or one building identical
            records from the fixtures).
        name: The check's name.

    Raises:
        ValueError: From the check, when the case carries no computed final state (its case
            file predates the gate): reported as the suite's error, never the agent's.
    """

    def judge(ctx: CheckContext[Any]) -> CheckResult:
        if FINAL_STATE_KEY not in ctx.case.expected:
            raise ValueError(
                f"case {ctx.case.id} has no expected {FINAL_STATE_KEY!r}: regenerate the case "
                "file with `agentic-eval goldens write`"
            )
        want = cast(dict[str, dict[str, Any]], ctx.case.expected[FINAL_STATE_KEY])
        got = observe(ctx.env)
        problems = state_differences(want, got)
        message = "; ".join(problems)
        differing = sorted(
            n
            for n in set(want) | set(got)
            if canonical_json(want.get(n)) != canonical_json(got.get(n))
        )
        return CheckResult(
            name=name,
            passed=not problems,
            hard_gate=True,
            message=message,
            expected={n: want.get(n) for n in differing} if problems else None,
            actual={n: got.get(n) for n in differing} if problems else None,
        )

    return FunctionCheck(name, judge, hard_gate=True)
