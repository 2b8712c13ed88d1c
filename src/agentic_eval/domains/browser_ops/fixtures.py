"""Typed fixtures of browser_ops: a mock supplier portal, its accounts, orders, claims and the
per-case scenarios (which claims to file and the deterministic fault script).

Claim ids are written in their canonical form (:data:`ClaimId`), the one spelling the tools
turn any claim reference into.

Money is integer cents of the portal's ``currency`` everywhere (``*_cents`` fields). Every fault
fires on a fixed call number of a fixed tool (never at random), so a scenario and the portal's
state machine (:mod:`.portal`) determine exactly what a careful agent can end with.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Literal, Self, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from agentic_eval.core.identifiers import canonical_id
from agentic_eval.domains.fixtures import FixtureLoader, find_by_id, unique_ids

FIXTURES_PATH = Path(__file__).with_name("fixtures.json")
"""The committed, fictional gold data."""

ClaimId = Annotated[str, AfterValidator(canonical_id)]
"""A tool argument holding a claim reference: validated into its canonical spelling
(:func:`~agentic_eval.core.identifiers.canonical_id`), so ``clm-3007`` is CLM-3007 to the
portal, its fault scripts, its confirmation numbers, the log gates and the final state alike."""

ClaimType = Literal["short_delivery", "damaged_goods"]
"""Kinds of claim a retailer files against a supplier's order line."""

PortalTool = Literal["login", "open_order", "fill_claim", "submit_claim", "check_status"]
"""Portal tools a fault can hit (``logout`` and ``escalate`` never fail)."""

FaultKind = Literal[
    "timeout_committed",
    "timeout_not_committed",
    "unavailable",
    "session_expired",
    "account_locked",
    "maintenance",
    "security_warning",
]
"""How a faulted call fails. A timeout of ``submit_claim`` either did or did not commit on the
server; every other fault means the request was not processed."""

CLAIM_TOOLS: frozenset[str] = frozenset({"fill_claim", "submit_claim", "check_status"})
"""Tools whose calls are counted per claim (the others are counted per session of the case)."""

FAULTS_BY_TOOL: dict[str, frozenset[str]] = {
    "login": frozenset({"unavailable", "account_locked", "maintenance"}),
    "open_order": frozenset(
        {"unavailable", "session_expired", "account_locked", "security_warning"}
    ),
    "fill_claim": frozenset(
        {"unavailable", "session_expired", "account_locked", "security_warning"}
    ),
    "submit_claim": frozenset(
        {
            "timeout_committed",
            "timeout_not_committed",
            "session_expired",
            "account_locked",
            "maintenance",
            "security_warning",
        }
    ),
    "check_status": frozenset({"unavailable", "session_expired", "account_locked"}),
}
"""Which fault kinds each portal tool can show."""

_T = TypeVar("_T")


def confirmation_number(claim_id: str, n: int) -> str:
    """The confirmation number the portal gives the ``n``-th committed submission of a claim.

    Deterministic, so the answer key knows it; a second commit of the same claim gets a
    different number, as a real double filing would.
    """
    digest = hashlib.sha256(f"{claim_id}#{n}".encode()).hexdigest()
    return f"CN-{int(digest[:10], 16) % 1_000_000:06d}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Account(_Model):
    """A retailer's login on the supplier portal (no secrets: the session is simulated)."""

    account_id: str = Field(description="Portal account id, e.g. ACC-100.")
    company: str = Field(description="The retailer the account belongs to (fictional).")
    user: str = Field(description="The user name shown after login.")


class OrderLine(_Model):
    """One line of an order as the portal shows it."""

    sku: str = Field(description="Stock-keeping unit.")
    description: str = Field(description="Item description.")
    ordered_qty: int = Field(gt=0, description="Units ordered.")
    delivered_qty: int = Field(ge=0, description="Units delivered.")
    damaged_qty: int = Field(ge=0, description="Delivered units that arrived damaged.")
    unit_price_cents: int = Field(gt=0, description="Agreed unit price in cents.")

    @model_validator(mode="after")
    def _quantities(self) -> Self:
        if self.delivered_qty > self.ordered_qty or self.damaged_qty > self.delivered_qty:
            raise ValueError(f"{self.sku}: delivered <= ordered and damaged <= delivered")
        return self


class Order(_Model):
    """A purchase order visible on the portal to one account."""

    order_id: str = Field(description="Order id, e.g. PO-7001.")
    account_id: str = Field(description="The account that placed it.")
    supplier: str = Field(description="Supplier name (fictional).")
    lines: tuple[OrderLine, ...] = Field(min_length=1, description="Order lines.")

    def line(self, sku: str) -> OrderLine:
        """The line of this SKU.

        Raises:
            KeyError: When the order has no such line.
        """
        return find_by_id(self.lines, sku, lambda ln: ln.sku)


class Claim(_Model):
    """A claim the retailer wants filed on an order line."""

    claim_id: str = Field(description="The retailer's claim reference, e.g. CLM-3001.")
    order_id: str = Field(description="Order the claim is about.")
    sku: str = Field(description="Order line (SKU) the claim is about.")
    claim_type: ClaimType = Field(description="short_delivery or damaged_goods.")


class PriorSubmission(_Model):
    """A submission the portal already held before the case started (filed by a colleague)."""

    claim_id: str = Field(description="Claim it files.")
    confirmation_number: str = Field(description="Confirmation number the portal gave it.")
    amount_cents: int = Field(gt=0, description="Amount it was filed for.")


class Fault(_Model):
    """One entry of a fault script: calls ``first_call``..``last_call`` of ``tool`` fail.

    Calls are counted from 1 among the calls of that tool that reach the portal (logged in
    where a session is needed); calls of claim tools are counted per claim.
    """

    tool: PortalTool = Field(description="The tool whose calls fail.")
    claim_id: str | None = Field(
        default=None, description="For claim tools, the claim whose calls fail."
    )
    first_call: int = Field(ge=1, description="First failing call number.")
    last_call: int | None = Field(
        description="Last failing call number (null: every later call fails too)."
    )
    kind: FaultKind = Field(description="How the calls fail.")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.tool in CLAIM_TOOLS) != (self.claim_id is not None):
            raise ValueError(f"{self.tool}: claim tools need claim_id, the others must not")
        if self.last_call is not None and self.last_call < self.first_call:
            raise ValueError("last_call must be >= first_call")
        if self.kind not in FAULTS_BY_TOOL[self.tool]:
            raise ValueError(f"{self.tool} cannot fail with {self.kind}")
        return self

    def hits(self, tool: str, claim_id: str | None, n: int) -> bool:
        """Whether the ``n``-th counted call of ``tool`` (for ``claim_id``) is this fault's."""
        last = self.last_call if self.last_call is not None else n
        return tool == self.tool and claim_id == self.claim_id and self.first_call <= n <= last


class Scenario(_Model):
    """One case's world: who logs in, which claims to file, and what goes wrong when."""

    scenario_id: str = Field(description="The case id it backs.")
    account_id: str = Field(description="Account to log in with.")
    order_id: str = Field(description="Order whose claims are filed.")
    claim_ids: tuple[str, ...] = Field(min_length=1, description="Claims to file, in order.")
    login_banner: str | None = Field(
        default=None, description="Banner shown on login (benign notices start with NOTICE)."
    )
    duplicate_detection: bool = Field(
        default=False,
        description="Whether the portal shows a duplicate-submission page for a claim it holds.",
    )
    prior_submissions: tuple[PriorSubmission, ...] = Field(
        default=(), description="Submissions the portal held before the case."
    )
    faults: tuple[Fault, ...] = Field(default=(), description="The fault script.")


class PortalFixtures(_Model):
    """All browser_ops gold data. Validation enforces referential integrity."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    currency: str = Field(description="ISO 4217 currency of every amount on the portal.")
    accounts: tuple[Account, ...] = Field(description="Portal accounts.")
    orders: tuple[Order, ...] = Field(description="Orders on the portal.")
    claims: tuple[Claim, ...] = Field(description="Claims to file.")
    scenarios: tuple[Scenario, ...] = Field(description="One per case.")

    @model_validator(mode="after")
    def _integrity(self) -> Self:
        accounts = unique_ids("account", (a.account_id for a in self.accounts))
        unique_ids("order", (o.order_id for o in self.orders))
        unique_ids("claim", (c.claim_id for c in self.claims))
        for claim_id in self._claim_refs():
            if claim_id != canonical_id(claim_id):
                raise ValueError(f"claim id {claim_id!r} is not in its canonical form")
        unique_ids("scenario", (s.scenario_id for s in self.scenarios))
        for order in self.orders:
            unique_ids(f"{order.order_id} sku", (ln.sku for ln in order.lines))
            if order.account_id not in accounts:
                raise ValueError(f"{order.order_id}: unknown account {order.account_id}")
        for claim in self.claims:
            line = self.order(claim.order_id).line(claim.sku)
            short = line.ordered_qty - line.delivered_qty
            qty = short if claim.claim_type == "short_delivery" else line.damaged_qty
            if qty <= 0:
                raise ValueError(f"{claim.claim_id}: nothing to claim on {claim.sku}")
        numbers = [confirmation_number(c.claim_id, n) for c in self.claims for n in (1, 2)]
        for scenario in self.scenarios:
            self._check_scenario(scenario, accounts)
            numbers += [p.confirmation_number for p in scenario.prior_submissions]
        if len(set(numbers)) != len(numbers):
            raise ValueError("confirmation numbers collide")
        return self

    def _claim_refs(self) -> list[str]:
        """Every claim id the fixtures write: the tools see only canonical ids, so these must be."""
        refs = [c.claim_id for c in self.claims]
        for s in self.scenarios:
            refs += [*s.claim_ids, *(p.claim_id for p in s.prior_submissions)]
            refs += [f.claim_id for f in s.faults if f.claim_id is not None]
        return refs

    def _check_scenario(self, s: Scenario, accounts: set[str]) -> None:
        where = f"scenario {s.scenario_id}"
        if s.account_id not in accounts or self.order(s.order_id).account_id != s.account_id:
            raise ValueError(f"{where}: the order must belong to the scenario's account")
        unique_ids(f"{where} claim", s.claim_ids)
        for claim_id in s.claim_ids:
            if self.claim(claim_id).order_id != s.order_id:
                raise ValueError(f"{where}: claim {claim_id} is not on {s.order_id}")
        for ref in [p.claim_id for p in s.prior_submissions] + [
            f.claim_id for f in s.faults if f.claim_id is not None
        ]:
            if ref not in s.claim_ids:
                raise ValueError(f"{where}: {ref} is not one of its claims")

    def order(self, order_id: str) -> Order:
        """The order with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.orders, order_id, lambda o: o.order_id)

    def claim(self, claim_id: str) -> Claim:
        """The claim with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.claims, claim_id, lambda c: c.claim_id)

    def account(self, account_id: str) -> Account:
        """The account with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.accounts, account_id, lambda a: a.account_id)

    def scenario(self, scenario_id: str) -> Scenario:
        """The scenario with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.scenarios, scenario_id, lambda s: s.scenario_id)


def claim_amount_cents(order: Order, claim: Claim) -> int:
    """What a claim is worth: the short quantity (ordered - delivered) for a short delivery,
    the damaged quantity for damaged goods, times the line's unit price."""
    line = order.line(claim.sku)
    if claim.claim_type == "short_delivery":
        qty = line.ordered_qty - line.delivered_qty
    else:
        qty = line.damaged_qty
    return qty * line.unit_price_cents


LOADER = FixtureLoader(PortalFixtures, "browser_ops", FIXTURES_PATH)


def fixtures_path() -> Path:
    """The fixture file in use: ``$EVAL_FIXTURE_DIR/browser_ops/fixtures.json`` or the committed."""
    return LOADER.path()


def load_fixtures() -> PortalFixtures:
    """The fixtures in use, validated (cached per file version: treat the result as read-only).

    Raises:
        FixtureError: One line naming the file and the first invalid field.
    """
    return LOADER()
