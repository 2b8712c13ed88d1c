"""What one run of the agent loop produces, and the limits it runs under."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agentic_eval.core.results import Outcome, ToolCallRecord, Utterance
from agentic_eval.core.transcript import RequestTemplate, Turn, UserTurn


@dataclass(frozen=True)
class Limits:
    """Bounds on one agent run."""

    max_turns: int = 12
    max_tokens: int = 1024
    """Output tokens allowed per model call."""
    max_total_tokens: int | None = None
    """Input plus output tokens allowed over the whole run (None: unbounded)."""

    def as_dict(self) -> dict[str, Any]:
        """For provenance."""
        return {
            "max_turns": self.max_turns,
            "max_tokens": self.max_tokens,
            "max_total_tokens": self.max_total_tokens,
        }


@dataclass
class AgentRun:
    """What one run of the loop produced.

    ``outcome`` is None when the agent submitted a schema-valid output; the evaluation then
    decides between passed and check_failed.
    """

    request: RequestTemplate | None = None
    request_json: bytes | None = None
    """Canonical JSON of ``request``."""
    turns: list[Turn] = field(default_factory=lambda: [])
    turns_json: list[bytes] = field(default_factory=lambda: [])
    """Canonical JSON of each of ``turns``."""
    tool_calls: list[ToolCallRecord] = field(default_factory=lambda: [])
    output: BaseModel | None = None
    outcome: Outcome | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    detail: str = ""
    """The outcome in full where its reason is cut to one line (every schema error of an invalid
    output); not part of the scorecard, whose reason is what the model was told."""
    user_turns: list[UserTurn] = field(default_factory=lambda: [])
    """The simulated user's replies (a conversation with a user)."""
    user_turns_json: list[bytes] = field(default_factory=lambda: [])
    """Canonical JSON of each of ``user_turns``."""
    dialogue: list[Utterance] = field(default_factory=lambda: [])
    """What the agent said to the user (its replies of text alone) and the user's answers."""
    user_tool_calls: list[ToolCallRecord] = field(default_factory=lambda: [])
    """Calls of the user's own tools (``turn``: the user turn that made them)."""
    unrun_calls: list[ToolCallRecord] = field(default_factory=lambda: [])
    """Calls the agent made in its last turn after the one that ended the episode (``submit``,
    or a tool that ends it), which never ran (``status`` ``error``): not in the transcript's
    trace, but attempts the checks may judge (the consent gate does)."""
    ended: str = ""
    """How the episode ended without a submitted answer: ``user`` (the user said stop), ``tool
    NAME`` (a tool that ends the episode ran), ``agent`` (a task without ``submit`` got a reply
    of text and has no user to hear it); "" otherwise."""
