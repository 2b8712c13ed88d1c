"""The chat template the local model is served with, derived in code from the GGUF's own.

Qwen2.5-Coder's template tells the model to wrap tool calls in ``<tool_call>`` tags, but the 1.5B
model writes them as fenced ``json`` code blocks instead, so with the stock template the server
parses no tool call at all. The derived template states the convention the model actually follows
and renders past calls the same way; llama.cpp analyses the template it is given to build its
tool-call parser, so the fenced blocks then come back as structured tool calls. A line after tool
results keeps the weak model from calling tools in a loop.

Each change is a string substitution whose anchor must be present exactly once: if the GGUF's
template differs from the one this was written against, derivation fails loudly instead of
serving a half-changed template.
"""

from __future__ import annotations

import hashlib

from agentic_eval.localmodel.catalog import LocalModelError

__all__ = [
    "AFTER_TOOL_RESULTS",
    "TemplateDerivationError",
    "derive_fenced_json_template",
    "template_digest",
]

FENCE_OPEN = "```json\n"
FENCE_CLOSE = "\n```"

AFTER_TOOL_RESULTS = (
    "If you now have every fact the request needs, give your final answer (through the submit "
    "function, when there is one); otherwise call the next function you need, never one you "
    "already called with the same arguments."
)
"""The line rendered after each group of tool results.

Without it the model calls the same lookups in a loop until the turn limit; naming the submit
function (the agent loop's way to answer) makes it answer once it has what it needs.
"""

_TOOLS_INSTRUCTION_OLD = (
    '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name '
    "and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
    '{{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}}\\n'
    '</tool_call><|im_end|>\\n" }}'
)
_TOOLS_INSTRUCTION_NEW = (
    '{{- "\\n</tools>\\n\\nFor each function call, reply with a json object with the function '
    "name and arguments in a fenced json code block:\\n```json\\n"
    '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n'
    '```<|im_end|>\\n" }}'
)
_CALL_OPEN_OLD = '{{- \'\\n<tool_call>\\n{"name": "\' }}'
_CALL_OPEN_NEW = '{{- \'\\n```json\\n{"name": "\' }}'
_CALL_CLOSE_OLD = "{{- '}\\n</tool_call>' }}"
_CALL_CLOSE_NEW = "{{- '}\\n```' }}"
_RESULTS_END_OLD = (
    '{%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}\n'
    "            {{- '<|im_end|>\\n' }}"
)
_RESULTS_END_NEW = (
    '{%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}\n'
    "            {{- '\\n" + AFTER_TOOL_RESULTS + "<|im_end|>\\n' }}"
)

_CHANGES: tuple[tuple[str, str, str], ...] = (
    ("tool-call instruction in the system prompt", _TOOLS_INSTRUCTION_OLD, _TOOLS_INSTRUCTION_NEW),
    ("opening of a rendered past tool call", _CALL_OPEN_OLD, _CALL_OPEN_NEW),
    ("closing of a rendered past tool call", _CALL_CLOSE_OLD, _CALL_CLOSE_NEW),
    ("end of a group of tool results", _RESULTS_END_OLD, _RESULTS_END_NEW),
)


class TemplateDerivationError(LocalModelError):
    """The model's chat template is not the one the derivation was written against."""


def derive_fenced_json_template(original: str) -> str:
    """The fenced-JSON tool-call template derived from a Qwen2.5 chat template.

    Args:
        original: The GGUF's ``tokenizer.chat_template``.

    Returns:
        The template: tool calls as fenced ``json`` blocks holding ``{"name", "arguments"}``,
        in the instructions and in rendered past calls, and :data:`AFTER_TOOL_RESULTS` after each
        group of tool results. It mentions ``<tool_call>`` nowhere.

    Raises:
        TemplateDerivationError: An anchor is missing or not unique, or ``<tool_call>`` is still
            mentioned after the substitutions.
    """
    derived = original
    for what, old, new in _CHANGES:
        found = derived.count(old)
        if found != 1:
            raise TemplateDerivationError(
                f"chat template changed: expected the {what} exactly once, found it {found} times"
            )
        derived = derived.replace(old, new)
    if "tool_call>" in derived:
        raise TemplateDerivationError("chat template changed: it still mentions <tool_call> tags")
    return derived


def template_digest(template: str) -> str:
    """The first 12 hex digits of the template's sha256 (labels recordings).

    Args:
        template: The template text.

    Returns:
        12 lowercase hex digits.
    """
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]
