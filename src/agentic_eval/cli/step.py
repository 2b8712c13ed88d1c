"""``agentic-eval step``: run one workflow step once, verbosely (the product's ``wf_step``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click

from agentic_eval.cli.options import (
    provider_options,
    recordings_option,
    request_options,
)
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.defaults import DEFAULT_MAX_TURNS, MAX_REJECTIONS

StepMode = Literal["scripted", "replay", "live"]


@dataclass(frozen=True)
class StepOptions:
    """What the user asked ``step`` to do, typed."""

    scenario: str | None
    job: str | None
    step_key: str | None
    mode: StepMode
    agent: str | None
    provider: str | None
    model: str | None
    base_url: str | None
    record: bool
    recordings: Path
    show_prompt: bool
    interactive: bool
    max_turns: int
    retries: int
    timeout: float


@click.command()
@click.option("--scenario", default=None, help="A registered scenario (see --list).")
@click.option(
    "--job",
    default=None,
    is_flag=False,
    flag_value="",
    help="Replay a real job's step, as its first attempt saw it (--job alone lists the jobs a "
    "step can be replayed from).",
)
@click.option(
    "--step",
    "step_key",
    default=None,
    help="With --job: which step (default: the first claimed step not yet approved).",
)
@click.option("--list", "list_only", is_flag=True, help="List the registered scenarios and exit.")
@click.option(
    "--backend",
    type=click.Choice(["scripted", "replay", "live"]),
    default=None,
    help="scripted (default): a scripted agent. replay: a recorded attempt, keyless. "
    "live: a model through --provider.",
)
@click.option(
    "--agent",
    default=None,
    help="scripted: the agent (default: the scenario's). "
    "replay: whose recording. live: the label recordings are filed under.",
)
@provider_options
@click.option(
    "--record",
    is_flag=True,
    help="Write each attempt's transcript under "
    "--recordings (attempt n of --interactive is sample n-1).",
)
@recordings_option
@click.option("--show-prompt", is_flag=True, help="Print every prompt and every response.")
@click.option(
    "--interactive",
    is_flag=True,
    help=f"After each attempt, approve or reject it; a rejection's reason is fed back as "
    f"feedback to the next attempt (at most {MAX_REJECTIONS} rejections).",
)
@click.option(
    "--max-turns",
    type=click.IntRange(1, 200),
    default=DEFAULT_MAX_TURNS,
    show_default=True,
    help="Model turns per attempt.",
)
@request_options
def step(
    scenario: str | None,
    job: str | None,
    step_key: str | None,
    list_only: bool,
    backend: StepMode | None,
    agent: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    record: bool,
    recordings: Path,
    show_prompt: bool,
    interactive: bool,
    max_turns: int,
    retries: int,
    timeout: float,
) -> int:
    """Run one workflow step once, verbosely, inside a real job.

    \b
    The job is seeded through the workflow services (template, transitions, upstream steps
    approved, earlier rejections), the agent's attempt is claimed, run with the stubbed tools,
    finished through the service and judged by the scenario's checks (the template's universal
    checks included). Jobs live in the store ($AGENTIC_EVAL_HOME or AGENTIC_EVAL_DATABASE_URL).
    Exit 0 passed, 1 check_failed or error, 2 usage error or transient, 130/143 interrupted by
    SIGINT/SIGTERM (the agent's claim is released at once, its attempt marked interrupted). A
    claim is a lease renewed while this process lives (AGENTIC_EVAL_CLAIM_LEASE seconds,
    default 120): if the process is killed outright, the step can be claimed again once the
    lease has expired (see `agentic-eval workflow recover`).
    \b
    Examples:
      agentic-eval step --list
      agentic-eval step --scenario synthesize.missing_revenue --agent hallucinating
      agentic-eval step --scenario synthesize.after_rejection --show-prompt
      agentic-eval step --scenario synthesize.missing_revenue --agent learner --interactive
      agentic-eval step --scenario synthesize.grounded --backend replay --agent reference
      agentic-eval step --job
      agentic-eval step --job 6f1c... --step synthesize --agent reference
    """
    from agentic_eval.cli.step_run import execute_step, list_scenarios

    if list_only:
        if scenario is not None or job is not None:
            raise click.UsageError("--list lists every scenario; drop --scenario/--job")
        return list_scenarios()
    if job == "" and scenario is None and step_key is None:
        from agentic_eval.cli.step_run import list_jobs

        return list_jobs()
    for flag, value in (
        ("--scenario", scenario),
        ("--job", job),
        ("--step", step_key),
        ("--agent", agent),
    ):
        if value is not None and not value.strip():
            raise click.UsageError(f"{flag} is empty")
    if (scenario is None) == (job is None):
        raise click.UsageError("pass exactly one of --scenario NAME or --job ID")
    if step_key is not None and job is None:
        raise click.UsageError("--step applies to --job (a scenario pins its step)")
    mode: StepMode = backend or ("live" if provider else "scripted")
    if mode == "live" and (not provider or not model):
        raise click.UsageError("a live step needs --provider and --model")
    if mode != "live" and (provider or base_url or model):
        raise click.UsageError("--provider, --model and --base-url apply to live steps only")
    if mode == "replay" and record:
        raise click.UsageError("--record applies to scripted and live steps, not replay")
    options = StepOptions(
        scenario=scenario,
        job=job,
        step_key=step_key,
        mode=mode,
        agent=agent,
        provider=provider,
        model=model,
        base_url=base_url,
        record=record,
        recordings=recordings,
        show_prompt=show_prompt,
        interactive=interactive,
        max_turns=max_turns,
        retries=retries,
        timeout=timeout,
    )
    return run_sync(execute_step(options))
