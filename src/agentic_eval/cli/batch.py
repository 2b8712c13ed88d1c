"""``agentic-eval batch``: N samples of a domain's cases, a workflow scenario or the corpus of
human-decided jobs, the gate read from the store.

The command only parses flags into a :class:`~agentic_eval.batch.RunPlan`, shows progress and
prints the summary; opening, running, resuming and closing the run is the library's
(:mod:`agentic_eval.batch`).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Literal

import click

from agentic_eval.cli.batch_plans import (
    corpus_flags_plan,
    domain_flags_plan,
    parameters,
    scenario_flags_plan,
)
from agentic_eval.cli.batch_view import BatchProgress, summary_lines
from agentic_eval.cli.common import CannotRun, recordings_root, warn
from agentic_eval.cli.corpus import ORIGINS
from agentic_eval.cli.options import (
    MOMENT,
    provider_options,
    recordings_option,
    request_options,
    run_parameter_options,
)
from agentic_eval.cli.stopper import Stopper
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.text import one_line

_DEFAULT = click.core.ParameterSource.DEFAULT


@click.command("batch")
@click.argument("domain", required=False)
@click.option(
    "--scenario",
    default=None,
    help="Batch one workflow scenario instead of a domain (see `agentic-eval step --list`): each "
    "sample in a freshly seeded job, gated on the scenario's own max failure rate unless "
    "--max-failure-rate is given.",
)
@click.option(
    "--corpus",
    "corpus",
    is_flag=True,
    help="Batch the corpus instead: every workflow step an operator decided, on jobs people "
    "worked (see `agentic-eval corpus list`), each rebuilt as its first attempt saw it (inputs, "
    "upstream outputs and retrieved text as of its first claim). Only cases whose first "
    "decision approved are judged; rejected ones run with the reason as feedback.",
)
@click.option("--template", default=None, help="--corpus: only jobs of this workflow template.")
@click.option("--since", type=MOMENT, default=None,
              help="--corpus: only jobs created at or after this moment (UTC).")  # fmt: skip
@click.option("--until", type=MOMENT, default=None,
              help="--corpus: only jobs created before this moment (UTC).")  # fmt: skip
@click.option("--limit", type=click.IntRange(1), default=None,
              help="--corpus: at most N cases, newest job first.")  # fmt: skip
@click.option(
    "--origin",
    "origins",
    multiple=True,
    type=click.Choice(ORIGINS),
    help="--corpus: jobs of this origin (repeatable; default real and imported).",
)
@click.option("--cases", "pattern", default=None, help="Only cases matching these globs.")
@click.option(
    "--samples",
    type=click.IntRange(1, 100_000),
    default=1,
    show_default=True,
    help="Samples (epochs) of each case.",
)
@click.option(
    "--backend",
    type=click.Choice(["scripted", "live", "replay"]),
    default=None,
    help="scripted (default): a scripted agent; live: a model via --provider; replay: a "
    "recorded agent (every recorded sample, keyless).",
)
@click.option("--agent", default=None, help="scripted: the agent (default reference); replay: "
              "whose recordings; live: the label.")  # fmt: skip
@provider_options
@click.option(
    "--concurrency", type=click.IntRange(1, 256), default=1, show_default=True,
    help="Samples in flight at once.",
)  # fmt: skip
@click.option(
    "--approval", type=click.Choice(["enforce", "observe"]), default="enforce", show_default=True
)
@click.option(
    "--gate",
    "gate_mode",
    type=click.Choice(["rate", "upper-bound"]),
    default="rate",
    show_default=True,
    help="rate: the failure rate against --max-failure-rate; upper-bound: the one-sided 95% "
    "Clopper-Pearson upper bound on it (a small clean batch does not pass a tight threshold).",
)
@run_parameter_options
@recordings_option
@click.option("--no-history", is_flag=True, help="Do not write the batch's history entry.")
@click.option("--resume", "resume", default=None, metavar="RUN_ID",
              help="Finish an interrupted batch from its stored plan: finished samples are not "
              "run again, none is counted twice.")  # fmt: skip
@click.option(
    "--executor",
    type=click.Choice(["local", "celery"]),
    default="local",
    show_default=True,
    help="local: in this process; celery: one task per sample on `agentic-eval worker` "
    "processes (needs the celery extra, AGENTIC_EVAL_BROKER_URL and a shared "
    "AGENTIC_EVAL_DATABASE_URL); with --resume, re-enqueues the missing samples.",
)
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="local: run the samples in this many child processes (each with --concurrency in "
    "flight), which rebuild the run from its stored plan and write to the same store; this "
    "process shows progress and reads the gate from the store. One event loop uses one core.",
)
@click.option(
    "--stall-timeout",
    type=click.FloatRange(0, min_open=True),
    default=900.0,
    show_default=True,
    metavar="SECONDS",
    help="celery: give up (exit 2, resumable) when no sample is stored for this long.",
)
@request_options
def batch(
    domain: str | None,
    scenario: str | None,
    corpus: bool,
    template: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int | None,
    origins: tuple[str, ...],
    pattern: str | None,
    samples: int,
    backend: Literal["scripted", "live", "replay"] | None,
    agent: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    concurrency: int,
    approval: Literal["enforce", "observe"],
    gate_mode: Literal["rate", "upper-bound"],
    max_failure_rate: float,
    max_transient: float,
    max_turns: int | None,
    max_tokens: int,
    temperature: float,
    recordings: Any,
    no_history: bool,
    resume: str | None,
    executor: Literal["local", "celery"],
    processes: int,
    stall_timeout: float,
    retries: int,
    timeout: float,
) -> int:
    """Run N samples of DOMAIN's cases and gate on the failure rate, read from the store.

    \b
    Every sample is an eval_sample row written as it finishes; the counts and the gate are read
    back from the database (so samples written by other processes count too). Prints samples,
    passed, check_failed, transient (excluded from the rate), the failure rate against the
    threshold, the one-sided 95% upper confidence bound (and how many more clean samples
    would show the threshold holds), pass^k per case and the flaky cases when there are
    several epochs, and the gate. Exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE (zero judged samples
    included) or a usage error; 130/143 when stopped (resume with --resume RUN_ID).
    \b
    Examples:
      agentic-eval batch retail_ops --samples 20
      agentic-eval batch --scenario synthesize.missing_revenue --agent hallucinating --samples 20
      agentic-eval batch retail_ops --agent naive --samples 5 --gate upper-bound
      agentic-eval batch retail_ops --provider openai --base-url http://127.0.0.1:8080/v1 \\
          --model qwen2.5-coder-1.5b --samples 3 --concurrency 4
      agentic-eval batch --resume 6f1c...
      agentic-eval batch --scenario synthesize.missing_revenue --samples 200 --executor celery
      agentic-eval batch --corpus --template lead_intelligence --since 2026-11-01 --samples 5
    """
    from agentic_eval.batch import BatchError

    ctx = click.get_current_context()
    if executor == "local" and ctx.get_parameter_source("stall_timeout") is not _DEFAULT:
        raise click.UsageError("--stall-timeout applies to --executor celery only")
    if executor == "celery" and processes > 1:
        raise click.UsageError(
            "--processes applies to --executor local (workers have --concurrency)"
        )
    filters = template or since or until or limit or origins
    if resume is not None:
        if domain or scenario or corpus or filters or pattern or samples != 1 or backend or agent:
            raise click.UsageError("--resume takes the run's stored plan: drop the other options")
        if provider:
            raise click.UsageError("--resume takes the run's stored plan: drop the other options")
        celery_ready(executor)
        return run_sync(_resume(resume, executor, stall_timeout, processes))
    if sum(1 for x in (domain, scenario, corpus or None) if x) > 1:
        raise click.UsageError("batch a DOMAIN, a --scenario or the --corpus: one of them")
    if domain is None and scenario is None and not corpus:
        raise click.UsageError(
            "name the DOMAIN, the --scenario or the --corpus to batch (or --resume RUN_ID)"
        )
    if filters and not corpus:
        raise click.UsageError("--template, --since, --until, --limit and --origin select the "
                               "--corpus")  # fmt: skip
    if pattern is not None and domain is None:
        raise click.UsageError("--cases selects a domain's cases")
    from agentic_eval.domains.onefile import is_eval_file

    if domain is not None and is_eval_file(domain):
        if executor == "celery" or processes > 1:
            raise click.UsageError(
                f"{domain} is an eval file: its domain runs in this process only; drop "
                "--processes and --executor celery, or make it a package with an entry point"
            )
        recordings = recordings_root((domain,), recordings)
    mode = backend or ("live" if provider else "scripted")
    if mode == "live" and (not provider or not model):
        raise click.UsageError("a live batch needs --provider and --model")
    if mode != "live" and (provider or base_url or model):
        raise click.UsageError("--provider, --model and --base-url apply to live batches only")
    given = ctx.get_parameter_source("max_failure_rate")
    rate = None if given is _DEFAULT else max_failure_rate
    if corpus:
        celery_ready(executor)
        store = _store()
        params = parameters(approval, temperature, max_turns, max_tokens, max_failure_rate,
                            max_transient)  # fmt: skip
        try:
            plan = corpus_flags_plan(
                store, mode, agent, provider, model, base_url, samples, concurrency, params,
                gate_mode, template, since, until, limit, origins, retries, timeout,
            )  # fmt: skip
        except BatchError as exc:
            store.close()
            raise click.UsageError(one_line(str(exc))) from None
        except BaseException:
            store.close()
            raise
        store.close()
        return run_sync(drive_plan(plan, not no_history, executor, stall_timeout, processes))
    try:
        if scenario is not None:
            plan = scenario_flags_plan(
                scenario, samples, mode, agent, provider, model, base_url, concurrency,
                approval, gate_mode, rate, max_transient, max_turns, max_tokens, temperature,
                recordings, retries, timeout,
            )  # fmt: skip
        else:
            assert domain is not None
            plan = domain_flags_plan(
                domain, pattern, samples, mode, agent, provider, model, base_url, concurrency,
                approval, gate_mode, max_failure_rate, max_transient, max_turns, max_tokens,
                temperature, recordings, retries, timeout,
            )  # fmt: skip
    except BatchError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    celery_ready(executor)
    return run_sync(drive_plan(plan, not no_history, executor, stall_timeout, processes))


def celery_ready(executor: str) -> None:
    """The celery executor's extra, shared store and broker settings, or one line (exit 2)."""
    if executor != "celery":
        return
    from agentic_eval.workers import WorkerError, executor_settings

    try:
        executor_settings()
    except WorkerError as exc:
        raise click.UsageError(one_line(str(exc))) from None


async def drive_plan(plan: Any, history: bool, executor: str, stall: float, processes: int) -> int:
    """Open a run of ``plan`` and drive it to its summary on the executor (the exit code)."""
    from agentic_eval.batch import open_run

    _broker_reachable(executor)
    store = _store()
    try:
        run_id = open_run(store, plan)
    except Exception as exc:  # a backend that cannot be built: one line
        store.close()
        raise CannotRun(one_line(str(exc))) from None
    return await _drive(store, run_id, len(plan.keys), history, executor, stall, processes)


def _broker_reachable(executor: str) -> None:
    """Before a run is opened for the celery executor: its broker answers, or one line."""
    if executor != "celery":
        return
    from agentic_eval.workers import WorkerError
    from agentic_eval.workers.celery_app import check_broker

    try:
        check_broker()
    except WorkerError as exc:  # nothing ran yet: exit 2, as for a usage error
        raise click.UsageError(one_line(str(exc))) from None


async def _resume(run_id: str, executor: str, stall: float, processes: int) -> int:
    from agentic_eval.batch import BatchError, plan_of

    _broker_reachable(executor)
    store = _store()
    run = store.run(run_id)
    if run is None:
        store.close()
        raise click.UsageError(f"no run {run_id} in the store")
    try:
        plan = plan_of(run)
    except BatchError as exc:
        store.close()
        raise click.UsageError(one_line(str(exc))) from None
    done = len(store.sample_verdicts([run_id]).get(run_id, []))
    click.echo(
        f"resuming run {run_id}: {done} of {len(plan.keys)} samples already stored", err=True
    )
    # a batch that had finished was filed then: closing it again must not file it twice
    history = run.status != "finished"
    if history:
        from agentic_eval.core.process import this_process

        store.reopen_run(run_id, this_process())  # running again, as the sweep can tell
    todo = len(plan.keys) - done
    return await _drive(store, run_id, todo, history, executor, stall, processes)


async def _drive(
    store: Any, run_id: str, todo: int, history: bool, executor: str, stall: float, processes: int
) -> int:
    from agentic_eval.backends.base import AuthenticationFailed, BackendError
    from agentic_eval.batch import BatchError, close_run, plan_of, run_samples
    from agentic_eval.batch.finish import plan_sinks
    from agentic_eval.batch.processes import run_on_processes
    from agentic_eval.evaluation.gate import EXIT_CODES
    from agentic_eval.workers import Stalled, WorkerError, run_on_workers

    run = store.run(run_id)
    sinks = plan_sinks(plan_of(run)) if run is not None else []  # one set, from start to close
    stop = Stopper()  # as `run`: the first signal stops new samples, a second abandons them
    stop.install()
    progress = BatchProgress(todo)
    stalled: str | None = None
    read = None  # the child processes' rows read back as they came
    try:
        if executor == "celery":  # samples stored by the workers, watched in the store
            resume = f"agentic-eval batch --resume {run_id} --executor celery"
            click.echo(
                f"batch: run {run_id} on the celery workers (if this dies: {resume})", err=True
            )
            await run_on_workers(
                store, run_id, on_progress=progress.add, should_stop=stop, stall_timeout=stall
            )
        elif processes > 1:  # samples stored by the child processes, watched in the store
            click.echo(
                f"batch: run {run_id} on {processes} processes "
                f"(if this dies: agentic-eval batch --resume {run_id})",
                err=True,
            )
            ran = await run_on_processes(
                store, run_id, processes, on_progress=progress.add, should_stop=stop
            )
            read = ran.read
        else:
            await run_samples(
                store, run_id, on_case=progress.advance, should_stop=stop, sinks=sinks
            )
    except Stalled as exc:
        stalled = one_line(str(exc))
    except (AuthenticationFailed, BackendError, BatchError, WorkerError) as exc:
        progress.close()
        close_run(store, run_id, status="interrupted", sinks=sinks)
        store.close()
        raise CannotRun(one_line(str(exc))) from None
    except asyncio.CancelledError:  # the second signal: the samples in flight are abandoned
        pass
    finally:
        progress.close()
        stop.remove()
    status = "interrupted" if stop() or stalled else "finished"
    s = close_run(store, run_id, status=status, sinks=sinks, read=read)
    if history and not s.missing:  # an unfinished batch is filed when --resume finishes it
        _history(store, s)
    store.close()
    for line in summary_lines(s):
        click.echo(line)
    if stalled is not None:
        click.echo(f"agentic-eval: error: {stalled}", err=True)
        return 2
    if stop.signal is not None:
        return stop.exit_code()
    if s.session is not None and s.session.reproduced is False:  # a replay that did not reproduce
        return 1
    return EXIT_CODES[s.gate.verdict]


def _history(store: Any, s: Any) -> None:
    """File the batch's history entry (the history sink, as `run` does); a history write never
    fails the batch."""
    from agentic_eval.history.sink import HistorySink

    filing = HistorySink(store, s.plan)
    filing.finished(s.session)
    for line in filing.warnings:
        warn(line)


def _store() -> Any:
    from agentic_eval.store.db import Store, StoreError

    try:
        store = Store()
        store.migrate()
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    return store
