"""tau-bench airline's write tools, re-implemented: the same checks in the same order, the same
changes (the same arithmetic, unrounded, so the database hashes the same) and the same results
and error texts as ``tau_bench/envs/airline/tools/``. A record is changed only through
:meth:`TauDatabase.writable`, this case's own copy of it; what a call stores of its arguments is
a copy of them (tau-bench stores the arguments themselves, which nothing changes afterwards),
with each flight's, passenger's and payment's fields in the schema's order (see
:func:`in_order`).

Their quirks are tau-bench's: a booking takes the first free id of ``HATHAT``, ``HATHAU`` and
``HATHAV`` (overwriting ``HATHAV`` when all three are taken), cancelling does not look at the
reservation's status or refund a gift card or certificate, changing flights leaves the
reservation's cabin as it was, and a certificate's id is the first free one of three.

Each of them changes the database: the policy asks for the user's explicit confirmation first,
which the domain judges with the ``user_consent`` gate (they are registered ``needs_consent``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import StrictFloat, StrictInt

from agentic_eval.domains.taubench.database import TauDatabase

BOOKED_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""The ids a booking takes, in order (tau-bench assumes at most three bookings per task)."""
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""The ids a sent certificate takes, in order."""
BOOKED_AT = "2024-05-15T15:00:00"
"""A booking's ``created_at`` (tau-bench's fixed "now")."""
BAG_FEE = 50
INSURANCE_FEE = 30
FLIGHT_FIELDS = ("flight_number", "date")
PASSENGER_FIELDS = ("first_name", "last_name", "dob")
PAYMENT_FIELDS = ("payment_id", "amount")


def in_order(records: list[dict[str, Any]], fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """Copies of argument records (flights, passengers, payments) with their fields in the
    schema's order, then any others by name.

    tau-bench keeps them in the order the agent wrote them. A recording keeps a call's arguments
    with their keys sorted, so a replay would show the agent other text than the run it replays
    did; in the schema's order, both show the same, which is tau-bench's text whenever the agent
    wrote them in that order (as the gold actions do). The database hashes the same either way.
    """
    ordered: list[dict[str, Any]] = []
    for record in records:
        first = {name: copy.deepcopy(record[name]) for name in fields if name in record}
        rest = {k: copy.deepcopy(record[k]) for k in sorted(record, key=str) if k not in fields}
        ordered.append({**first, **rest})
    return ordered


def _priced(
    db: TauDatabase, flight: dict[str, Any], cabin: str, travellers: int
) -> dict[str, Any] | str:
    """``flight`` (a copy the caller owns) with its price, origin and destination filled in from
    the flights table, or the error when it cannot be booked for ``travellers`` in ``cabin``."""
    number = flight["flight_number"]
    if number not in db.data["flights"]:
        return f"Error: flight {number} not found"
    known = db.data["flights"][number]
    if flight["date"] not in known["dates"]:
        return f"Error: flight {number} not found on date {flight['date']}"
    on_date = known["dates"][flight["date"]]
    if on_date["status"] != "available":
        return f"Error: flight {number} not available on date {flight['date']}"
    if on_date["available_seats"][cabin] < travellers:
        return f"Error: not enough seats on flight {number}"
    flight["price"] = on_date["prices"][cabin]
    flight["origin"] = known["origin"]
    flight["destination"] = known["destination"]
    return flight


def book_reservation(
    db: TauDatabase,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payment_methods: list[dict[str, Any]],
    total_baggages: StrictInt,
    nonfree_baggages: StrictInt,
    insurance: str,
) -> str:
    """Book a reservation for a user, paid from their payment methods. Only after the user's
    explicit confirmation.

    Args:
        user_id: The user booking, such as 'jo_doe_123'.
        origin: The origin airport's code, such as 'SFO'.
        destination: The destination airport's code, such as 'JFK'.
        flight_type: 'one_way' or 'round_trip'.
        cabin: 'basic_economy', 'economy' or 'business'.
        flights: Each flight: {'flight_number': 'XY001', 'date': '2024-05-01'}.
        passengers: Each passenger: {'first_name', 'last_name', 'dob' ('YYYY-MM-DD')}.
        payment_methods: Each payment: {'payment_id': an id of the user's, 'amount': a number}.
        total_baggages: The bags the reservation includes.
        nonfree_baggages: The bags to be paid for.
        insurance: 'yes' or 'no'.
    """
    reservations, users = db.data["reservations"], db.data["users"]
    if user_id not in users:
        return "Error: user not found"
    user = users[user_id]
    reservation_id = next((r for r in BOOKED_IDS if r not in reservations), BOOKED_IDS[-1])
    booked = in_order(flights, FLIGHT_FIELDS)
    total_price: Any = 0
    for flight in booked:
        priced = _priced(db, flight, cabin, len(passengers))
        if isinstance(priced, str):
            return priced
        total_price += priced["price"] * len(passengers)
    if insurance == "yes":
        total_price += INSURANCE_FEE * len(passengers)
    total_price += BAG_FEE * nonfree_baggages
    for payment in payment_methods:
        payment_id, amount = payment["payment_id"], payment["amount"]
        if payment_id not in user["payment_methods"]:
            return f"Error: payment method {payment_id} not found"
        method = user["payment_methods"][payment_id]
        if method["source"] in ("gift_card", "certificate") and method["amount"] < amount:
            return f"Error: not enough balance in payment method {payment_id}"
    if sum(payment["amount"] for payment in payment_methods) != total_price:
        paid = sum(payment["amount"] for payment in payment_methods)
        return (
            f"Error: payment amount does not add up, total price is {total_price}, but paid {paid}"
        )
    user = db.writable("users", user_id)
    for payment in payment_methods:  # a certificate named twice raises here, as in tau-bench
        payment_id, amount = payment["payment_id"], payment["amount"]
        if user["payment_methods"][payment_id]["source"] == "gift_card":
            user["payment_methods"][payment_id]["amount"] -= amount
        elif user["payment_methods"][payment_id]["source"] == "certificate":
            del user["payment_methods"][payment_id]
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": booked,
        "passengers": in_order(passengers, PASSENGER_FIELDS),
        "payment_history": in_order(payment_methods, PAYMENT_FIELDS),
        "created_at": BOOKED_AT,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    reservations[reservation_id] = reservation
    user["reservations"].append(reservation_id)
    return json.dumps(reservation)


def cancel_reservation(db: TauDatabase, reservation_id: str) -> str:
    """Cancel a whole reservation, refunding each payment to its method. Only after the user's
    explicit confirmation.

    Args:
        reservation_id: The reservation id, such as 'AB12CD'.
    """
    if reservation_id not in db.data["reservations"]:
        return "Error: reservation not found"
    reservation = db.writable("reservations", reservation_id)
    refunds = [
        {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
        for payment in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return json.dumps(reservation)


def send_certificate(db: TauDatabase, user_id: str, amount: StrictInt | StrictFloat) -> str:
    """Send a travel certificate to a user (a gesture the policy allows in a few cases). Only
    after the user's explicit confirmation.

    Args:
        user_id: The user, such as 'jo_doe_123'.
        amount: The certificate's amount.
    """
    if user_id not in db.data["users"]:
        return "Error: user not found"
    for payment_id in CERTIFICATE_IDS:
        if payment_id not in db.data["users"][user_id]["payment_methods"]:
            methods = db.writable("users", user_id)["payment_methods"]
            methods[payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    # tau-bench returns nothing here (its episode then fails); the database is unchanged
    return f"Error: user {user_id} already holds {', '.join(CERTIFICATE_IDS)}"


def _payer(db: TauDatabase, user_id: str, payment_id: str, price: Any) -> dict[str, Any] | str:
    """The user's payment method ``payment_id`` if it may pay ``price`` for a change."""
    methods = db.data["users"][user_id]["payment_methods"]
    if payment_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_id]
    if method["source"] == "certificate":
        return "Error: certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < price:
        return "Error: gift card balance is not enough"
    return method


def _charge(
    db: TauDatabase,
    reservation: dict[str, Any],
    payment_id: str,
    method: dict[str, Any],
    price: Any,
) -> None:
    """Take ``price`` from a gift card (a negative price pays it back); other methods are
    charged outside the database."""
    if method["source"] == "gift_card":
        writable = db.writable("users", reservation["user_id"])["payment_methods"][payment_id]
        writable["amount"] -= price


def update_reservation_baggages(
    db: TauDatabase,
    reservation_id: str,
    total_baggages: StrictInt,
    nonfree_baggages: StrictInt,
    payment_id: str,
) -> str:
    """Update a reservation's bags, paying for added non-free ones. Only after the user's
    explicit confirmation.

    Args:
        reservation_id: The reservation id, such as 'AB12CD'.
        total_baggages: The bags the reservation includes, updated.
        nonfree_baggages: The bags to be paid for, updated.
        payment_id: The user's payment method paying, such as 'credit_card_1234567'.
    """
    if reservation_id not in db.data["reservations"]:
        return "Error: reservation not found"
    current = db.data["reservations"][reservation_id]
    price = BAG_FEE * max(0, nonfree_baggages - current["nonfree_baggages"])
    method = _payer(db, current["user_id"], payment_id, price)
    if isinstance(method, str):
        return method
    reservation = db.writable("reservations", reservation_id)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    _charge(db, reservation, payment_id, method, price)
    if price != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": price})
    return json.dumps(reservation)


def update_reservation_flights(
    db: TauDatabase,
    reservation_id: str,
    cabin: str,
    flights: list[dict[str, Any]],
    payment_id: str,
) -> str:
    """Replace a reservation's flights (every flight of the new itinerary, changed or not),
    priced in ``cabin``, paying or refunding the difference (as in tau-bench, the reservation's
    own cabin is left as it was). Only after the user's explicit confirmation.

    Args:
        reservation_id: The reservation id, such as 'AB12CD'.
        cabin: 'basic_economy', 'economy' or 'business'.
        flights: Each flight of the whole new reservation: {'flight_number', 'date'}.
        payment_id: The user's payment method paying or refunded, such as 'gift_card_1234567'.
    """
    if reservation_id not in db.data["reservations"]:
        return "Error: reservation not found"
    current = db.data["reservations"][reservation_id]
    travellers = len(current["passengers"])
    new_flights = in_order(flights, FLIGHT_FIELDS)
    total_price: Any = 0
    for flight in new_flights:
        kept = [
            held
            for held in current["flights"]
            if held["flight_number"] == flight["flight_number"]
            and held["date"] == flight["date"]
            and cabin == current["cabin"]
        ]
        if kept:  # a flight the reservation has, in the same cabin: at the price paid
            total_price += kept[0]["price"] * travellers
            flight["price"] = kept[0]["price"]
            flight["origin"] = kept[0]["origin"]
            flight["destination"] = kept[0]["destination"]
            continue
        priced = _priced(db, flight, cabin, travellers)
        if isinstance(priced, str):
            return priced
        total_price += priced["price"] * travellers
    total_price -= sum(held["price"] for held in current["flights"]) * travellers
    method = _payer(db, current["user_id"], payment_id, total_price)
    if isinstance(method, str):
        return method
    _charge(db, current, payment_id, method, total_price)
    reservation = db.writable("reservations", reservation_id)
    reservation["flights"] = new_flights
    if total_price != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
    # as in tau-bench, the flights table's seats are not updated
    return json.dumps(reservation)


def update_reservation_passengers(
    db: TauDatabase, reservation_id: str, passengers: list[dict[str, Any]]
) -> str:
    """Replace a reservation's passengers (as many as it has). Only after the user's explicit
    confirmation.

    Args:
        reservation_id: The reservation id, such as 'AB12CD'.
        passengers: Each passenger: {'first_name', 'last_name', 'dob' ('YYYY-MM-DD')}.
    """
    if reservation_id not in db.data["reservations"]:
        return "Error: reservation not found"
    if len(passengers) != len(db.data["reservations"][reservation_id]["passengers"]):
        return "Error: number of passengers does not match"
    reservation = db.writable("reservations", reservation_id)
    reservation["passengers"] = in_order(passengers, PASSENGER_FIELDS)
    return json.dumps(reservation)
