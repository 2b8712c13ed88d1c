"""What every tau-bench tool shares: tau-bench's error semantics, and the three tools both
environments have (``calculate``, ``think``, ``transfer_to_human_agents``).

tau-bench runs a tool inside ``try``/``except Exception`` and shows the agent ``Error: <the
exception>`` when it raises (``Env.step``); a tool's own refusals are strings starting with
``Error:`` too. :func:`tau_semantics` gives our re-implementations the same behaviour, so the
agent sees the same text (and a failed tool's partial change stays, as it does there).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Any, ParamSpec

from agentic_eval.domains.taubench.database import TauDatabase

P = ParamSpec("P")

CALCULATE_CHARACTERS = frozenset("0123456789+-*/(). ")
MAX_EXPONENT = 10_000
"""A power whose exponent is larger is refused (tau-bench's ``eval`` would compute it, for as long
as that takes: the one place this re-implementation answers differently)."""


def tau_semantics(fn: Callable[P, str]) -> Callable[P, str]:
    """Wrap a tool so that anything it raises becomes ``Error: <exception>`` (tau-bench's
    ``Env.step``), the text the agent is shown."""

    @functools.wraps(fn)
    def tool(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # tau-bench shows every exception to the agent, as text
            return f"Error: {exc}"

    return tool


def _pow(left: Any, right: Any) -> Any:
    if isinstance(right, int) and abs(right) > MAX_EXPONENT and left not in (0, 1, -1):
        raise OverflowError(f"exponent {right} is too large to compute")
    return left**right


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Pow: _pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: lambda a: +a,
    ast.USub: lambda a: -a,
}


def _value(node: ast.expr) -> Any:
    """The value of an arithmetic expression, as Python's ``eval`` computes it."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):  # only "()" passes the character check
        return tuple(_value(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_value(node.left), _value(node.right))
    raise SyntaxError("invalid syntax")  # unreachable from the allowed characters


def calculate(db: TauDatabase, expression: str) -> str:
    """Calculate the result of a mathematical expression.

    Args:
        expression: The expression, with numbers, operators (+, -, *, /), parentheses and spaces.
    """
    del db
    if not all(char in CALCULATE_CHARACTERS for char in expression):
        return "Error: invalid characters in expression"
    try:
        # eval() drops leading spaces before parsing; the file name is the one it reports
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
        return str(round(float(_value(tree.body)), 2))
    except Exception as e:  # tau-bench shows the exception's text
        return f"Error: {e}"


def think(db: TauDatabase, thought: str) -> str:
    """Think about something (changes nothing, returns nothing).

    Args:
        thought: A thought to think about.
    """
    del db, thought
    return ""


def transfer_to_human_agents(db: TauDatabase, summary: str) -> str:
    """Transfer the user to a human agent, with a summary of the issue (ends the conversation).

    Args:
        summary: A summary of the user's issue.
    """
    del db, summary
    return "Transfer successful"
