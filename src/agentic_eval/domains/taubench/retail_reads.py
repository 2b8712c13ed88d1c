"""tau-bench retail's read tools, re-implemented: the same lookups, results and error texts as
``tau_bench/envs/retail/tools/`` (JSON written by ``json.dumps`` with its default separators)."""

from __future__ import annotations

import json

from agentic_eval.domains.taubench.database import TauDatabase


def find_user_id_by_email(db: TauDatabase, email: str) -> str:
    """Find a user's id by email (case-insensitive).

    Args:
        email: The user's email.
    """
    for user_id, profile in db.data["users"].items():
        if profile["email"].lower() == email.lower():
            return user_id
    return "Error: user not found"


def find_user_id_by_name_zip(db: TauDatabase, first_name: str, last_name: str, zip: str) -> str:
    """Find a user's id by first name, last name and zip code.

    Args:
        first_name: The first name (case-insensitive).
        last_name: The last name (case-insensitive).
        zip: The zip code.
    """
    for user_id, profile in db.data["users"].items():
        if (
            profile["name"]["first_name"].lower() == first_name.lower()
            and profile["name"]["last_name"].lower() == last_name.lower()
            and profile["address"]["zip"] == zip
        ):
            return user_id
    return "Error: user not found"


def get_order_details(db: TauDatabase, order_id: str) -> str:
    """Get an order's status and details.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
    """
    orders = db.data["orders"]
    if order_id in orders:
        return json.dumps(orders[order_id])
    return "Error: order not found"


def get_product_details(db: TauDatabase, product_id: str) -> str:
    """Get a product's details, with every variant.

    Args:
        product_id: The product id (not an item id).
    """
    products = db.data["products"]
    if product_id in products:
        return json.dumps(products[product_id])
    return "Error: product not found"


def get_user_details(db: TauDatabase, user_id: str) -> str:
    """Get a user's details, with their orders.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
    """
    users = db.data["users"]
    if user_id in users:
        return json.dumps(users[user_id])
    return "Error: user not found"


def list_all_product_types(db: TauDatabase) -> str:
    """List the name and product id of every product type, sorted by name."""
    names = {product["name"]: product["product_id"] for product in db.data["products"].values()}
    return json.dumps(dict(sorted(names.items())))
