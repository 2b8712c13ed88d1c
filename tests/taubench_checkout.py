"""A small tau-bench-shaped checkout, written by the tests (nothing of tau-bench is committed):
a retail database of two users, two products and three orders, a policy, five tasks in
tau-bench's task-file format, and one tool module with a ``get_info``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ADDRESS = {
    "address1": "1 Main St",
    "address2": "Apt 2",
    "city": "Springfield",
    "country": "USA",
    "state": "IL",
    "zip": "10001",
}
USERS = {
    "ada_lovelace_1815": {
        "user_id": "ada_lovelace_1815",
        "name": {"first_name": "Ada", "last_name": "Lovelace"},
        "address": ADDRESS,
        "email": "ada@example.com",
        "payment_methods": {
            "credit_card_1": {"source": "credit_card", "brand": "visa", "id": "credit_card_1"},
            "gift_card_1": {"source": "gift_card", "balance": 50.1, "id": "gift_card_1"},
        },
        "orders": ["#W0000001", "#W0000002"],
    },
    "alan_turing_1912": {
        "user_id": "alan_turing_1912",
        "name": {"first_name": "Alan", "last_name": "Turing"},
        "address": {**ADDRESS, "zip": "20002"},
        "email": "alan@example.com",
        "payment_methods": {"paypal_1": {"source": "paypal", "id": "paypal_1"}},
        "orders": ["#W0000003"],
    },
}


def _variant(item_id: str, color: str, price: float, available: bool = True) -> dict[str, Any]:
    return {
        "item_id": item_id,
        "options": {"color": color},
        "available": available,
        "price": price,
    }


PRODUCTS = {
    "1000000001": {
        "name": "T-Shirt",
        "product_id": "1000000001",
        "variants": {
            "2000000001": _variant("2000000001", "red", 20.5),
            "2000000002": _variant("2000000002", "blue", 22.75),
            "2000000003": _variant("2000000003", "green", 19.0, available=False),
        },
    },
    "1000000002": {
        "name": "Mug",
        "product_id": "1000000002",
        "variants": {
            "3000000001": _variant("3000000001", "white", 9.99),
            "3000000002": _variant("3000000002", "black", 11.49),
        },
    },
}


def _item(product: str, item_id: str) -> dict[str, Any]:
    variant = PRODUCTS[product]["variants"][item_id]
    return {
        "name": PRODUCTS[product]["name"],
        "product_id": product,
        "item_id": item_id,
        "price": variant["price"],
        "options": variant["options"],
    }


def _order(oid: str, user: str, status: str, items: list[dict[str, Any]], pay: str) -> Any:
    total = round(sum(i["price"] for i in items), 2)
    return {
        "order_id": oid,
        "user_id": user,
        "address": USERS[user]["address"],
        "items": items,
        "fulfillments": [],
        "status": status,
        "payment_history": [
            {"transaction_type": "payment", "amount": total, "payment_method_id": pay}
        ],
    }


ORDERS = {
    "#W0000001": _order(
        "#W0000001", "ada_lovelace_1815", "pending", [_item("1000000001", "2000000001")],
        "gift_card_1",
    ),
    "#W0000002": _order(
        "#W0000002", "ada_lovelace_1815", "delivered",
        [_item("1000000001", "2000000002"), _item("1000000002", "3000000001")], "credit_card_1",
    ),
    "#W0000003": _order(
        "#W0000003", "alan_turing_1912", "delivered", [_item("1000000002", "3000000002")],
        "paypal_1",
    ),
}  # fmt: skip

TASKS = """
from tau_bench.types import Task, Action

TASKS_TEST = [
    Task(
        annotator="0",
        user_id="ada_lovelace_1815",
        instruction="You are Ada (ada@example.com). Cancel order #W0000001: no longer needed.",
        actions=[
            Action(name="find_user_id_by_email", kwargs={"email": "ada@example.com"}),
            Action(name="get_order_details", kwargs={"order_id": "#W0000001"}),
            Action(
                name="cancel_pending_order",
                kwargs={"order_id": "#W0000001", "reason": "no longer needed"},
            ),
        ],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="ada_lovelace_1815",
        instruction="You are Ada Lovelace in 10001. Exchange the blue t-shirt of #W0000002 for "
        "the red one, and ask how many t-shirt colours are available.",
        actions=[
            Action(
                name="find_user_id_by_name_zip",
                kwargs={"first_name": "Ada", "last_name": "Lovelace", "zip": "10001"},
            ),
            Action(name="get_order_details", kwargs={"order_id": "#W0000002"}),
            Action(name="get_product_details", kwargs={"product_id": "1000000001"}),
            Action(
                name="exchange_delivered_order_items",
                kwargs={
                    "order_id": "#W0000002",
                    "item_ids": ["2000000002"],
                    "new_item_ids": ["2000000001"],
                    "payment_method_id": "gift_card_1",
                },
            ),
        ],
        outputs=["2"],
    ),
    Task(
        annotator="1",
        user_id="alan_turing_1912",
        instruction="You are Alan (alan@example.com). Return the mug of #W0000003 to PayPal, "
        "ask for the refund, and move to 2 Elm St, Apt 9, Boston, MA, USA 02115.",
        actions=[
            Action(name="find_user_id_by_email", kwargs={"email": "alan@example.com"}),
            Action(name="get_order_details", kwargs={"order_id": "#W0000003"}),
            Action(name="calculate", kwargs={"expression": "11.49 * 1"}),
            Action(
                name="return_delivered_order_items",
                kwargs={
                    "order_id": "#W0000003",
                    "item_ids": ["3000000002"],
                    "payment_method_id": "paypal_1",
                },
            ),
            Action(
                name="modify_user_address",
                kwargs={
                    "user_id": "alan_turing_1912",
                    "address1": "2 Elm St",
                    "address2": "Apt 9",
                    "city": "Boston",
                    "state": "MA",
                    "country": "USA",
                    "zip": "02115",
                },
            ),
        ],
        outputs=["11.49"],
    ),
    Task(
        annotator="1",
        user_id="ada_lovelace_1815",
        instruction="You are Ada (ada@example.com). You want the red t-shirt of #W0000001 "
        "changed to blue, paid by gift card, then a human to talk about a refund policy.",
        actions=[
            Action(name="find_user_id_by_email", kwargs={"email": "ada@example.com"}),
            Action(name="get_user_details", kwargs={"user_id": "ada_lovelace_1815"}),
            Action(name="list_all_product_types", kwargs={}),
            Action(
                name="modify_pending_order_items",
                kwargs={
                    "order_id": "#W0000001",
                    "item_ids": ["2000000001"],
                    "new_item_ids": ["2000000002"],
                    "payment_method_id": "gift_card_1",
                },
            ),
            Action(
                name="transfer_to_human_agents",
                kwargs={"summary": "The user wants to discuss the refund policy."},
            ),
        ],
        outputs=[],
    ),
    Task(
        annotator="1",
        user_id="alan_turing_1912",
        instruction="You are Alan (alan@example.com). You only want to know your order's status.",
        actions=[
            Action(name="find_user_id_by_email", kwargs={"email": "alan@example.com"}),
            Action(name="get_order_details", kwargs={"order_id": "#W0000003"}),
        ],
        outputs=["delivered"],
    ),
]
"""

CANCEL_INFO = """
from typing import Any, Dict


class CancelPendingOrder:
    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "cancel_pending_order",
                "description": "Cancel a pending order (fixture text).",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string", "description": "The order."},
                        "reason": {
                            "type": "string",
                            "enum": ["no longer needed", "ordered by mistake"],
                        },
                    },
                    "required": ["order_id", "reason"],
                },
            },
        }
"""


def write_checkout(root: Path, tasks: str = TASKS) -> Path:
    """A small tau-bench-shaped checkout: the retail database, policy, tasks and one tool."""
    retail = root / "tau_bench" / "envs" / "retail"
    (retail / "data").mkdir(parents=True)
    (retail / "tools").mkdir()
    for name, table in (("orders", ORDERS), ("products", PRODUCTS), ("users", USERS)):
        (retail / "data" / f"{name}.json").write_text(json.dumps(table, indent=4))
    (retail / "wiki.md").write_text("# Retail agent policy\n\nConfirm every change (yes/no).\n")
    (retail / "tasks_test.py").write_text(tasks)
    (retail / "tools" / "cancel_pending_order.py").write_text(CANCEL_INFO)
    return root
