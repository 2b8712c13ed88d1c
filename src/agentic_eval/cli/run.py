"""``agentic-eval run``: replay (default), scripted or live runs of domains, with recording."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click

from agentic_eval.cli.options import (
    provider_options,
    recordings_option,
    request_options,
    run_parameter_options,
)
from agentic_eval.core.aio import run as run_sync

Mode = Literal["replay", "live", "scripted"]
BACKENDS: tuple[Mode, ...] = ("replay", "live", "scripted")


@dataclass(frozen=True)
class RunOptions:
    """What the user asked ``run`` to do, typed (defaults come from core.settings and
    backends.spec)."""

    domains: tuple[str, ...]
    mode: Mode
    provider: str | None
    model: str | None
    base_url: str | None
    agent: str | None
    label: str | None
    record: bool
    pattern: str | None
    samples: int
    concurrency: int
    approval: Literal["enforce", "observe"] | None
    verbose: bool
    fmt: Literal["table", "json", "markdown", "junit"]
    output: Path | None
    history: bool
    recordings: Path
    max_turns: int | None
    max_tokens: int
    temperature: float
    max_failure_rate: float
    max_transient: float
    retries: int
    timeout: float
    resume: str | None = None


@click.command()
@click.argument("domains", nargs=-1)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default=None,
    help="replay (default): recorded runs, no key, no network. scripted: a domain's "
    "scripted agent. live: a model through --provider.",
)
@provider_options
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
    "to keep a naive agent's observe-mode recording beside its enforce-mode one. Any "
    "printable text; it is encoded into a safe folder name.",
)
@click.option(
    "--record",
    is_flag=True,
    help="Write one transcript per sample and the scorecard "
    "under --recordings (scripted and live runs).",
)
@click.option(
    "--cases",
    "pattern",
    default=None,
    help="Only cases whose id matches this glob (comma-separated globs allowed).",
)
@click.option(
    "--samples",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Samples (epochs) of each case (scripted and live runs).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Samples in flight at once.",
)
@click.option(
    "--approval",
    type=click.Choice(["enforce", "observe"]),
    default=None,
    help="Approval checkpoint: enforce (default) blocks unapproved must-approve calls; "
    "observe lets them execute. Replay uses the recorded mode.",
)
@click.option("-v", "--verbose", is_flag=True, help="List every failing case, not only gates.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown", "junit"]),
    default=None,
    help="table (default): terminal tables. json: one document {schema_version, runs: "
    "[{scorecard, gate, replay fidelity, ...}], ...}. markdown: the scorecard table (fits a "
    "pull-request comment). junit: JUnit XML, one testcase per sample, failed checks as "
    "failure messages.",
)
@click.option("--markdown", is_flag=True, help="Same as --format markdown.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the --format document (json when the format is table) to this file; the table "
    "prints instead of the document, as for report.",
)
@click.option(
    "--no-history",
    is_flag=True,
    help="Do not write this run's scorecard to the history folder "
    "($AGENTIC_EVAL_HISTORY_DIR, default .agentic-eval/history/<domain>/).",
)
@recordings_option
@click.option(
    "--resume",
    "resume",
    default=None,
    metavar="RUN_ID",
    help="Finish an interrupted run (Ctrl-C, a killed process) from its stored plan: finished "
    "samples are not run again, none is counted twice, those in flight are run again.",
)
@run_parameter_options
@request_options
def run(
    domains: tuple[str, ...],
    backend: Mode | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    agent: str | None,
    label: str | None,
    record: bool,
    pattern: str | None,
    samples: int,
    concurrency: int,
    approval: Literal["enforce", "observe"] | None,
    verbose: bool,
    fmt: Literal["table", "json", "markdown", "junit"] | None,
    markdown: bool,
    as_json: bool,
    output: Path | None,
    no_history: bool,
    recordings: Path,
    max_turns: int | None,
    max_tokens: int,
    temperature: float,
    max_failure_rate: float,
    max_transient: float,
    retries: int,
    timeout: float,
    resume: str | None,
) -> int:
    """Run DOMAINS (default: every domain); a DOMAIN ending in .py is an eval file.

    \b
    With no options: replay every recorded agent of every domain, keyless, and check that
    every transcript and each committed scorecard is reproduced in every field (exit 1 if
    not); a domain with no recordings is skipped, with a warning. A named domain with nothing
    recorded fails the replay (exit 1); a replay that judges nothing at all (an empty or
    missing --recordings folder) exits 2: no gate passes on nothing. Scripted and live runs
    exit with the batch gate: 0 PASS, 1 FAIL, 2 INCONCLUSIVE.
    Ctrl-C (or SIGTERM) stops starting new samples, finishes the ones in flight, stores them
    and marks the run interrupted (exit 130 / 143); a second one abandons those in flight.
    `--resume RUN_ID` finishes such a run (or one whose process was killed) from the plan
    stored with it: its scorecard equals an uninterrupted run's.
    \b
    Examples:
      agentic-eval run
      agentic-eval run retail_ops --backend scripted --agent reference --record
      agentic-eval run retail_ops --provider anthropic --model claude-sonnet-4-5 --record
      agentic-eval run retail_ops --provider openai --base-url http://127.0.0.1:8080/v1 \\
          --model qwen2.5-coder-1.5b --record
      agentic-eval run --resume 6f1c...
    """
    from agentic_eval.cli.common import recordings_root
    from agentic_eval.cli.execute import execute

    if resume is not None:
        given = [
            name
            for name, value in click.get_current_context().params.items()
            if name not in ("resume", "verbose", "fmt", "markdown", "as_json", "output",
                            "no_history")
            and click.get_current_context().get_parameter_source(name)
            is not click.core.ParameterSource.DEFAULT
            and value is not None
        ]  # fmt: skip
        if given:
            raise click.UsageError(
                "--resume takes the run's stored plan: drop "
                + ", ".join("--" + n.replace("_", "-") for n in given)
            )

    mode: Mode = backend or ("live" if provider else "replay")
    if mode == "live" and (not provider or not model):
        raise click.UsageError("a live run needs --provider and --model")
    if mode != "live" and (provider or base_url):
        raise click.UsageError("--provider and --base-url apply to live runs only")
    if mode == "replay" and record:
        raise click.UsageError("--record applies to scripted and live runs, not replay")
    chosen = [f for f, on in (("json", as_json), ("markdown", markdown), (fmt, fmt)) if on]
    if len(set(chosen)) > 1:
        raise click.UsageError("choose one output format (--format, --json or --markdown)")
    final_fmt: Literal["table", "json", "markdown", "junit"] = fmt or (
        "json" if as_json else "markdown" if markdown else "table"
    )
    if mode == "replay" and label:
        raise click.UsageError("--label names scripted and live runs; replay uses --agent")
    if mode == "replay" and approval:
        raise click.UsageError("replay uses the recorded approval mode; drop --approval")
    if mode == "replay" and samples != 1:
        raise click.UsageError("replay runs the recorded samples; drop --samples")
    options = RunOptions(
        domains=domains,
        mode=mode,
        provider=provider,
        model=model,
        base_url=base_url,
        agent=agent,
        label=label,
        record=record,
        pattern=pattern,
        samples=samples,
        concurrency=concurrency,
        approval=approval,
        verbose=verbose,
        fmt=final_fmt,
        output=output,
        history=not no_history,
        recordings=recordings_root(domains, recordings),
        max_turns=max_turns,
        max_tokens=max_tokens,
        temperature=temperature,
        max_failure_rate=max_failure_rate,
        max_transient=max_transient,
        retries=retries,
        timeout=timeout,
        resume=resume,
    )
    return run_sync(execute(options))
