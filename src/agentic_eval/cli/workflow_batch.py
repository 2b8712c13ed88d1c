"""``agentic-eval workflow batch``: whole jobs driven N times through the workflow, a policy
acting as the operator (the seed's ``wf_batch``); the gate read from the store."""

from __future__ import annotations

from typing import Any, Literal

import click

from agentic_eval.cli.options import provider_options, request_options, run_parameter_options
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.text import one_line


@click.command("batch")
@click.option("--fixture", default=None, help="The job fixture each job starts from (--list).")
@click.option("--list", "list_", is_flag=True, help="List the job fixtures and exit.")
@click.option("--runs", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Jobs to drive.")  # fmt: skip
@click.option("--agent", default=None,
              help="scripted: the agent (default reference); live: the label.")  # fmt: skip
@provider_options
@click.option("--max-attempts", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Attempts at one step before the job is given up (cancelled).")  # fmt: skip
@click.option("--operator", default="policy-operator", show_default=True,
              help="The operator user the policy's decisions are attributed to.")  # fmt: skip
@click.option("--concurrency", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Jobs in flight at once.")  # fmt: skip
@click.option("--approval", type=click.Choice(["enforce", "observe"]), default="enforce",
              show_default=True)  # fmt: skip
@run_parameter_options
@click.option("--no-history", is_flag=True, help="Do not write the batch's history entry.")
@click.option("--executor", type=click.Choice(["local", "celery"]), default="local",
              show_default=True,
              help="local: in this process; celery: one task per job on `agentic-eval worker` "
              "processes (as `batch --executor celery`).")  # fmt: skip
@click.option("--processes", type=click.IntRange(1, 64), default=1, show_default=True,
              help="local: drive the jobs in this many child processes.")  # fmt: skip
@click.option("--stall-timeout", type=click.FloatRange(0, min_open=True), default=900.0,
              show_default=True, metavar="SECONDS",
              help="celery: give up (exit 2, resumable) when none is stored so long.")  # fmt: skip
@request_options
def workflow_batch(
    fixture: str | None,
    list_: bool,
    runs: int,
    agent: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    max_attempts: int,
    operator: str,
    concurrency: int,
    approval: Literal["enforce", "observe"],
    max_failure_rate: float,
    max_transient: float,
    max_turns: int | None,
    max_tokens: int,
    temperature: float,
    no_history: bool,
    executor: Literal["local", "celery"],
    processes: int,
    stall_timeout: float,
    retries: int,
    timeout: float,
) -> int:
    """Drive --runs jobs from --fixture through every step of the workflow, acting as the
    operator: a policy rejects an attempt whose checks failed, with a reason naming each failed
    check (the agent's feedback on its next attempt), and approves every other one, up to
    --max-attempts per step; a step that runs out of attempts cancels its job.

    \b
    Each job is one sample: passed when every step was approved. Prints, per step, the
    attempts, approvals and rejections with their reasons, then the workflow-level gate, read
    from the store. Exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a usage error. The jobs are kept
    with origin workflow-batch: `agentic-eval corpus list --origin workflow-batch` shows them and
    `batch --corpus --origin workflow-batch` replays their decisions (a demo corpus).
    \b
    Examples:
      agentic-eval workflow batch --list
      agentic-eval workflow batch --fixture acme-widgets-a --runs 20 --agent hallucinating
      agentic-eval workflow batch --fixture acme-widgets-b --runs 5 --provider openai \\
          --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b
    """
    from agentic_eval.batch import BatchError
    from agentic_eval.batch.planning import workflow_plan

    if list_:
        _list_fixtures()
        return 0
    if fixture is None:
        raise click.UsageError("name the --fixture to drive jobs from (--list shows them)")
    if executor == "celery" and processes > 1:
        raise click.UsageError(
            "--processes applies to --executor local (workers have --concurrency)"
        )
    mode = "live" if provider else "scripted"
    if mode == "live" and not model:
        raise click.UsageError("a live workflow batch needs --provider and --model")
    if mode != "live" and (base_url or model):
        raise click.UsageError("--model and --base-url apply to live batches (with --provider)")
    from agentic_eval.cli.batch import celery_ready, drive_plan
    from agentic_eval.cli.batch_plans import backend_spec, parameters

    spec: Any
    if mode == "scripted":
        from agentic_eval.backends.spec import BackendSpec

        spec = BackendSpec(kind="scripted", agent=agent or "reference")
    else:
        spec = backend_spec(mode, agent, {}, "", provider, model, base_url, None, retries, timeout)
    params = parameters(approval, temperature, max_turns, max_tokens, max_failure_rate,
                        max_transient)  # fmt: skip
    try:
        plan = workflow_plan(
            fixture, spec, params, runs=runs, max_attempts=max_attempts, operator=operator,
            concurrency=concurrency,
        )  # fmt: skip
    except BatchError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    celery_ready(executor)
    return run_sync(drive_plan(plan, not no_history, executor, stall_timeout, processes))


def _list_fixtures() -> None:
    from agentic_eval.workflow.scenarios import job_fixtures

    for f in job_fixtures().values():
        click.echo(f"{f.name:20} {f.workflow.key:20} {one_line(f.description, 100)}")
