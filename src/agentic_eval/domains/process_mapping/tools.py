"""The process_mapping tools: read-only lookups over a per-case copy of the process data.

Tools are deterministic functions of their arguments and the case's :class:`ProcessEnv`: no
clock, no randomness, and nothing to change, so no tool needs approval. Unknown ids raise
:class:`ToolError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from agentic_eval.agent.tools import ToolError, ToolRegistry
from agentic_eval.core.frozen import private_copy
from agentic_eval.domains.process_mapping.fixtures import Process, ProcessFixtures
from agentic_eval.domains.process_mapping.policy import policy_summary

__all__ = ["TOOLS", "ProcessEnv", "make_env"]

_T = TypeVar("_T")


@dataclass
class ProcessEnv:
    """One case's world: a private copy of the process data (the tools only read it)."""

    state: ProcessFixtures
    """The fixtures (deeply immutable, so shared, not copied: ``private_copy``)."""


def make_env(fixtures: ProcessFixtures) -> ProcessEnv:
    """A fresh environment over ``fixtures`` (its private copy, see ``core.frozen``)."""
    return ProcessEnv(state=private_copy(fixtures))


def _get(kind: str, lookup: Callable[[str], _T], key: str) -> _T:
    try:
        return lookup(key)
    except KeyError:
        raise ToolError(f"unknown {kind} {key!r}") from None


def _process(env: ProcessEnv, process_id: str) -> Process:
    return _get("process", env.state.process, process_id)


TOOLS: ToolRegistry[ProcessEnv] = ToolRegistry()
"""Every process_mapping tool, in the order a model sees them."""


@TOOLS.tool()
def get_automation_policy(env: ProcessEnv) -> dict[str, Any]:
    """The automation policy: the exception-rate limit, the classification rules in order, and
    how the business case is computed."""
    del env
    return policy_summary()


@TOOLS.tool()
def list_processes(env: ProcessEnv) -> list[dict[str, Any]]:
    """Every process: id, name and department."""
    return [
        {"process_id": p.process_id, "name": p.name, "department": p.department}
        for p in env.state.processes
    ]


@TOOLS.tool()
def get_sop(env: ProcessEnv, process_id: str) -> dict[str, Any]:
    """The process's standard operating procedure as documented (it may be out of date).

    Args:
        process_id: Process id, e.g. P-INV.
    """
    p = _process(env, process_id)
    return {"process_id": p.process_id, "name": p.name, "sop": p.sop}


@TOOLS.tool()
def get_event_log(env: ProcessEnv, process_id: str) -> list[dict[str, Any]]:
    """The process's event log in export order (event id), which need not be time order.

    Each event: event_id, case_id (the process instance), activity, actor_id, role_id,
    system_id, timestamp (ISO 8601, local time).

    Args:
        process_id: Process id, e.g. P-INV.
    """
    _process(env, process_id)
    return [e.model_dump(mode="json", exclude={"process_id"}) for e in env.state.log_of(process_id)]


@TOOLS.tool()
def list_steps(env: ProcessEnv, process_id: str) -> list[dict[str, Any]]:
    """The process's step catalogue (step_id and activity name), in step-id order, which is not
    the workflow order.

    Args:
        process_id: Process id, e.g. P-INV.
    """
    _process(env, process_id)
    return [{"step_id": s.step_id, "activity": s.activity} for s in env.state.steps_of(process_id)]


@TOOLS.tool()
def get_step_attributes(env: ProcessEnv, step_id: str) -> dict[str, Any]:
    """A step's attributes: volume_per_month, handle_time_minutes, input_structure
    (structured, semi_structured, unstructured), decision_type (rule_based, judgement),
    exception_rate_pct (whole percent), system_access (api, screen_only) and known defects.

    Args:
        step_id: Step id, e.g. INV-CAP.
    """
    return _get("step", env.state.step, step_id).model_dump(mode="json")


@TOOLS.tool()
def get_cost_rates(env: ProcessEnv) -> dict[str, Any]:
    """Hourly cost of every role in integer cents, and the currency."""
    return {
        "currency": env.state.currency,
        "roles": [r.model_dump(mode="json") for r in env.state.roles],
    }


@TOOLS.tool()
def list_systems(env: ProcessEnv) -> list[dict[str, Any]]:
    """Every system steps are performed in: id and name."""
    return [s.model_dump(mode="json") for s in env.state.systems]
