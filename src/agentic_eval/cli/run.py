"""``agentic-eval run``: replay (default), scripted or live runs of domains, with recording."""

from __future__ import annotations

import asyncio
import fnmatch
from pathlib import Path
from typing import Any, Literal, cast

import click

from agentic_eval.backends.recordings import DEFAULT_RECORDINGS
from agentic_eval.cli.common import resolve_domains
from agentic_eval.domains.base import CaseSpec, Domain

BACKENDS = ("replay", "live", "scripted")


@click.command()
@click.argument("domains", nargs=-1)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default=None,
    help="replay (default): recorded runs, no key, no network. scripted: a domain's "
    "scripted agent. live: a model through --provider.",
)
@click.option(
    "--provider",
    type=click.Choice(["anthropic", "openai"]),
    default=None,
    help="Live provider (implies --backend live). openai works with any "
    "OpenAI-compatible server via --base-url.",
)
@click.option("--model", default=None, help="Model name for live runs.")
@click.option("--base-url", default=None, help="Provider base URL (local or proxy servers).")
@click.option(
    "--agent",
    default=None,
    help="scripted: the agent to run (default reference). live: the label recordings "
    "are filed under (default: the model). replay: only this agent's recordings.",
)
@click.option(
    "--label",
    default=None,
    help="Name the run (and its recordings folder) differently from the agent or model, e.g. "
    "to keep a naive agent's observe-mode recording beside its enforce-mode one.",
)
@click.option(
    "--record",
    is_flag=True,
    help="Write one transcript per case and the scorecard "
    "under --recordings (scripted and live runs).",
)
@click.option(
    "--cases",
    "pattern",
    default=None,
    help="Only cases whose id matches this glob (comma-separated globs allowed).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Cases in flight at once.",
)
@click.option(
    "--approval",
    type=click.Choice(["enforce", "observe"]),
    default=None,
    help="Approval checkpoint: enforce (default) blocks unapproved must-approve calls; "
    "observe lets them execute. Replay uses the recorded mode.",
)
@click.option("-v", "--verbose", is_flag=True, help="List every failing case, not only gates.")
@click.option("--markdown", is_flag=True, help="Print the scorecards as a Markdown table.")
@click.option("--json", "as_json", is_flag=True, help="Print the scorecards as canonical JSON.")
@click.option(
    "--recordings",
    type=click.Path(path_type=Path),
    default=DEFAULT_RECORDINGS,
    show_default=True,
    help="Root folder of the recordings.",
)
@click.option("--max-turns", type=click.IntRange(1, 200), default=12, show_default=True)
@click.option(
    "--max-tokens",
    type=click.IntRange(16, 200_000),
    default=1024,
    show_default=True,
    help="Output tokens per model call.",
)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--max-failure-rate", type=click.FloatRange(0, 1), default=0.01, show_default=True)
@click.option("--max-transient", type=click.FloatRange(0, 1), default=0.2, show_default=True)
@click.option(
    "--retries",
    type=click.IntRange(0, 20),
    default=2,
    show_default=True,
    help="Retries of transient provider errors (live).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 3600),
    default=60.0,
    show_default=True,
    help="Seconds per provider request (live).",
)
def run(domains: tuple[str, ...], **opts: Any) -> int:
    """Run DOMAINS (default: every domain).

    \b
    With no options: replay every recorded agent of every domain, keyless, and check that each
    committed scorecard is reproduced byte for byte (exit 1 if not). Scripted and live runs
    exit with the batch gate: 0 PASS, 1 FAIL, 2 INCONCLUSIVE.
    \b
    Examples:
      agentic-eval run
      agentic-eval run retail_ops --backend scripted --agent reference --record
      agentic-eval run retail_ops --provider anthropic --model claude-sonnet-4-5 --record
      agentic-eval run retail_ops --provider openai --base-url http://127.0.0.1:8080/v1 \\
          --model qwen2.5-coder-1.5b --record
    """
    from agentic_eval.cli.execute import Plan, execute

    backend = opts["backend"]
    if backend is None:
        backend = "live" if opts["provider"] else "replay"
    mode = cast(Literal["replay", "live", "scripted"], backend)
    if mode == "live" and (not opts["provider"] or not opts["model"]):
        raise click.UsageError("a live run needs --provider and --model")
    if mode != "live" and (opts["provider"] or opts["base_url"]):
        raise click.UsageError("--provider and --base-url apply to live runs only")
    if mode == "replay" and opts["record"]:
        raise click.UsageError("--record applies to scripted and live runs, not replay")
    if opts["markdown"] and opts["as_json"]:
        raise click.UsageError("choose one of --json and --markdown")
    if mode == "replay" and opts["label"]:
        raise click.UsageError("--label names scripted and live runs; replay uses --agent")
    if mode == "replay" and opts["approval"]:
        raise click.UsageError("replay uses the recorded approval mode; drop --approval")
    chosen = [(d, select_cases(d, opts["pattern"])) for d in resolve_domains(domains)]
    chosen = [(d, cases) for d, cases in chosen if cases]
    if not chosen:
        raise click.UsageError(f"no case matches --cases {opts['pattern']!r}")
    plan = Plan(
        mode=mode,
        domains=chosen,
        full=opts["pattern"] is None,
        options=opts,
    )
    return asyncio.run(execute(plan))


def select_cases(domain: Domain[Any], pattern: str | None) -> list[CaseSpec]:
    """The domain's committed cases, filtered by a comma-separated list of globs."""
    from agentic_eval.domains.base import CaseFileError

    try:
        cases = domain.load_cases()
    except CaseFileError as exc:
        raise click.UsageError(str(exc)) from None
    if pattern is None:
        return cases
    globs = [g.strip() for g in pattern.split(",") if g.strip()]
    return [c for c in cases if any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
