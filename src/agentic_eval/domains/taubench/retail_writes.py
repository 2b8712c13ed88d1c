"""tau-bench retail's write tools, re-implemented: the same checks in the same order, the same
changes (the same float arithmetic and rounding, so the database hashes the same) and the same
results and error texts as ``tau_bench/envs/retail/tools/``. A record is changed only through
:meth:`TauDatabase.writable`, this case's own copy of it.

Each of them changes the database: the policy asks for the user's explicit confirmation first,
which the domain judges with the ``user_consent`` gate (they are registered ``needs_consent``).
"""

from __future__ import annotations

import json
from typing import Any

from agentic_eval.domains.taubench.database import TauDatabase

CANCEL_REASONS = ("no longer needed", "ordered by mistake")


def _pending_order(db: TauDatabase, order_id: str, verb: str) -> dict[str, Any] | str:
    orders = db.data["orders"]
    if order_id not in orders:
        return "Error: order not found"
    if orders[order_id]["status"] != "pending":
        return f"Error: non-pending order cannot be {verb}"
    return db.writable("orders", order_id)


def _delivered_order(db: TauDatabase, order_id: str, verb: str) -> dict[str, Any] | str:
    orders = db.data["orders"]
    if order_id not in orders:
        return "Error: order not found"
    if orders[order_id]["status"] != "delivered":
        return f"Error: non-delivered order cannot be {verb}"
    return db.writable("orders", order_id)


def _missing_item(order: dict[str, Any], item_ids: list[str]) -> str | None:
    """The first item id asked for more often than the order holds it."""
    held = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            return item_id
    return None


def _price_difference(
    db: TauDatabase, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]
) -> float | str:
    """What the new items cost more than the old (the sum tau-bench computes), or the error."""
    products = db.data["products"]
    diff_price: float = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = next(item for item in order["items"] if item["item_id"] == item_id)
        variants = products[item["product_id"]]["variants"]
        if not (new_item_id in variants and variants[new_item_id]["available"]):
            return f"Error: new item {new_item_id} not found or available"
        diff_price += variants[new_item_id]["price"] - item["price"]
    return diff_price


def cancel_pending_order(db: TauDatabase, order_id: str, reason: str) -> str:
    """Cancel a pending order and refund its payments (a gift card at once). Only after the
    user's explicit confirmation.

    Args:
        order_id: The order id, such as '#W0000000'.
        reason: 'no longer needed' or 'ordered by mistake'.
    """
    order = _pending_order(db, order_id, "cancelled")
    if isinstance(order, str):
        return order
    if reason not in CANCEL_REASONS:
        return "Error: invalid reason"
    refunds: list[dict[str, Any]] = []
    for payment in order["payment_history"]:
        payment_id = payment["payment_method_id"]
        refunds.append(
            {
                "transaction_type": "refund",
                "amount": payment["amount"],
                "payment_method_id": payment_id,
            }
        )
        if "gift_card" in payment_id:  # refunded to the gift card at once
            method = db.writable("users", order["user_id"])["payment_methods"][payment_id]
            method["balance"] += payment["amount"]
            method["balance"] = round(method["balance"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


def exchange_delivered_order_items(
    db: TauDatabase,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
) -> str:
    """Exchange items of a delivered order for other variants of the same products. Only after
    the user's explicit confirmation.

    Args:
        order_id: The order id, such as '#W0000000'.
        item_ids: The item ids to exchange.
        new_item_ids: The new item ids, one per item id, in the same order.
        payment_method_id: Pays or receives the price difference.
    """
    order = _delivered_order(db, order_id, "exchanged")
    if isinstance(order, str):
        return order
    missing = _missing_item(order, item_ids)
    if missing is not None:
        return f"Error: {missing} not found"
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff_price = _price_difference(db, order, item_ids, new_item_ids)
    if isinstance(diff_price, str):
        return diff_price
    diff_price = round(diff_price, 2)
    methods = db.data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff_price:
        return "Error: insufficient gift card balance to pay for the price difference"
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff_price
    return json.dumps(order)


def _address(
    address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, str]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "state": state,
        "country": country,
        "zip": zip,
    }


def modify_pending_order_address(
    db: TauDatabase,
    order_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> str:
    """Change the shipping address of a pending order. Only after the user's explicit
    confirmation.

    Args:
        order_id: The order id, such as '#W0000000'.
        address1: The first line of the address.
        address2: The second line of the address.
        city: The city.
        state: The state.
        country: The country.
        zip: The zip code.
    """
    order = _pending_order(db, order_id, "modified")
    if isinstance(order, str):
        return order
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


def modify_pending_order_items(
    db: TauDatabase,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
) -> str:
    """Change items of a pending order to other variants of the same products (once per
    order). Only after the user's explicit confirmation.

    Args:
        order_id: The order id, such as '#W0000000'.
        item_ids: The item ids to change.
        new_item_ids: The new item ids, one per item id, in the same order.
        payment_method_id: Pays or receives the price difference.
    """
    order = _pending_order(db, order_id, "modified")
    if isinstance(order, str):
        return order
    missing = _missing_item(order, item_ids)
    if missing is not None:
        return f"Error: {missing} not found"
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff_price = _price_difference(db, order, item_ids, new_item_ids)
    if isinstance(diff_price, str):
        return diff_price
    methods = db.data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff_price:
        return "Error: insufficient gift card balance to pay for the new item"
    order["payment_history"].append(
        {
            "transaction_type": "payment" if diff_price > 0 else "refund",
            "amount": abs(diff_price),
            "payment_method_id": payment_method_id,
        }
    )
    if method["source"] == "gift_card":
        method = db.writable("users", order["user_id"])["payment_methods"][payment_method_id]
        method["balance"] -= diff_price
        method["balance"] = round(method["balance"], 2)
    products = db.data["products"]
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = next(item for item in order["items"] if item["item_id"] == item_id)
        variant = products[item["product_id"]]["variants"][new_item_id]
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = variant["options"]
    order["status"] = "pending (item modified)"
    return json.dumps(order)


def modify_pending_order_payment(db: TauDatabase, order_id: str, payment_method_id: str) -> str:
    """Pay a pending order with another payment method. Only after the user's explicit
    confirmation.

    Args:
        order_id: The order id, such as '#W0000000'.
        payment_method_id: The new payment method's id.
    """
    order = _pending_order(db, order_id, "modified")
    if isinstance(order, str):
        return order
    methods = db.data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    history = order["payment_history"]
    if len(history) > 1 or history[0]["transaction_type"] != "payment":
        return "Error: there should be exactly one payment for a pending order"
    if history[0]["payment_method_id"] == payment_method_id:
        return "Error: the new payment method should be different from the current one"
    amount = history[0]["amount"]
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < amount:
        return "Error: insufficient gift card balance to pay for the order"
    history.extend(
        [
            {
                "transaction_type": "payment",
                "amount": amount,
                "payment_method_id": payment_method_id,
            },
            {
                "transaction_type": "refund",
                "amount": amount,
                "payment_method_id": history[0]["payment_method_id"],
            },
        ]
    )
    if method["source"] == "gift_card":
        method = db.writable("users", order["user_id"])["payment_methods"][payment_method_id]
        method["balance"] -= amount
        method["balance"] = round(method["balance"], 2)
    old_id = history[0]["payment_method_id"]
    if "gift_card" in old_id:  # the refund goes back to the gift card at once
        old = db.writable("users", order["user_id"])["payment_methods"][old_id]
        old["balance"] += amount
        old["balance"] = round(old["balance"], 2)
    return json.dumps(order)


def modify_user_address(
    db: TauDatabase,
    user_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> str:
    """Change a user's default address. Only after the user's explicit confirmation.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
        address1: The first line of the address.
        address2: The second line of the address.
        city: The city.
        state: The state.
        country: The country.
        zip: The zip code.
    """
    if user_id not in db.data["users"]:
        return "Error: user not found"
    user = db.writable("users", user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(user)


def return_delivered_order_items(
    db: TauDatabase, order_id: str, item_ids: list[str], payment_method_id: str
) -> str:
    """Ask for the return of items of a delivered order, refunded to the original payment
    method or a gift card. Only after the user's explicit confirmation.

    Args:
        order_id: The order id, such as '#W0000000'.
        item_ids: The item ids to return.
        payment_method_id: Receives the refund: the original payment method or a gift card.
    """
    order = _delivered_order(db, order_id, "returned")
    if isinstance(order, str):
        return order
    if payment_method_id not in db.data["users"][order["user_id"]]["payment_methods"]:
        return "Error: payment method not found"
    if (
        "gift_card" not in payment_method_id
        and payment_method_id != order["payment_history"][0]["payment_method_id"]
    ):
        return "Error: payment method should be either the original payment method or a gift card"
    if _missing_item(order, item_ids) is not None:
        return "Error: some item not found"
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return json.dumps(order)
