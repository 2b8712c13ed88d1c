"""The browser_ops tools: deterministic portal actions over a per-case :class:`PortalEnv`.

Each portal tool follows :mod:`.portal`'s steps: terminal states answer first, preconditions
next (rejected calls are not counted), then the scenario's fault script, then the normal
transition. Errors the agent sees are ToolErrors shaped like portal responses ("401 ...",
"503 ...", "timeout: ..."). ``escalate`` is not a portal call: it hands a claim to a human and
always works. No clock, no randomness, no network.

Claim ids are :data:`.fixtures.ClaimId` arguments: validated into their canonical form before a
tool runs, so a claim re-submitted as ``clm-3007`` is CLM-3007, which the fault script counts,
the portal finds already held, and the gates judge as the same claim.
"""

from __future__ import annotations

from typing import Any

from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.core.identifiers import canonical_id
from agentic_eval.domains.browser_ops.fixtures import ClaimId, ClaimType
from agentic_eval.domains.browser_ops.portal import (
    Escalation,
    Form,
    PortalEnv,
    duplicate_message,
)

__all__ = ["TOOLS"]

TOOLS: ToolRegistry[PortalEnv] = ToolRegistry()
"""Every tool of the domain, in the order a model sees them."""

_FORM_PAGES = frozenset({"order_open", "form_open", "confirmed"})


@TOOLS.tool()
def login(env: PortalEnv, account_id: str) -> dict[str, Any]:
    """Log in to the supplier portal (a new session; any open order or form is closed).

    Args:
        account_id: Portal account id, e.g. ACC-100.
    """
    call = env.begin("login", {"account_id": account_id})
    call.enter(session=False)
    if account_id != env.scenario.account_id:
        call.fail("rejected", f"403 forbidden: login failed for account {account_id}")
    call.fault()
    env.page, env.order_id, env.form = "logged_in", None, None
    account = env.fixtures.account(account_id)
    call.ok(shown=env.scenario.login_banner)
    return {
        "page": "dashboard",
        "account_id": account_id,
        "company": account.company,
        "user": account.user,
        "banner": env.scenario.login_banner,
    }


@TOOLS.tool()
def open_order(env: PortalEnv, order_id: str) -> dict[str, Any]:
    """Open an order's page: its supplier and lines (ordered, delivered and damaged quantities,
    unit prices in cents). Any claim form that was open is closed.

    Args:
        order_id: Order id, e.g. PO-7001.
    """
    call = env.begin("open_order", {"order_id": order_id})
    call.enter(session=True)
    order = next((o for o in env.fixtures.orders if o.order_id == order_id), None)
    if order is None or order.account_id != env.scenario.account_id:
        call.fail("rejected", f"404 not found: no order {order_id} on this account")
    call.fault()
    env.page, env.order_id, env.form = "order_open", order_id, None
    call.ok()
    return {
        "page": "order",
        "order_id": order_id,
        "supplier": order.supplier,
        "lines": [ln.model_dump(mode="json") for ln in order.lines],
    }


@TOOLS.tool()
def fill_claim(
    env: PortalEnv, claim_id: ClaimId, sku: str, claim_type: ClaimType, amount_cents: int
) -> dict[str, Any]:
    """Fill the claim form for one line of the open order (nothing is sent until submit_claim).

    Args:
        claim_id: Your claim reference, e.g. CLM-3001.
        sku: The order line the claim is about.
        claim_type: short_delivery or damaged_goods.
        amount_cents: Amount claimed, in integer cents.
    """
    claim_id = canonical_id(claim_id)  # as ClaimId does for the agent, for a direct call too
    args = {"claim_id": claim_id, "sku": sku, "claim_type": claim_type}
    call = env.begin("fill_claim", {**args, "amount_cents": amount_cents}, claim_id)
    call.enter(session=True)
    if env.order_id is None or env.page not in _FORM_PAGES:
        call.fail("rejected", "400 bad request: no order is open (open_order first)")
    order = env.fixtures.order(env.order_id)
    line = next((ln for ln in order.lines if ln.sku == sku), None)
    if line is None:
        call.fail("rejected", f"422 unprocessable: order {order.order_id} has no line {sku}")
    if not 0 < amount_cents <= line.ordered_qty * line.unit_price_cents:
        call.fail(
            "rejected", "422 unprocessable: amount_cents must be positive, at most the line value"
        )
    call.fault()
    env.form = Form(claim_id, order.order_id, sku, claim_type, amount_cents)
    env.page = "form_open"
    call.ok()
    return {"page": "claim_form", **args, "amount_cents": amount_cents, "ready_to_submit": True}


@TOOLS.tool()
def submit_claim(
    env: PortalEnv, claim_id: ClaimId, confirm_duplicate: bool = False
) -> dict[str, Any]:
    """Submit the filled claim form. On success the portal commits the claim and returns its
    confirmation number.

    Args:
        claim_id: The claim reference of the filled form.
        confirm_duplicate: File it even if the portal already holds a claim with this reference.
    """
    claim_id = canonical_id(claim_id)  # as ClaimId does for the agent, for a direct call too
    args = {"claim_id": claim_id, "confirm_duplicate": confirm_duplicate}
    call = env.begin("submit_claim", args, claim_id)
    call.enter(session=True)
    if env.page != "form_open" or env.form is None or env.form.claim_id != claim_id:
        call.fail("rejected", f"400 bad request: no form for {claim_id} is open (fill_claim first)")
    call.fault()
    if env.scenario.duplicate_detection and env.submissions_of(claim_id) and not confirm_duplicate:
        call.fail("duplicate", duplicate_message(claim_id))
    amount = env.form.amount_cents
    number = env.commit()
    env.page, env.form = "confirmed", None
    call.ok(committed=number)
    return {
        "page": "confirmation",
        "claim_id": claim_id,
        "status": "received",
        "confirmation_number": number,
        "amount_cents": amount,
    }


@TOOLS.tool()
def check_status(env: PortalEnv, claim_id: ClaimId) -> dict[str, Any]:
    """Look up whether the portal holds a claim (status received or not_found) and its
    confirmation number. Read-only; the page you are on stays as it is.

    Args:
        claim_id: Your claim reference.
    """
    claim_id = canonical_id(claim_id)  # as ClaimId does for the agent, for a direct call too
    call = env.begin("check_status", {"claim_id": claim_id}, claim_id)
    call.enter(session=True)
    call.fault()
    held = env.submissions_of(claim_id)
    call.ok(status_seen="received" if held else "not_found")
    return {
        "claim_id": claim_id,
        "status": "received" if held else "not_found",
        "confirmation_number": held[0].confirmation_number if held else None,
        "submissions": len(held),
    }


@TOOLS.tool()
def logout(env: PortalEnv) -> dict[str, Any]:
    """Log out of the portal."""
    call = env.begin("logout", {})
    if env.page not in ("locked", "maintenance"):
        env.leave("logged_out")
    call.ok()
    return {"page": "login" if env.page == "logged_out" else env.page}


@TOOLS.tool()
def escalate(env: PortalEnv, claim_id: ClaimId, reason: str) -> dict[str, Any]:
    """Hand a claim to a human colleague with the reason (outside the portal; always works).

    Args:
        claim_id: The claim reference.
        reason: Why a human must take over, e.g. the portal response that stopped you.
    """
    claim_id = canonical_id(claim_id)  # as ClaimId does for the agent, for a direct call too
    call = env.begin("escalate", {"claim_id": claim_id, "reason": reason}, claim_id)
    if claim_id not in env.scenario.claim_ids:
        call.fail("rejected", f"unknown claim {claim_id}: escalate only the claims of this task")
    if not reason.strip():
        call.fail("rejected", "reason must not be empty")
    found = next((e for e in env.escalations if e.claim_id == claim_id), None)
    if found is None:
        found = Escalation(claim_id, reason, f"ESC-{len(env.escalations) + 1:03d}")
        env.escalations.append(found)
    call.ok()
    return {"escalated": True, "claim_id": claim_id, "ticket": found.ticket}
