"""tau-bench airline's read tools, re-implemented: the same lookups, results and error texts as
``tau_bench/envs/airline/tools/`` (JSON written by ``json.dumps`` with its default separators),
including their quirks, which an agent under tau-bench meets too: a missing reservation is
``Error: user not found``, and the one-stop search reads the second flight's day with the
first flight's date and writes the next day without a leading zero.
"""

from __future__ import annotations

import json
from typing import Any

from agentic_eval.domains.taubench.database import TauDatabase

AIRPORTS = "airports"
"""The key of :attr:`Pristine.constants` holding the airport list (code to city, in order)."""


def get_reservation_details(db: TauDatabase, reservation_id: str) -> str:
    """Get the details of a reservation.

    Args:
        reservation_id: The reservation id, such as 'AB12CD'.
    """
    reservations = db.data["reservations"]
    if reservation_id in reservations:
        return json.dumps(reservations[reservation_id])
    return "Error: user not found"  # sic: tau-bench's text for a missing reservation


def get_user_details(db: TauDatabase, user_id: str) -> str:
    """Get a user's details, with their payment methods and reservations.

    Args:
        user_id: The user id, such as 'jo_doe_123'.
    """
    users = db.data["users"]
    if user_id in users:
        return json.dumps(users[user_id])
    return "Error: user not found"


def airports_served(flights: dict[str, Any]) -> dict[str, str]:
    """Every airport the flights table serves, in the order first met, each named by its code
    (the airport list when the checkout's ``list_all_airports`` cannot be read)."""
    codes: dict[str, str] = {}
    for flight in flights.values():
        for end in (flight["origin"], flight["destination"]):
            codes.setdefault(end, end)
    return codes


def list_all_airports(db: TauDatabase) -> str:
    """List every airport (its IATA code) and the city it serves."""
    listed = db.pristine.constants.get(AIRPORTS)
    if listed is None:
        listed = airports_served(db.data["flights"])
    return json.dumps(dict(listed))


def _on_date(flight: dict[str, Any], date: str) -> dict[str, Any]:
    """The flight without its calendar, with what it holds for ``date`` (status, seats, prices
    or times) merged in."""
    found = {key: value for key, value in flight.items() if key != "dates"}
    found.update(flight["dates"][date])
    return found


def search_direct_flight(db: TauDatabase, origin: str, destination: str, date: str) -> str:
    """Search the direct flights between two airports on a date that are available to book.

    Args:
        origin: The origin airport's code, such as 'JFK'.
        destination: The destination airport's code, such as 'LAX'.
        date: The date, as 'YYYY-MM-DD', such as '2024-05-01'.
    """
    found: list[dict[str, Any]] = []
    for flight in db.data["flights"].values():
        if flight["origin"] != origin or flight["destination"] != destination:
            continue
        if date in flight["dates"] and flight["dates"][date]["status"] == "available":
            found.append(_on_date(flight, date))
    return json.dumps(found)


def search_onestop_flight(db: TauDatabase, origin: str, destination: str, date: str) -> str:
    """Search the pairs of connecting flights from one airport to another on a date (the first
    leaving on that date), both available to book.

    Args:
        origin: The origin airport's code, such as 'JFK'.
        destination: The destination airport's code, such as 'LAX'.
        date: The date of the first flight, as 'YYYY-MM-DD', such as '2024-05-01'.
    """
    flights = db.data["flights"]
    pairs: list[list[dict[str, Any]]] = []
    for first in flights.values():
        if first["origin"] != origin:
            continue
        for second in flights.values():
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            arrives = first["scheduled_arrival_time_est"]
            # an arrival written "+1" lands the next day: tau-bench writes that day unpadded
            day = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrives else date
            if arrives > second["scheduled_departure_time_est"]:
                continue
            if date not in first["dates"] or day not in second["dates"]:
                continue
            if first["dates"][date]["status"] != "available":
                continue
            if second["dates"][day]["status"] != "available":
                continue
            leg1 = _on_date(first, date)
            leg1["date"] = date
            leg2 = _on_date(second, date)  # tau-bench merges the first flight's date here
            leg2["date"] = day
            pairs.append([leg1, leg2])
    return json.dumps(pairs)
