"""tau-bench's own user-simulator prompt, read from the checkout (``tau_bench/envs/user.py``,
parsed with :mod:`ast`, never imported), so that a model playing the user is told exactly what
tau-bench's ``LLMUserSimulationEnv`` tells it.

tau-bench builds it as an f-string around the task's instruction
(``"You are a user interacting with an agent.{instruction_display}\\nRules: ..."``, where
``instruction_display`` is ``"\\n\\nInstruction: " + instruction + "\\n"``). Here it becomes a
:class:`~agentic_eval.agent.user.SimulatedUser` prompt template: the same text with
``{instructions}`` where the instruction goes. A checkout whose prompt is not written that way
gives None, and the caller says what it falls back to.
"""

from __future__ import annotations

import ast
from pathlib import Path

USER_FILE = Path("tau_bench") / "envs" / "user.py"
SIMULATOR = "LLMUserSimulationEnv"
"""tau-bench's default user simulator (``--user-strategy llm``)."""
BUILDER = "build_system_prompt"
DISPLAY = "instruction_display"
"""The f-string's name for the instruction block."""
DISPLAY_TEXT = "\n\nInstruction: {instructions}\n"
"""What ``instruction_display`` holds when there is an instruction, as a template."""


def read_user_prompt(root: Path) -> str | None:
    """The user prompt template of the checkout at ``root`` (``{instructions}`` for the task's
    instruction), or None when ``tau_bench/envs/user.py`` is missing, unreadable or builds its
    prompt differently."""
    try:
        tree = ast.parse((root / USER_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    builder = _method(tree, SIMULATOR, BUILDER)
    if builder is None:
        return None
    returned = [n.value for n in ast.walk(builder) if isinstance(n, ast.Return)]
    if len(returned) != 1 or not isinstance(returned[0], ast.JoinedStr):
        return None
    return _template(returned[0])


def _method(tree: ast.Module, cls: str, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    return None


def _template(text: ast.JoinedStr) -> str | None:
    """The f-string as a template: its literal parts as they are, ``{instruction_display}`` as
    the instruction block; any other placeholder makes it unreadable (None)."""
    parts: list[str] = []
    for value in text.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        elif (
            isinstance(value, ast.FormattedValue)
            and isinstance(value.value, ast.Name)
            and value.value.id == DISPLAY
            and value.format_spec is None
            and value.conversion == -1
        ):
            parts.append(DISPLAY_TEXT)
        else:
            return None
    prompt = "".join(parts)
    return prompt if "{instructions}" in prompt else None
