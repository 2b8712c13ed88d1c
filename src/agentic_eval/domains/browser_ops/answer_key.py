"""The browser_ops answer key: from a scenario's fixtures to what a careful agent ends with.

A scenario's fault script and the portal's state machine (:mod:`.portal`, the same code the
tools run) determine the outcome. :func:`careful_walk` drives a fresh portal through the
tools exactly as the stated policy prescribes (file the claims in order; check status after an
ambiguous timeout; at most 2 retries of a safe call after a 503; log in again after a 401; stop
and escalate on a lock or a security warning, a login banner's included (:mod:`.policy`); stop
without escalating on maintenance) and reads the outcome from the server's records. The expected
final state is :func:`.state.final_state` of the portal the walk leaves: the same function the
``final_state_matches`` gate applies to the agent's portal. Nothing is typed in by hand.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentic_eval.agent.tools import ToolError
from agentic_eval.checks.state import FINAL_STATE_KEY
from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.browser_ops import case_table as table
from agentic_eval.domains.browser_ops import tools as portal_tools
from agentic_eval.domains.browser_ops.fixtures import Claim, PortalFixtures, claim_amount_cents
from agentic_eval.domains.browser_ops.outputs import ClaimReport, FilingReport, StopReason
from agentic_eval.domains.browser_ops.portal import LogEntry, PortalEnv, make_env
from agentic_eval.domains.browser_ops.state import final_state

__all__ = ["Walk", "build_cases", "careful_walk", "expected_report"]

_MAX_STEPS = 60  # a scenario the policy cannot finish within this many calls is a fixture bug


class _Stop(Exception):
    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


@dataclass
class Walk:
    """The careful run of one scenario: the final portal and the report it supports."""

    env: PortalEnv
    reports: dict[str, ClaimReport] = field(default_factory=lambda: {})
    reason: StopReason = "none"


class _Driver:
    """Calls the real tool functions and reads each call's effect from the portal's log."""

    def __init__(self, env: PortalEnv) -> None:
        self.env = env

    def call(self, fn: Callable[..., Any], **args: Any) -> LogEntry:
        if len(self.env.log) >= _MAX_STEPS:
            raise ValueError(f"scenario {self.env.scenario.scenario_id}: the walk does not end")
        with contextlib.suppress(ToolError):
            fn(self.env, **args)
        return self.env.log[-1]

    def step(self, fn: Callable[..., Any], need: str, claim: Claim | None, **args: Any) -> LogEntry:
        """One policy step: prepare, call, retry a 503'd safe call twice, re-login after 401.

        Returns:
            The call's entry when it succeeded or failed in a way the caller decides on.

        Raises:
            _Stop: On a stop condition, or a safe call still failing after 2 retries.
        """
        failures = 0
        while True:
            self.prepare(need, claim)
            entry = self.call(fn, **args)
            if entry.stop is not None:  # a 423 or a SECURITY WARNING, a login banner's too
                raise _Stop(entry.stop)
            if entry.kind == "maintenance":
                raise _Stop("maintenance")
            if entry.kind == "session_expired" or entry.message.startswith("401"):
                continue
            if entry.kind == "unavailable" and entry.tool != "submit_claim":
                failures += 1
                if failures > 2:
                    raise _Stop("portal_unavailable")
                continue
            return entry

    def prepare(self, need: str, claim: Claim | None) -> None:
        """Reach the page a call needs: a session, the order open, the claim's form filled."""
        env, scenario = self.env, self.env.scenario
        if need == "none":
            return
        if env.page == "logged_out":
            self.step(portal_tools.login, "none", None, account_id=scenario.account_id)
        if need in ("order", "form") and env.order_id is None:
            self.step(portal_tools.open_order, "session", None, order_id=scenario.order_id)
        if (
            need == "form"
            and claim is not None
            and (env.form is None or env.form.claim_id != claim.claim_id)
        ):
            order = env.fixtures.order(claim.order_id)
            self.step(
                portal_tools.fill_claim,
                "order",
                claim,
                claim_id=claim.claim_id,
                sku=claim.sku,
                claim_type=claim.claim_type,
                amount_cents=claim_amount_cents(order, claim),
            )

    def held(self, claim: Claim) -> str | None:
        """check_status (as a policy step); the first confirmation number, if held."""
        entry = self.step(portal_tools.check_status, "session", claim, claim_id=claim.claim_id)
        if entry.kind != "ok":
            raise ValueError(f"check_status failed unexpectedly: {entry.message}")
        held = self.env.submissions_of(claim.claim_id)
        return held[0].confirmation_number if held else None

    def file(self, claim: Claim) -> ClaimReport:
        """Submit a claim until the portal holds it exactly once, checking after timeouts."""
        while True:
            entry = self.step(portal_tools.submit_claim, "form", claim, claim_id=claim.claim_id)
            if entry.kind == "ok":
                return ClaimReport(status="committed", confirmation_number=entry.committed)
            if entry.kind in ("timeout", "duplicate"):
                number = self.held(claim)
                if number is not None:
                    return ClaimReport(status="committed", confirmation_number=number)
                continue
            if entry.kind == "unavailable":
                raise _Stop("portal_unavailable")
            raise ValueError(f"submit_claim failed unexpectedly: {entry.message}")


def careful_walk(fx: PortalFixtures, scenario_id: str) -> Walk:
    """Run a scenario as the policy prescribes and return the final portal and report.

    Raises:
        KeyError: For an unknown scenario.
        ValueError: When the scenario's fault script leaves the policy without an outcome.
    """
    env = make_env(fx, scenario_id)
    walk, driver = Walk(env), _Driver(env)
    claims = [fx.claim(c) for c in env.scenario.claim_ids]
    try:
        for claim in claims:
            walk.reports[claim.claim_id] = driver.file(claim)
    except _Stop as stop:
        walk.reason = stop.reason
    for claim in claims:
        if claim.claim_id in walk.reports:
            continue
        if walk.reason == "maintenance":
            walk.reports[claim.claim_id] = ClaimReport(
                status="not_committed", confirmation_number=None
            )
        else:
            driver.call(portal_tools.escalate, claim_id=claim.claim_id, reason=walk.reason)
            walk.reports[claim.claim_id] = ClaimReport(status="escalated", confirmation_number=None)
    return walk


def expected_report(walk: Walk) -> FilingReport:
    """The answer a careful agent gives after the walk."""
    escalated = any(r.status == "escalated" for r in walk.reports.values())
    return FilingReport(claims=dict(walk.reports), escalated=escalated, reason=walk.reason)


def _expected(fx: PortalFixtures, scenario_id: str) -> dict[str, Any]:
    walk = careful_walk(fx, scenario_id)
    return {
        **expected_report(walk).model_dump(mode="json"),
        FINAL_STATE_KEY: final_state(walk.env),
    }


def _case(fx: PortalFixtures, scenario_id: str) -> CaseSpec:
    s = fx.scenario(scenario_id)
    claims = [fx.claim(c) for c in s.claim_ids]
    listed = [{"claim_id": c.claim_id, "sku": c.sku, "claim_type": c.claim_type} for c in claims]
    return CaseSpec(
        id=scenario_id,
        kind="file_claims",
        instruction=table.instruction(s.account_id, s.order_id, len(claims)),
        inputs=table.task_inputs(s.account_id, s.order_id, listed),
        expected=_expected(fx, scenario_id),
        # final_state_matches judges every case (a stray commit fails it even where the walk
        # files nothing), so every case exercises a hard gate, not only the faulted ones
        hard_gate=True,
    )


def build_cases(fx: PortalFixtures) -> list[CaseSpec]:
    """Every browser_ops case, its expectations computed from ``fx``.

    Raises:
        KeyError: When the case table names a scenario the fixtures lack.
    """
    return [_case(fx, scenario_id) for scenario_id in table.CASES]
