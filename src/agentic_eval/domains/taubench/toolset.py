"""A tau-bench environment's tools as a :class:`ToolRegistry`: our re-implementations, with
tau-bench's error semantics, shown to the agent with the checkout's own schemas.

Every tool that changes the database is ``needs_consent`` (the policy's explicit confirmation,
judged by the ``user_consent`` gate); ``transfer_to_human_agents`` ends the episode (tau-bench's
terminate tool).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from agentic_eval.agent.tools import ToolRegistry, make_tool
from agentic_eval.core.model import ToolSpec
from agentic_eval.domains.taubench import (
    airline_reads,
    airline_writes,
    common_tools,
    retail_reads,
    retail_writes,
)
from agentic_eval.domains.taubench.database import TauDatabase

TRANSFER = "transfer_to_human_agents"
"""The tool that ends the episode (tau-bench's ``terminate_tools``)."""

_RETAIL_READS: tuple[Callable[..., str], ...] = (
    common_tools.calculate,
    retail_reads.find_user_id_by_email,
    retail_reads.find_user_id_by_name_zip,
    retail_reads.get_order_details,
    retail_reads.get_product_details,
    retail_reads.get_user_details,
    retail_reads.list_all_product_types,
    common_tools.think,
)
_RETAIL_WRITES: tuple[tuple[Callable[..., str], str], ...] = (
    (retail_writes.cancel_pending_order, "order_id"),
    (retail_writes.exchange_delivered_order_items, "order_id"),
    (retail_writes.modify_pending_order_address, "order_id"),
    (retail_writes.modify_pending_order_items, "order_id"),
    (retail_writes.modify_pending_order_payment, "order_id"),
    (retail_writes.modify_user_address, "user_id"),
    (retail_writes.return_delivered_order_items, "order_id"),
)
_AIRLINE_READS: tuple[Callable[..., str], ...] = (
    common_tools.calculate,
    airline_reads.get_reservation_details,
    airline_reads.get_user_details,
    airline_reads.list_all_airports,
    airline_reads.search_direct_flight,
    airline_reads.search_onestop_flight,
    common_tools.think,
)
_AIRLINE_WRITES: tuple[tuple[Callable[..., str], str], ...] = (
    (airline_writes.book_reservation, "user_id"),
    (airline_writes.cancel_reservation, "reservation_id"),
    (airline_writes.send_certificate, "user_id"),
    (airline_writes.update_reservation_baggages, "reservation_id"),
    (airline_writes.update_reservation_flights, "reservation_id"),
    (airline_writes.update_reservation_passengers, "reservation_id"),
)
_Reads = tuple[Callable[..., str], ...]
_Writes = tuple[tuple[Callable[..., str], str], ...]
_TOOLS: dict[str, tuple[_Reads, _Writes]] = {
    "retail": (_RETAIL_READS, _RETAIL_WRITES),
    "airline": (_AIRLINE_READS, _AIRLINE_WRITES),
}
"""Each environment's read tools, and its write tools with the argument naming their target."""


def _writes(env: str) -> _Writes:
    if env not in _TOOLS:
        raise ValueError(f"tau-bench {env}: its tools are not re-implemented")
    return _TOOLS[env][1]


def implementations(env: str) -> dict[str, Callable[..., str]]:
    """Each tool of ``env`` by name, with tau-bench's error semantics (what the answer key
    applies the gold actions with, and what the agent's calls run).

    Raises:
        ValueError: For an environment whose tools are not re-implemented.
    """
    writes = _writes(env)
    fns = [*_TOOLS[env][0], *(fn for fn, _ in writes), common_tools.transfer_to_human_agents]
    return {fn.__name__: common_tools.tau_semantics(fn) for fn in fns}


def _shown(tool: Any, info: Mapping[str, Any] | None) -> Any:
    """``tool`` described as the checkout describes it (its description and exact parameter
    schema), when the checkout has it."""
    if info is None or not isinstance(info.get("parameters"), dict):
        return tool
    description = str(info.get("description", tool.description))
    spec = ToolSpec(name=tool.name, description=description, input_schema=info["parameters"])
    return dataclasses.replace(tool, description=description, spec=spec)


def registry(env: str, infos: Mapping[str, Mapping[str, Any]]) -> ToolRegistry[TauDatabase]:
    """The tools an agent gets in ``env``, in tau-bench's order (alphabetical, as its
    ``ALL_TOOLS``), shown with the schemas ``infos`` gives (the checkout's ``get_info``)."""
    fns = implementations(env)
    targets = {fn.__name__: target for fn, target in _writes(env)}
    tools: ToolRegistry[TauDatabase] = ToolRegistry()
    for name in sorted(fns):
        tool = make_tool(
            fns[name],
            name=name,
            mutates=targets.get(name),
            needs_consent=name in targets,
            ends_episode=name == TRANSFER,
        )
        tools.add(_shown(tool, infos.get(name)))
    return tools


def consent_tools(env: str) -> frozenset[str]:
    """The tools of ``env`` that change the database (the user must confirm each call)."""
    return frozenset(fn.__name__ for fn, _ in _writes(env))
