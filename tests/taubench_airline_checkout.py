"""A small tau-bench-shaped airline checkout, written by the tests (nothing of tau-bench is
committed; every flight, user, reservation, task and text here is made up): five flights
between three made-up airports, two users, three reservations, a policy, six tasks in
tau-bench's task-file format, and two tool modules (one with a ``get_info``, the airport list's
with its literal lists)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SEATS = ("basic_economy", "economy", "business")


def _open(seats: tuple[int, int, int], prices: tuple[int, int, int]) -> dict[str, Any]:
    return {
        "status": "available",
        "available_seats": dict(zip(SEATS, seats, strict=True)),
        "prices": dict(zip(SEATS, prices, strict=True)),
    }


def _flight(number: str, route: str, leaves: str, lands: str, **dates: Any) -> dict[str, Any]:
    origin, destination = route.split("-")
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": leaves,
        "scheduled_arrival_time_est": lands,
        "dates": {f"2024-05-{day[1:]}": value for day, value in dates.items()},
    }


FLIGHTS = {
    "FX101": _flight(
        "FX101", "AAA-BBB", "08:00:00", "10:00:00",
        d09={"status": "landed", "actual_departure_time_est": "2024-05-09T08:04:00",
             "actual_arrival_time_est": "2024-05-09T09:58:00"},
        d10=_open((5, 5, 2), (60, 100, 250)),
        d11=_open((5, 5, 2), (70, 110, 300)),
        d12={"status": "cancelled"},
    ),
    "FX102": _flight(
        "FX102", "BBB-CCC", "11:00:00", "13:00:00",
        d10=_open((3, 4, 1), (50, 80, 200)),
        d11=_open((3, 4, 2), (55, 90, 310)),
    ),
    "FX103": _flight(
        "FX103", "AAA-CCC", "09:00:00", "12:30:00",
        d10=_open((0, 1, 0), (140, 190, 420)),
        d11={"status": "delayed", "estimated_departure_time_est": "2024-05-11T10:00:00",
             "estimated_arrival_time_est": "2024-05-11T13:30:00"},
    ),
    "FX104": _flight(
        "FX104", "CCC-BBB", "23:00:00", "02:00:00+1",
        d08=_open((2, 2, 2), (44, 74, 179)),
        d10=_open((2, 2, 2), (45, 75, 180)),
    ),
    "FX105": _flight(
        "FX105", "BBB-AAA", "08:00:00", "10:00:00",
        d09=_open((4, 4, 4), (39, 64, 149)),
        d10=_open((4, 4, 4), (40, 65, 150)),
        d11=_open((4, 4, 4), (42, 68, 160)),
    ),
}  # fmt: skip


def _person(first: str, last: str, dob: str) -> dict[str, str]:
    return {"first_name": first, "last_name": last, "dob": dob}


ADA = _person("Ada", "Hopper", "1985-12-09")
GRACE = _person("Grace", "Hopper", "1986-01-01")
BO = _person("Bo", "Chen", "1992-03-05")

USERS = {
    "ada_hopper_101": {
        "name": {"first_name": "Ada", "last_name": "Hopper"},
        "address": {"address1": "1 Lane", "address2": "", "city": "Avalon", "country": "USA",
                    "state": "CA", "zip": "90001"},
        "email": "ada.hopper@example.com",
        "dob": ADA["dob"],
        "payment_methods": {
            "credit_card_1001": {"source": "credit_card", "brand": "visa", "last_four": "1234",
                                 "id": "credit_card_1001"},
            "gift_card_2002": {"source": "gift_card", "amount": 200.25, "id": "gift_card_2002"},
            "certificate_3003": {"source": "certificate", "amount": 100, "id": "certificate_3003"},
        },
        "saved_passengers": [GRACE],
        "membership": "gold",
        "reservations": ["RES001", "RES002"],
    },
    "bo_chen_202": {
        "name": {"first_name": "Bo", "last_name": "Chen"},
        "address": {"address1": "2 Road", "address2": "Unit 3", "city": "Brookside",
                    "country": "USA", "state": "OR", "zip": "97001"},
        "email": "bo.chen@example.com",
        "dob": BO["dob"],
        "payment_methods": {
            "credit_card_4004": {"source": "credit_card", "brand": "mastercard",
                                 "last_four": "4321", "id": "credit_card_4004"},
            "gift_card_5005": {"source": "gift_card", "amount": 30, "id": "gift_card_5005"},
            "certificate_3221322": {"source": "certificate", "amount": 50,
                                    "id": "certificate_3221322"},
        },
        "saved_passengers": [],
        "membership": "regular",
        "reservations": ["RES003"],
    },
}  # fmt: skip


def _leg(number: str, date: str, price: int) -> dict[str, Any]:
    flight = FLIGHTS[number]
    return {
        "origin": flight["origin"],
        "destination": flight["destination"],
        "flight_number": number,
        "date": date,
        "price": price,
    }


def _reservation(
    rid: str,
    user: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, str]],
    paid_by: str,
    **more: Any,
) -> dict[str, Any]:
    total = sum(f["price"] for f in flights) * len(passengers)
    return {
        "reservation_id": rid,
        "user_id": user,
        "origin": flights[0]["origin"],
        "destination": flights[-1]["destination"],
        "flight_type": "one_way",
        "cabin": cabin,
        "flights": flights,
        "passengers": passengers,
        "payment_history": [{"payment_id": paid_by, "amount": total}],
        "created_at": "2024-05-01T09:00:00",
        "total_baggages": more.get("bags", 0),
        "nonfree_baggages": 0,
        "insurance": more.get("insurance", "no"),
    }


RESERVATIONS = {
    "RES001": _reservation(
        "RES001", "ada_hopper_101", "economy", [_leg("FX101", "2024-05-11", 110)], [ADA],
        "credit_card_1001", bags=1,
    ),
    "RES002": _reservation(
        "RES002", "ada_hopper_101", "business",
        [_leg("FX101", "2024-05-11", 290), _leg("FX102", "2024-05-11", 305)], [ADA, GRACE],
        "gift_card_2002", bags=2, insurance="yes",
    ),
    "RES003": _reservation(
        "RES003", "bo_chen_202", "basic_economy", [_leg("FX102", "2024-05-10", 50)],
        [_person("Bo", "Chen", "1992-03-04")], "gift_card_5005",
    ),
}  # fmt: skip

TASKS = """
from tau_bench.types import Action, Task

TASKS = [
    Task(
        annotator="0",
        user_id="ada_hopper_101",
        instruction="Your user id is ada_hopper_101. Fly from AAA to CCC on May 10 in economy, "
        "one way, alone, with insurance and two bags. Pay with your certificate, 60 from your "
        "gift card and the rest with your visa card.",
        actions=[
            Action(name="get_user_details", kwargs={"user_id": "ada_hopper_101"}),
            Action(
                name="search_direct_flight",
                kwargs={"origin": "AAA", "destination": "CCC", "date": "2024-05-10"},
            ),
            Action(
                name="search_onestop_flight",
                kwargs={"origin": "AAA", "destination": "CCC", "date": "2024-05-10"},
            ),
            Action(
                name="book_reservation",
                kwargs={
                    "user_id": "ada_hopper_101",
                    "origin": "AAA",
                    "destination": "CCC",
                    "flight_type": "one_way",
                    "cabin": "economy",
                    "flights": [
                        {"flight_number": "FX101", "date": "2024-05-10"},
                        {"flight_number": "FX102", "date": "2024-05-10"},
                    ],
                    "passengers": [
                        {"first_name": "Ada", "last_name": "Hopper", "dob": "1985-12-09"}
                    ],
                    "payment_methods": [
                        {"payment_id": "certificate_3003", "amount": 100},
                        {"payment_id": "gift_card_2002", "amount": 60},
                        {"payment_id": "credit_card_1001", "amount": 100},
                    ],
                    "total_baggages": 2,
                    "nonfree_baggages": 1,
                    "insurance": "yes",
                },
            ),
        ],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="ada_hopper_101",
        instruction="Your user id is ada_hopper_101. Cancel reservation RES001.",
        actions=[
            Action(name="get_reservation_details", kwargs={"reservation_id": "RES001"}),
            Action(name="cancel_reservation", kwargs={"reservation_id": "RES001"}),
        ],
        outputs=[],
    ),
    Task(
        annotator="1",
        user_id="ada_hopper_101",
        instruction="Your user id is ada_hopper_101. Move reservation RES002 from business to "
        "economy, same flights, refund to your visa card, and ask how much you save.",
        actions=[
            Action(name="get_reservation_details", kwargs={"reservation_id": "RES002"}),
            Action(name="calculate", kwargs={"expression": "1190 - 400"}),
            Action(
                name="update_reservation_flights",
                kwargs={
                    "reservation_id": "RES002",
                    "cabin": "economy",
                    "flights": [
                        {"flight_number": "FX101", "date": "2024-05-11"},
                        {"flight_number": "FX102", "date": "2024-05-11"},
                    ],
                    "payment_id": "credit_card_1001",
                },
            ),
        ],
        outputs=["790"],
    ),
    Task(
        annotator="1",
        user_id="bo_chen_202",
        instruction="Your user id is bo_chen_202. Add two bags (one paid, with your mastercard) "
        "to RES003, correct your birth date to 1992-03-05, then ask for a human.",
        actions=[
            Action(
                name="update_reservation_baggages",
                kwargs={
                    "reservation_id": "RES003",
                    "total_baggages": 2,
                    "nonfree_baggages": 1,
                    "payment_id": "credit_card_4004",
                },
            ),
            Action(
                name="update_reservation_passengers",
                kwargs={
                    "reservation_id": "RES003",
                    "passengers": [
                        {"first_name": "Bo", "last_name": "Chen", "dob": "1992-03-05"}
                    ],
                },
            ),
            Action(
                name="transfer_to_human_agents",
                kwargs={"summary": "The user wants to talk about a refund."},
            ),
        ],
        outputs=[],
    ),
    Task(
        annotator="1",
        user_id="bo_chen_202",
        instruction="Your user id is bo_chen_202. Your flight was cancelled; accept a certificate.",
        actions=[
            Action(name="get_user_details", kwargs={"user_id": "bo_chen_202"}),
            Action(name="send_certificate", kwargs={"user_id": "bo_chen_202", "amount": 100}),
        ],
        outputs=[],
    ),
    Task(
        annotator="1",
        user_id="ada_hopper_101",
        instruction="Your user id is ada_hopper_101. Which city is airport BBB in?",
        actions=[
            Action(name="list_all_airports", kwargs={}),
            Action(name="get_reservation_details", kwargs={"reservation_id": "RES002"}),
        ],
        outputs=["Brookside"],
    ),
]
"""

BOOK_INFO = """
from typing import Any, Dict


class BookReservation:
    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "book_reservation",
                "description": "Book a reservation (fixture text).",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "user_id": {"type": "string"},
                        "insurance": {"type": "string", "enum": ["yes", "no"]},
                    },
                    "required": ["user_id", "insurance"],
                },
            },
        }
"""

AIRPORTS_TOOL = """
import json
from typing import Any, Dict


class ListAllAirports:
    @staticmethod
    def invoke(data: Dict[str, Any]) -> str:
        airports = ["AAA", "BBB", "CCC"]
        cities = ["Avalon", "Brookside", "Cedar Falls"]
        return json.dumps({airport: city for airport, city in zip(airports, cities)})
"""


def write_airline_checkout(root: Path, tasks: str = TASKS, *, airports: bool = True) -> Path:
    """A small tau-bench-shaped checkout's airline environment under ``root`` (beside any other
    environment already there): database, policy, tasks and two tool modules (the airport
    list's only with ``airports``)."""
    airline = root / "tau_bench" / "envs" / "airline"
    (airline / "data").mkdir(parents=True)
    (airline / "tools").mkdir()
    tables = (("flights", FLIGHTS), ("reservations", RESERVATIONS), ("users", USERS))
    for name, table in tables:
        (airline / "data" / f"{name}.json").write_text(json.dumps(table, indent=4))
    (airline / "wiki.md").write_text(
        "# Airline agent policy\n\nList the details and get an explicit yes (yes/no) first.\n"
    )
    (airline / "tasks_test.py").write_text(tasks)
    (airline / "tools" / "book_reservation.py").write_text(BOOK_INFO)
    if airports:
        (airline / "tools" / "list_all_airports.py").write_text(AIRPORTS_TOOL)
    return root
