"""Options several commands share, defined once (their defaults come from core and backends)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentic_eval.backends.spec import DEFAULT_RETRIES, DEFAULT_TIMEOUT
from agentic_eval.recordings.layout import DEFAULT_RECORDINGS


class FiniteFloat(click.FloatRange):
    """A bounded float that also refuses NaN and infinities (which compare false to bounds)."""

    name = "finite float"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        number = float(super().convert(value, param, ctx))
        if math.isnan(number) or math.isinf(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


recordings_option = click.option(
    "--recordings",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_RECORDINGS,
    show_default=True,
    help="Root folder of the recordings.",
)
provider_option = click.option(
    "--provider",
    default=None,
    help="Live provider: anthropic or openai (implies --backend live); openai works with any "
    "OpenAI-compatible server via --base-url.",
)
model_option = click.option("--model", default=None, help="Model name for live runs.")
base_url_option = click.option(
    "--base-url", default=None, help="Provider base URL (local or proxy servers)."
)
retries_option = click.option(
    "--retries",
    type=click.IntRange(0, 20),
    default=DEFAULT_RETRIES,
    show_default=True,
    help="Retries of transient provider errors (live).",
)
timeout_option = click.option(
    "--timeout",
    type=FiniteFloat(0.1, 3600),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds per provider request (live).",
)


def provider_options(command: Callable[..., object]) -> Callable[..., object]:
    """``--provider``, ``--model`` and ``--base-url``: which live model to call."""
    return provider_option(model_option(base_url_option(command)))


def request_options(command: Callable[..., object]) -> Callable[..., object]:
    """``--retries`` and ``--timeout``: how each live provider request is made."""
    return retries_option(timeout_option(command))
