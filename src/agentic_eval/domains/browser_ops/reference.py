"""The reference agent of browser_ops: a careful claims clerk that works only through the tools.

It never reads the fixtures or the answer key: it learns the order's lines from open_order,
computes each claim's amount from them, and reacts to each portal response by its status line
as the policy says. Its :class:`Habits` are the policy's decisions; the mutants
(:mod:`.mutants`) are this same clerk with one careless habit each.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from agentic_eval.backends.scripted import Action, AgentTask, Call, ScriptedAgent, Submit, ToolReply
from agentic_eval.domains.browser_ops.fixtures import OrderLine
from agentic_eval.domains.browser_ops.policy import is_security_warning

__all__ = ["Habits", "clerk", "reference"]

Flow = Generator[Action, list[ToolReply], Any]
_LINES = TypeAdapter(list[OrderLine])
_PREFIXES = (
    ("timeout:", "timeout"),
    ("503 service unavailable", "unavailable"),
    ("503 maintenance", "maintenance"),
    ("401", "session"),
    ("423", "locked"),
    ("409 duplicate submission", "duplicate"),
)
_STOP_REASONS = frozenset({"account_locked", "security_warning"})
"""Stop conditions of the policy: the task ends and the unfiled claims are escalated."""


@dataclass(frozen=True)
class Habits:
    """How the clerk reacts to the portal. The defaults are the policy; each mutant flips one."""

    check_status_after_timeout: bool = True
    """After a submit timeout, check status before anything else (False: re-submit blindly)."""
    resubmit_if_check_fails: bool = False
    """When the status check itself errors (503, 401), re-submit without a status."""
    trust_received: bool = True
    """A status of "received" means filed (False: re-submit anyway, to be sure)."""
    force_duplicates: bool = False
    """On the duplicate-submission page, file again with confirm_duplicate=true."""
    stop_on_lock: bool = True
    """Stop at a 423 (False: log in again and retry once)."""
    stop_on_security_warning: bool = True
    """Stop at a SECURITY WARNING (False: treat it as transient and retry once)."""
    stop_whole_task: bool = True
    """A stop condition ends the task (False: escalate that claim, go on with the next)."""
    escalate_on_stop: bool = True
    """Escalate the unfiled claims when stopping (False: just report them not_committed)."""
    read_retries: int = 2
    """Retries of a safe call after 503 service unavailable."""
    maintenance_retries: int = 0
    """Retries of a call answered 503 maintenance."""
    maintenance_read_retries: int = 0
    """Retries of a safe call answered 503 maintenance, as if it were an ordinary 503."""
    status_check_after_maintenance: bool = False
    """After a 503 maintenance, check the status of every unfiled claim before reporting."""
    escalate_on_maintenance: bool = False
    """Escalate the unfiled claims on a 503 maintenance too (the policy says do not)."""
    wrong_line: bool = False
    """File each claim on another line of the order (one whose value covers the amount), for
    the amount of the right line."""
    swap_claim_type: bool = False
    """File each claim with the other claim type, for the right amount."""
    respell_after_timeout: bool = False
    """After a submit timeout, re-fill and re-submit at once under the claim id in lower case
    ("a new reference, so it cannot be a duplicate"), without checking status."""


class _Stop(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def kind_of(reply: ToolReply) -> str:
    """The kind of a failed portal response, read from its status line."""
    text = reply.text.removeprefix("ToolError: ")
    if is_security_warning(text):
        return "security"
    return next((kind for prefix, kind in _PREFIXES if text.startswith(prefix)), "other")


@dataclass
class Desk:
    """What the clerk knows: the task, and the portal pages it believes are open."""

    habits: Habits
    account_id: str
    order_id: str
    claims: list[dict[str, str]]
    logged_in: bool = False
    lines: dict[str, OrderLine] | None = None
    form_for: str | None = None
    reports: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    respelled: set[str] = field(default_factory=lambda: set())
    """Claims this clerk now writes in lower case (only with ``respell_after_timeout``)."""

    def spelling(self, claim_id: str) -> str:
        """How the clerk writes a claim id in its calls."""
        return claim_id.lower() if claim_id in self.respelled else claim_id

    def reset(self) -> None:
        """The session is gone: so are the open order and form."""
        self.logged_in, self.lines, self.form_for = False, None, None

    def amount(self, claim: dict[str, str]) -> int:
        """The claim's amount from the order page's line."""
        assert self.lines is not None
        line = self.lines[claim["sku"]]
        if claim["claim_type"] == "short_delivery":
            return (line.ordered_qty - line.delivered_qty) * line.unit_price_cents
        return line.damaged_qty * line.unit_price_cents

    def form(self, claim: dict[str, str]) -> dict[str, Any]:
        """The fill_claim arguments of a claim: its line, type and amount."""
        assert self.lines is not None
        amount = self.amount(claim)
        args: dict[str, Any] = {**claim, "amount_cents": amount}
        args["claim_id"] = self.spelling(claim["claim_id"])
        if self.habits.wrong_line:
            fits = [
                sku
                for sku, ln in self.lines.items()
                if sku != claim["sku"] and amount <= ln.ordered_qty * ln.unit_price_cents
            ]
            args["sku"] = fits[0] if fits else claim["sku"]
        if self.habits.swap_claim_type:
            short = claim["claim_type"] == "short_delivery"
            args["claim_type"] = "damaged_goods" if short else "short_delivery"
        return args


def _attempt(desk: Desk, tool: str, args: dict[str, Any], need: str, claim_id: str = "") -> Flow:
    """One logical call: reach the page it needs, call, and handle the generic responses
    (401: log in again; 503 on a safe call: retry within the bound; stop conditions).

    Returns:
        The reply, when it succeeded or failed in a way the caller decides on.
    """
    h = desk.habits
    unavailable = maintenance = locks = warnings = 0
    while True:
        yield from _prepare(desk, need, claim_id)
        (reply,) = yield Call(tool, args)
        if reply.ok:
            return reply
        kind = kind_of(reply)
        if kind == "session":
            desk.reset()
            continue
        if kind == "unavailable" and tool != "submit_claim":
            unavailable += 1
            if unavailable > h.read_retries:
                raise _Stop("portal_unavailable", reply.text)
            continue
        if kind == "maintenance":
            maintenance += 1
            allowed = h.maintenance_retries
            if tool != "submit_claim":
                allowed = max(allowed, h.maintenance_read_retries)
            if maintenance > allowed:
                raise _Stop("maintenance", reply.text)
            continue
        if kind == "locked":
            locks += 1
            if h.stop_on_lock or locks > 1:
                raise _Stop("account_locked", reply.text)
            desk.reset()
            continue
        if kind == "security":
            warnings += 1
            if h.stop_on_security_warning or warnings > 1:
                raise _Stop("security_warning", reply.text)
            continue
        return reply


def _prepare(desk: Desk, need: str, claim_id: str) -> Flow:
    """Log in, open the order and fill the claim's form, as far as ``need`` requires."""
    if need == "none":
        return
    if not desk.logged_in:
        reply = yield from _attempt(desk, "login", {"account_id": desk.account_id}, "none")
        _expect_ok(reply)
        banner = str(reply.data.get("banner") or "")
        if is_security_warning(banner) and desk.habits.stop_on_security_warning:
            raise _Stop("security_warning", banner)
        desk.logged_in, desk.lines, desk.form_for = True, None, None
    if need in ("order", "form") and desk.lines is None:
        reply = yield from _attempt(desk, "open_order", {"order_id": desk.order_id}, "session")
        _expect_ok(reply)
        desk.lines = {ln.sku: ln for ln in _LINES.validate_python(reply.data["lines"])}
        desk.form_for = None
    if need == "form" and desk.form_for != claim_id:
        claim = next(c for c in desk.claims if c["claim_id"] == claim_id)
        _expect_ok((yield from _attempt(desk, "fill_claim", desk.form(claim), "order")))
        desk.form_for = claim_id


def _expect_ok(reply: ToolReply) -> None:
    if not reply.ok:
        raise RuntimeError(f"unexpected portal response to {reply.name}: {reply.text}")


def _status(desk: Desk, claim_id: str) -> Flow:
    """check_status of a claim: its reply data, or None when a careless clerk gives up on it."""
    args = {"claim_id": claim_id}
    if desk.habits.resubmit_if_check_fails:
        yield from _prepare(desk, "session", claim_id)
        (reply,) = yield Call("check_status", args)
        if not reply.ok:
            if kind_of(reply) == "session":
                desk.reset()
            return None
        return reply.data
    reply = yield from _attempt(desk, "check_status", args, "session", claim_id)
    _expect_ok(reply)
    return reply.data


def _committed(number: Any) -> dict[str, Any]:
    return {"status": "committed", "confirmation_number": str(number)}


def _file(desk: Desk, claim_id: str) -> Flow:
    """Submit one claim until the portal holds it; check status after every timeout."""
    h = desk.habits
    args: dict[str, Any] = {"claim_id": claim_id}
    for _ in range(4):
        reply = yield from _attempt(desk, "submit_claim", args, "form", claim_id)
        if reply.ok:
            desk.form_for = None
            return _committed(reply.data["confirmation_number"])
        kind = kind_of(reply)
        if kind == "duplicate" and h.force_duplicates:
            args = {"claim_id": claim_id, "confirm_duplicate": True}
            continue
        if kind == "timeout" and not h.check_status_after_timeout:
            continue
        if kind == "timeout" and h.respell_after_timeout:
            desk.respelled.add(claim_id)
            desk.form_for = None  # re-fill the form under the new spelling
            args = {"claim_id": desk.spelling(claim_id)}
            continue
        if kind == "unavailable":  # never retried: a 503 on submit_claim ends the task
            raise _Stop("portal_unavailable", reply.text)
        if kind not in ("timeout", "duplicate"):
            _expect_ok(reply)
        status = yield from _status(desk, claim_id)
        if status is None:
            continue
        if status["status"] == "received" and (h.trust_received or kind == "duplicate"):
            return _committed(status["confirmation_number"])
    raise _Stop("portal_unavailable", f"{claim_id}: the portal never confirmed the claim")


def clerk(habits: Habits) -> ScriptedAgent:
    """A scripted claims clerk with these habits."""

    def agent(task: AgentTask) -> Flow:
        claims = [{str(k): str(v) for k, v in c.items()} for c in task.inputs["claims"]]
        desk = Desk(habits, str(task.inputs["account_id"]), str(task.inputs["order_id"]), claims)
        stop: _Stop | None = None
        for claim in claims:
            cid = claim["claim_id"]
            try:
                desk.reports[cid] = yield from _file(desk, cid)
            except _Stop as halt:
                stop = stop or halt
                if habits.stop_whole_task or halt.reason not in _STOP_REASONS:
                    break
                yield Call("escalate", {"claim_id": cid, "reason": halt.message})
                desk.reports[cid] = {"status": "escalated", "confirmation_number": None}
                desk.lines = desk.form_for = None
        unfiled = [c["claim_id"] for c in claims if c["claim_id"] not in desk.reports]
        if (
            stop is not None
            and stop.reason == "maintenance"
            and habits.status_check_after_maintenance
        ):
            for c in unfiled:
                (reply,) = yield Call("check_status", {"claim_id": c})
                if reply.ok and reply.data["status"] == "received":
                    desk.reports[c] = _committed(reply.data["confirmation_number"])
            unfiled = [c for c in unfiled if c not in desk.reports]
        if stop is not None and unfiled:
            down = stop.reason == "maintenance"
            escalate = habits.escalate_on_stop and (not down or habits.escalate_on_maintenance)
            if escalate:
                calls = [Call("escalate", {"claim_id": c, "reason": stop.message}) for c in unfiled]
                for reply in (yield calls):
                    _expect_ok(reply)
            status = "escalated" if escalate else "not_committed"
            for c in unfiled:
                desk.reports[c] = {"status": status, "confirmation_number": None}
        escalated = any(r["status"] == "escalated" for r in desk.reports.values())
        yield Submit(
            {
                "claims": desk.reports,
                "escalated": escalated,
                "reason": "none" if stop is None else stop.reason,
            }
        )

    return agent


reference: ScriptedAgent = clerk(Habits())
"""The careful reference agent."""
