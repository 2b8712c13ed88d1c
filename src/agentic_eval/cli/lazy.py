"""A command group that imports a sub-command's module only when that command runs (or its own
``--help`` is asked for): ``agentic-eval --help`` lists every command from one-line summaries
kept here, without importing any of them, and ``agentic-eval run --help`` imports ``run`` and
what its options need, not the store, the SDKs or the other commands.

A test holds each summary to the first line of its command's own help, so the two cannot drift.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass

import click


@dataclass(frozen=True)
class LazyCommand:
    """Where a sub-command lives, and what ``--help`` of its group says about it."""

    target: str
    """``module:attribute`` of the click command."""
    summary: str
    """The first line of the command's help, as the group lists it."""


class LazyGroup(click.Group):
    """A :class:`click.Group` whose sub-commands are :class:`LazyCommand` entries, loaded on use."""

    def __init__(
        self, *args: object, lazy: Mapping[str, LazyCommand] | None = None, **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy: dict[str, LazyCommand] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self.lazy:
            return found
        command = load(self.lazy[cmd_name])
        self.add_command(command, cmd_name)  # loaded once
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the summaries, importing nothing."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                command = self.commands[name]
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit=formatter.width)))
            else:
                rows.append((name, self.lazy[name].summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def load(entry: LazyCommand) -> click.Command:
    """The click command ``entry`` names.

    Raises:
        TypeError: When the attribute is not a click command.
    """
    module, _, attribute = entry.target.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{entry.target} is not a click command")
    return command
