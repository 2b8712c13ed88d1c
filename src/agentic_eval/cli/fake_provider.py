"""``agentic-eval fake-provider``: the test suite's fake model provider as a server, so a user can
try live paths, load and the transient gate with no key and no network."""

from __future__ import annotations

import re
import signal
import time
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from agentic_eval.core.text import one_line

if TYPE_CHECKING:
    from agentic_eval.testing.fake_provider import FakeProvider, Responder

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_LATENCY = re.compile(r"\s*(\d+(?:\.\d*)?)\s*(?:-\s*(\d+(?:\.\d*)?)\s*)?")
_DEFAULT_RESPONDER = "retail_ops"


def _latency(ctx: click.Context, param: click.Parameter, value: str) -> float | tuple[float, float]:
    """Milliseconds: ``100``, or ``50-150`` for a uniform draw per request."""
    match = _LATENCY.fullmatch(value)
    if match is None:
        raise click.BadParameter(
            f"takes milliseconds, N or LOW-HIGH (e.g. 100 or 50-150), not {value!r}", ctx, param
        )
    low, high = match.group(1), match.group(2)
    latency = float(low) if high is None else (float(low), float(high))
    _check_shape(ctx, param, latency_ms=latency)
    return latency


def _fail_rate(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[int, float]:
    rates: dict[int, float] = {}
    for value in values:
        status, sep, rate = value.partition("=")
        try:
            if not sep:
                raise ValueError
            rates[int(status)] = float(rate)
        except ValueError:
            raise click.BadParameter(
                f"takes STATUS=RATE (e.g. 529=0.3), not {value!r}", ctx, param
            ) from None
    _check_shape(ctx, param, fail_rates=rates)
    return rates


def _check_shape(ctx: click.Context, param: click.Parameter, **shape: Any) -> None:
    from agentic_eval.testing.load_shape import LoadShape

    try:
        LoadShape(**shape)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _reference_responder(spec: str) -> tuple[str, str, Responder]:
    """The domain, agent and responder that ``DOMAIN[:AGENT]`` names (agent: reference).

    Raises:
        click.UsageError: An unknown domain or agent.
    """
    from agentic_eval.backends.scripted import respond
    from agentic_eval.cli.common import resolve_one_domain
    from agentic_eval.core.model import ModelRequest, ModelResponse

    name, _, agent_name = spec.partition(":")
    domain = resolve_one_domain(name, "--responder")
    agent_name = agent_name or "reference"
    agents = domain.agents()
    if agent_name not in agents:
        known = ", ".join(sorted(agents)) or "none"
        raise click.UsageError(
            f"--responder: {domain.name} has no scripted agent {agent_name!r} (it has: {known})"
        )
    agent = agents[agent_name]

    def responder(request: ModelRequest) -> ModelResponse:
        try:
            return respond(agent, request)
        except Exception as exc:  # answered as HTTP 500; say so here too, the client may not
            click.echo(f"agentic-eval: warning: responder failed: {one_line(str(exc))}", err=True)
            raise

    return domain.name, agent_name, responder


@click.command("fake-provider")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on (0 picks a free one; the URLs printed name it).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--latency-ms",
    "latency",
    callback=_latency,
    metavar="MS|LOW-HIGH",
    default="0",
    show_default=True,
    help="Milliseconds before each answer: N, or LOW-HIGH for a uniform draw per request.",
)
@click.option(
    "--fail-rate",
    "fail_rates",
    multiple=True,
    callback=_fail_rate,
    metavar="STATUS=RATE",
    help="Answer this share of requests with this HTTP error in the provider's envelope "
    "(e.g. 529=0.3; repeatable; rates add up to 1 at most).",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed the failure and latency draws: the n-th request meets the same lot every run.",
)
@click.option(
    "--responder",
    default=_DEFAULT_RESPONDER,
    show_default=True,
    metavar="DOMAIN[:AGENT]",
    help="Answer as this domain's scripted agent (default agent: reference).",
)
def fake_provider(
    port: int,
    host: str,
    latency: float | tuple[float, float],
    fail_rates: dict[int, float],
    seed: int | None,
    responder: str,
) -> int:
    """Serve a fake model provider (Anthropic and OpenAI wire formats) until Ctrl-C or SIGTERM.

    \b
    It answers as a domain's scripted agent, so live runs of that domain pass
    with no key and no network, after --latency-ms per answer, with random
    provider errors at the --fail-rate shares (the transient gate's inputs).
    It holds the load of `run --concurrency 64`: keep-alive connections, a
    listen backlog of 1024, every connection on one asyncio event loop.
      agentic-eval fake-provider --latency-ms 100 --port 8765 --fail-rate 529=0.3
      agentic-eval run retail_ops --provider openai \\
          --base-url http://127.0.0.1:8765/v1 --model fake --concurrency 64
    Exit 130 on SIGINT, 143 on SIGTERM (in-flight requests are dropped).
    """
    from agentic_eval.testing.fake_provider import FakeProvider

    domain, agent, answer = _reference_responder(responder)
    fake = FakeProvider(
        answer,
        host=host,
        port=port,
        latency_ms=latency,
        fail_rates=fail_rates,
        seed=seed,
        keep_requests=False,  # it may serve for hours: keep counts, not requests
    )
    previous = {sig: signal.getsignal(sig) for sig in _SIGNALS}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        for sig, handler in previous.items():  # a second signal acts at once
            signal.signal(sig, handler)
        raise _Stopped(signum)

    for sig in _SIGNALS:
        signal.signal(sig, on_signal)
    try:
        try:
            fake.start()
        except OSError as exc:
            raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        _describe(fake, domain, agent, latency, fail_rates)
        while True:
            time.sleep(3600)
    except _Stopped as stopped:
        click.echo(f"stopping ({stopped})", err=True)
        fake.stop()
        served = sorted(fake.status_counts.items())
        counts = ", ".join(f"HTTP {s}: {n}" for s, n in served) or "none"
        click.echo(f"served {sum(n for _, n in served)} responses ({counts})", err=True)
        return 128 + stopped.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        fake.stop()


def _describe(
    fake: FakeProvider,
    domain: str,
    agent: str,
    latency: float | tuple[float, float],
    fail_rates: dict[int, float],
) -> None:
    shown = f"{latency[0]:g}-{latency[1]:g}" if isinstance(latency, tuple) else f"{latency:g}"
    failures = ", ".join(f"{s} at {r:g}" for s, r in sorted(fail_rates.items())) or "none"
    click.echo(
        f"fake provider on {fake.base_url}: answers as {domain} / {agent}, "
        f"latency {shown} ms, random failures: {failures}"
    )
    click.echo(f"  Anthropic base URL: {fake.anthropic_base_url}")
    click.echo(f"  OpenAI base URL:    {fake.openai_base_url}")
    click.echo("example (no key needed):")
    click.echo(
        f"  agentic-eval run {domain} --provider openai --base-url {fake.openai_base_url} "
        "--model fake --no-history"
    )
    click.echo("Ctrl-C to stop.", err=True)
