"""Conversation content: text, tool calls and tool results, in one provider-neutral shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class Frozen(BaseModel):
    """Base for every serialised value: unknown fields are refused and values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


F = TypeVar("F", bound=Frozen)


def _slot_setter(name: str) -> Callable[[object, Any], None]:
    """The setter of one of BaseModel's instance slots, called directly: cheaper than
    ``object.__setattr__``, which looks the name up through the class hierarchy each time."""
    descriptor: Any = BaseModel.__dict__.get(name)
    if descriptor is None:  # pragma: no cover - a pydantic without these slots
        return lambda instance, value: object.__setattr__(instance, name, value)
    return descriptor.__set__


_new = object.__new__
_set_dict = _slot_setter("__dict__")
_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")


def trusted(cls: type[F], values: dict[str, Any], fields_set: set[str] | None = None) -> F:
    """An instance of ``cls`` holding ``values`` as they are, without validating them.

    Only for values our own code has just built from validated parts (the loop's requests and
    turns, the harness's messages): this is what ``model_construct`` does, without its per-call
    handling of aliases and defaults, which costs more than validation on the replay hot path.
    Never for data read from a file or sent by a model: that is always validated.

    Args:
        cls: A :class:`Frozen` model without aliases, private attributes or post-init hooks.
        values: Every field of ``cls``, by name, already of the field's type.
        fields_set: The fields set explicitly, as the constructor would have recorded them
            (default: every field in ``values``).
    """
    m = _new(cls)
    _set_dict(m, values)
    _set_fields_set(m, set(values) if fields_set is None else fields_set)
    _set_extra(m, None)
    _set_private(m, None)
    return m


class TextBlock(Frozen):
    """Plain text from the model or the harness."""

    type: Literal["text"] = "text"
    text: str = Field(description="The text.")


class ToolUseBlock(Frozen):
    """A tool call the model asks for."""

    type: Literal["tool_use"] = "tool_use"
    id: str = Field(description="Call id, unique within the conversation.")
    name: str = Field(description="Tool name.")
    input: dict[str, Any] = Field(description="Arguments, as JSON.")


class ToolResultBlock(Frozen):
    """The harness's answer to one tool call."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str = Field(description="Id of the call this answers.")
    content: str = Field(description="The result as text (canonical JSON for structured results).")
    is_error: bool = Field(default=False, description="True when the call failed or was blocked.")


ContentBlock = Annotated[TextBlock | ToolUseBlock | ToolResultBlock, Field(discriminator="type")]


class Message(Frozen):
    """One conversation message."""

    role: Literal["user", "assistant"] = Field(description="Who speaks.")
    content: tuple[ContentBlock, ...] = Field(description="Content blocks, in order.")

    def text(self) -> str:
        """All text blocks joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def tool_results(self) -> list[ToolResultBlock]:
        """The tool results in this message, in order."""
        return [b for b in self.content if isinstance(b, ToolResultBlock)]


def user_text(text: str) -> Message:
    """A user message holding one text block."""
    return Message(role="user", content=(TextBlock(text=text),))
