"""Ctrl-C and SIGTERM during a run, for ``run`` and ``batch`` alike."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import click


class Stopper:
    """SIGINT/SIGTERM: the first stops new samples from starting, the second abandons those in
    flight. Remembers which signal came, for the exit code (130 / 143)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.main: asyncio.Task[Any] | None = None

    def __call__(self) -> bool:
        return self.signal is not None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        self.main = asyncio.current_task()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError):  # not the main thread, or no support
                return

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                return

    def _on_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self.signal is None:
            self.signal = sig
            click.echo(
                f"agentic-eval: {name}: no new samples start; finishing those in flight "
                f"({name} again abandons them)",
                err=True,
            )
        elif self.main is not None:
            click.echo(f"agentic-eval: {name}: abandoning the samples in flight", err=True)
            self.main.cancel()

    def exit_code(self) -> int:
        return 128 + (self.signal or signal.SIGINT)
