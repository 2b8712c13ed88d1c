"""Options several commands share, defined once (their defaults come from core and backends)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentic_eval.core.defaults import (
    DEFAULT_MAX_FAILURE_RATE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TRANSIENT,
    DEFAULT_MAX_TURNS,
    DEFAULT_RETRIES,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT,
    MAX_TURNS,
)
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


MOMENT = click.DateTime(
    formats=[
        "%Y-%m-%d",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M:%S.%f",
        "%Y-%m-%d %H:%M:%S.%f",
    ]
)
"""A moment on the command line (UTC): a date, or a date and time to the second or finer."""

recordings_option = click.option(
    "--recordings",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_RECORDINGS,
    show_default=True,
    help="Root folder of the recordings (for domains named by their eval file: the recordings "
    "folder beside that file).",
)
provider_option = click.option(
    "--provider",
    default=None,
    help="Live provider: anthropic or openai (implies --backend live); openai works with any "
    "OpenAI-compatible server via --base-url.",
)


def _model(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A model name is one line of printable text (it is stored, and shown in tables)."""
    if value is not None and (not value.strip() or not value.isprintable()):
        raise click.BadParameter("a model name is printable text on one line, not empty")
    return value


model_option = click.option(
    "--model", default=None, callback=_model, help="Model name for live runs."
)


def _base_url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A base URL that parses: http(s), a host, a numeric port. The value is never echoed (it
    may hold a password); a password holding '/', '#', '?' or '@' must be percent-encoded."""
    if value is None:
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        port_ok = False
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise click.BadParameter(
            "not an http(s) URL with a host and a valid port (a password holding '/', '#', '?' "
            "or '@' must be percent-encoded; pass keys through the provider's environment "
            "variable instead)"
        )
    return value


base_url_option = click.option(
    "--base-url",
    default=None,
    callback=_base_url,
    help="Provider base URL (local or proxy servers). Credentials in it are never stored or "
    "shown; prefer the provider's key variable.",
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


_RUN_PARAMETER_OPTIONS = (
    click.option(
        "--max-turns",
        type=click.IntRange(1, MAX_TURNS),
        default=None,
        help=f"Model turns per sample, 1 to {MAX_TURNS} [default: the domain's budget, else "
        f"{DEFAULT_MAX_TURNS}; a case that sets its own keeps it]. Replay uses the recorded "
        "budget.",
    ),
    click.option(
        "--max-tokens",
        type=click.IntRange(16, 200_000),
        default=DEFAULT_MAX_TOKENS,
        show_default=True,
        help="Output tokens per model call.",
    ),
    click.option(
        "--temperature",
        type=FiniteFloat(0, 2),
        default=DEFAULT_TEMPERATURE,
        show_default=True,
        help="Sampling temperature, 0 to 2.",
    ),
    click.option(
        "--max-failure-rate",
        type=FiniteFloat(0, 1),
        default=DEFAULT_MAX_FAILURE_RATE,
        show_default=True,
        help="The gate fails when (check_failed + error) / judged exceeds it.",
    ),
    click.option(
        "--max-transient",
        type=FiniteFloat(0, 1),
        default=DEFAULT_MAX_TRANSIENT,
        show_default=True,
        help="The gate is inconclusive when the transient share exceeds it.",
    ),
)


def run_parameter_options(command: Callable[..., object]) -> Callable[..., object]:
    """``--max-turns``, ``--max-tokens``, ``--temperature``, ``--max-failure-rate`` and
    ``--max-transient``: the run parameters a plan fixes (``run`` and ``batch`` alike)."""
    for option in reversed(_RUN_PARAMETER_OPTIONS):
        command = option(command)
    return command
