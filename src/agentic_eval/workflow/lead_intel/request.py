"""An offer draft read against what the job requested, as ``assert_offer_matches_request`` does.

The job's ``requirements.services`` lists each service wanted and how many (``{"service":
"Production line audit", "quantity": 2}``). A line names a requested service when the service's
words, as singular words, are in its description ("Production line audits (2 sites)" names
"Production line audit"; of two names one inside the other, the longer is meant; of two
services named, the first is the line's, the other a reference). Then:

- every line is for a requested service, and its quantity is the requested quantity (20 where
  2 are asked for is not the request; nor is a line for a service nobody asked for);
- every requested service is on exactly one line (none left out, none split over two lines).

This is its own check, not part of the price check, because it judges the offer against
another source of truth: the request, not the operator's pricing notes. A wrong quantity is
not a wrong price, and a job that lists no services still has its prices judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from agentic_eval.reading.words import singular_words
from agentic_eval.workflow.lead_intel.outputs import OfferDraft


@dataclass(frozen=True)
class Requested:
    """One requested service: its name as written and as singular words, and the quantity
    (None when the request gives none)."""

    name: str
    words: str
    quantity: int | None


def _quantity(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw)
    return None


def requested_services(requirements: Mapping[str, Any]) -> list[Requested]:
    """The services ``requirements.services`` asks for (entries without a name left out)."""
    listed: Any = requirements.get("services") or []
    if not isinstance(listed, list):
        return []
    found: list[Requested] = []
    for entry in cast(list[Any], listed):
        if isinstance(entry, str):
            entry = {"service": entry}
        if not isinstance(entry, dict):
            continue
        item = cast(dict[str, Any], entry)
        name = str(item.get("service") or "").strip()
        if singular_words(name):
            found.append(Requested(name, singular_words(name), _quantity(item.get("quantity"))))
    return found


def line_service(description: str, services: list[Requested]) -> Requested | None:
    """The requested service a line's description is for: the one it names first (a name
    inside a longer named one is the longer one's); other services it names are references
    ("workshop following the audit"), which the price check judges."""
    described = f" {singular_words(description)} "
    named = [s for s in services if f" {s.words} " in described]
    named = [
        s for s in named if not any(s is not o and f" {s.words} " in f" {o.words} " for o in named)
    ]
    return min(named, key=lambda s: described.index(f" {s.words} "), default=None)


def request_problems(offer: OfferDraft, services: list[Requested]) -> list[str]:
    """Everything in ``offer`` the request does not ask for, or asks for and does not get."""
    problems: list[str] = []
    lines_of: dict[str, list[int]] = {s.words: [] for s in services}
    asked = ", ".join(s.name for s in services)
    for i, line in enumerate(offer.line_items, 1):
        wanted = line_service(line.description, services)
        if wanted is None:
            problems.append(
                f"line {i} ({line.description!r}) is not a service the request asks for ({asked})"
            )
            continue
        lines_of[wanted.words].append(i)
        if wanted.quantity is not None and line.quantity != wanted.quantity:
            problems.append(
                f"line {i} offers {line.quantity} x {wanted.name}; "
                f"the request asks for {wanted.quantity}"
            )
    for s in services:
        on = lines_of[s.words]
        if not on:
            how_many = f"{s.quantity} x " if s.quantity is not None else ""
            problems.append(f"the request asks for {how_many}{s.name}, and no line offers it")
        elif len(on) > 1:
            where = ", ".join(map(str, on))
            problems.append(
                f"{s.name} is offered on lines {where}: the request asks for one line per service"
            )
    return problems
