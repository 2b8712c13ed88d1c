"""The task text given to an agent: prose instruction plus the inputs as a fenced JSON block."""

from __future__ import annotations

import json
import re
from typing import Any

from agentic_eval.core.canonical import canonical_json

_INPUTS_BLOCK = re.compile(r"Inputs:\n```json\n(.*?)\n```", re.DOTALL)


def render_task(instruction: str, inputs: dict[str, Any]) -> str:
    """Instruction, then the inputs as a fenced JSON block (parsed back by scripted agents)."""
    return f"{instruction}\n\nInputs:\n```json\n{canonical_json(inputs)}\n```"


def parse_task_inputs(task: str) -> dict[str, Any]:
    """The inputs block of a task rendered by :func:`render_task` (empty when absent)."""
    m = _INPUTS_BLOCK.search(task)
    if m is None:
        return {}
    value = json.loads(m.group(1))
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]
