"""Carry out a ``run``: plan jobs, build backends from specs, run sessions, print, exit code."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import click

from agentic_eval.backends.base import AuthenticationFailed, BackendError
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import BatchError, RunPlan, open_run
from agentic_eval.batch.finish import run_plan, sweep_abandoned
from agentic_eval.batch.planning import replay_plan, suite_plan
from agentic_eval.batch.run import plan_specs
from agentic_eval.cli import render
from agentic_eval.cli.common import (
    CannotRun,
    domain_argument,
    load_cases,
    resolve_domains,
    select_cases,
    warn,
)
from agentic_eval.cli.run import RunOptions
from agentic_eval.cli.stopper import Stopper
from agentic_eval.core.process import process_gone, this_process
from agentic_eval.core.realdata import inside_git_work_tree
from agentic_eval.core.settings import RunParameters
from agentic_eval.core.text import one_line
from agentic_eval.domains.base import Domain
from agentic_eval.evaluation.gate import EXIT_CODES
from agentic_eval.evaluation.session import SessionResult
from agentic_eval.history import StoredEntry
from agentic_eval.history.sink import HistorySink
from agentic_eval.recordings.files import (
    RecordingError,
    list_agents,
    unnamed_folders,
    write_atomic,
)
from agentic_eval.recordings.layout import LabelError, check_label
from agentic_eval.recordings.record import ProducerMismatch
from agentic_eval.store.db import Store, StoreError
from agentic_eval.tasks.spec import TaskSpec


@dataclass(frozen=True)
class Job:
    """One suite with one backend: a stored plan (and the run it resumes, if any)."""

    domain: Domain[Any]
    plan: RunPlan
    specs: list[TaskSpec[Any]]
    """One spec per planned case (for fingerprints and real-fixture marks)."""
    resume: str | None = None


def _job(domain: Domain[Any], plan: RunPlan, resume: str | None = None) -> Job:
    return Job(domain, plan, plan_specs(plan)[0], resume)


@dataclass
class Plan:
    """The jobs, and what could not be run (one line each)."""

    jobs: list[Job]
    not_recorded: list[str]
    broken: list[str]
    partial: list[str] = field(default_factory=lambda: [])
    """Partial recordings: the cases they hold no recording of (a warning each)."""
    arguments: dict[str, str] = field(default_factory=lambda: {})
    """How a command names each domain not recorded (its eval file's path, or its name)."""


def _parameters(o: RunOptions, domain: Domain[Any]) -> RunParameters:
    return RunParameters(
        approval_mode=o.approval or "enforce",
        temperature=o.temperature,
        max_turns=domain.turn_budget(o.max_turns),
        max_tokens=o.max_tokens,
        max_failure_rate=o.max_failure_rate,
        max_transient=o.max_transient,
    )


def _replay_jobs(o: RunOptions, domain: Domain[Any], plan: Plan) -> None:
    cases = select_cases(load_cases(domain), o.pattern)
    recorded = list_agents(o.recordings, domain.name)
    for folder, files in unnamed_folders(o.recordings, domain.name) if o.agent is None else ():
        plan.broken.append(
            f"{domain.name} / {folder}: {files} file(s) in a folder whose name is not an encoded "
            f"agent label, so nothing replays them (under {o.recordings / domain.name}); rename "
            "it to the label's folder name (see `agentic-eval list recordings`) or move it out"
        )
    if o.agent is not None and o.agent not in recorded and not o.domains:
        return  # a bare `run --agent A` replays the domains that recorded A
    if o.agent is not None and o.agent not in recorded:
        known = ", ".join(recorded) or "none"
        raise click.UsageError(
            f"no recordings of agent {o.agent!r} for {domain.name} under {o.recordings} "
            f"(recorded: {known})"
        )
    agents = [o.agent] if o.agent is not None else recorded
    if not agents:
        plan.not_recorded.append(domain.name)
        plan.arguments[domain.name] = domain_argument(domain)
        return
    for agent in agents:
        unrecorded: list[str] = []
        try:
            job = replay_plan(
                domain, cases, o.recordings, agent, concurrency=o.concurrency,
                full=o.pattern is None, unrecorded=unrecorded,
            )  # fmt: skip
        except RecordingError as exc:
            plan.broken.append(f"{domain.name} / {agent}: {exc}")
            continue
        if unrecorded:
            shown = ", ".join(unrecorded[:8]) + (
                f" (+{len(unrecorded) - 8} more)" if len(unrecorded) > 8 else ""
            )
            plan.partial.append(
                f"{domain.name} / {agent}: {len(unrecorded)} of {len(cases)} case(s) have no "
                f"recording (recorded with --cases, or the recording was cut short); replaying the "
                f"{len(cases) - len(unrecorded)} recorded: not recorded: {shown}"
            )
        if len(unrecorded) < len(cases):
            plan.jobs.append(_job(domain, job))


def _spec(o: RunOptions, domain: Domain[Any]) -> BackendSpec:
    if o.mode == "scripted":
        from agentic_eval.batch import scripted_agents

        name = o.agent or "reference"
        agents = scripted_agents(domain)
        if name not in agents:
            known = ", ".join(sorted(agents)) or "none"
            raise click.UsageError(f"{domain.name} has no scripted agent {name!r} ({known})")
        spec = BackendSpec(kind="scripted", agent=name, label=o.label)
    else:
        assert o.provider is not None and o.model is not None
        spec = BackendSpec(
            kind="live",
            provider=o.provider,
            model=o.model,
            base_url=o.base_url,
            label=o.label or o.agent,
            retries=o.retries,
            timeout=o.timeout,
        )
    if o.record:
        real = bool(domain.external_fixtures())
        if real and inside_git_work_tree(o.recordings):
            raise click.UsageError(
                f"{domain.name} is using real fixtures from EVAL_FIXTURE_DIR: refusing to record "
                f"into {o.recordings}, inside a git repository; pass --recordings DIR outside "
                "any git repository"
            )
        spec = spec.model_copy(update={"record": True, "recordings": str(o.recordings)})
    return spec


def _resume_plan(run_id: str) -> Plan:
    """The one job of ``run --resume RUN_ID``: the run's stored plan.

    Raises:
        click.UsageError: No such run, no plan, a finished run, one still running, a scenario.
    """
    from agentic_eval.batch import plan_of

    try:
        store = Store()
        try:
            run = store.run(run_id)
            abandoned = {r.id for r in store.abandoned_runs()}
        finally:
            store.close()
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    if run is None:
        raise click.UsageError(f"no run {run_id} in the store")
    try:
        plan = plan_of(run)
    except BatchError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    if run.status == "finished":
        raise click.UsageError(f"run {run_id} is finished: nothing to resume")
    if run.status == "running" and run_id not in abandoned and not process_gone(run.worker):
        raise click.UsageError(
            f"run {run_id} is running in {run.worker or 'another process'} (its heartbeat is "
            "fresh): stop that process first, or wait two minutes after it died"
        )
    if plan.kind != "suite":
        raise click.UsageError(
            f"run {run_id} is a scenario batch: resume it with `agentic-eval batch --resume "
            f"{run_id}`"
        )
    from agentic_eval.domains.registry import UnknownDomainError, get_domain

    try:
        domain = get_domain(plan.suite)
    except UnknownDomainError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    return Plan([_job(domain, plan, resume=run_id)], [], [])


def plan_jobs(o: RunOptions) -> Plan:
    """The jobs a ``run`` asks for.

    Raises:
        click.UsageError: For bad combinations, unknown agents, bad labels, no matching case.
    """
    if o.resume is not None:
        return _resume_plan(o.resume)
    plan = Plan([], [], [])
    matched = False
    for label in (o.label, o.agent if o.mode == "live" else None):
        if label is not None:
            try:
                check_label(label)
            except LabelError as exc:
                raise click.UsageError(f"--label/--agent: {exc}") from None
    for domain in resolve_domains(o.domains):
        cases = select_cases(load_cases(domain), o.pattern)
        if not cases:
            continue
        matched = True
        if o.mode == "replay":
            _replay_jobs(o, domain, plan)
            continue
        job = suite_plan(
            domain, cases, _spec(o, domain), _parameters(o, domain), samples=o.samples,
            concurrency=o.concurrency, full=o.pattern is None,
        )  # fmt: skip
        plan.jobs.append(_job(domain, job))
    bare_agent = o.mode == "replay" and o.agent is not None and not o.domains
    if bare_agent and not plan.jobs and not plan.broken:
        raise click.UsageError(f"no domain has recordings of agent {o.agent!r}")
    if not matched:
        if o.pattern is not None:
            raise click.UsageError(f"no case matches --cases {o.pattern!r}")
        raise click.UsageError("no domain has any case to run")
    return plan


async def execute(o: RunOptions) -> int:
    """Run every job; print; return the exit code."""
    plan = plan_jobs(o)
    if o.resume is not None:  # the stored plan says what the run is
        o = dataclasses.replace(o, mode=plan.jobs[0].plan.backend.kind)
    for job in plan.jobs:
        await _preflight(job)
    real = any(s.external_fixtures for job in plan.jobs for s in job.specs)
    if real and o.output is not None and inside_git_work_tree(o.output):
        raise click.UsageError(
            f"the run uses real fixtures from EVAL_FIXTURE_DIR: refusing to write --output "
            f"{o.output} inside a git repository (the document holds their values); write it "
            "outside any repository"
        )
    try:
        store = Store()
        store.migrate()
        for dead, kept in sweep_abandoned(store):
            started = dead.started_at.strftime("%Y-%m-%d %H:%M")
            found = (
                f"; {kept.added} sample(s) it recorded under {kept.folder} but never stored "
                "were added from their transcripts"
                if kept.added
                else ""
            )
            warn(
                f"run {dead.id} ({dead.domain} / {dead.agent}, started {started}) was left "
                f"running by a process that stopped; marked abandoned{found}"
            )
            for line in kept.unreadable[:3]:
                warn(f"run {dead.id}: a transcript could not be read: {line}")
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    stopper = Stopper()
    stopper.install()
    results: list[SessionResult] = []
    entries: list[StoredEntry] = []
    code: int | None = None
    try:
        for job in plan.jobs:
            if stopper():
                break
            filing = HistorySink(store, job.plan, write=o.history)
            result = await _run_job(o, job, store, stopper, filing)
            results.append(result)
            for line in filing.warnings:
                warn(line)
            assert filing.stored is not None
            entries.append(filing.stored)
    except AuthenticationFailed as exc:
        provider = o.provider or "provider"
        click.echo(
            f"agentic-eval: error: {provider}: authentication failed: {one_line(str(exc))}",
            err=True,
        )
        code = 2
    except asyncio.CancelledError:
        code = stopper.exit_code()
    except StoreError as exc:
        click.echo(f"agentic-eval: error: {one_line(str(exc))}", err=True)
        code = 1
    except (RecordingError, OSError) as exc:  # a recording that cannot be written or read
        detail = str(exc) if isinstance(exc, RecordingError) else f"{type(exc).__name__}: {exc}"
        click.echo(f"agentic-eval: error: recording: {one_line(detail)}", err=True)
        code = 1
    finally:
        stopper.remove()
        store.close()
    if code is not None:
        return code
    document = _document(o, results, entries, plan)
    if o.output is not None:
        try:
            write_atomic(o.output, document)
        except OSError as exc:
            raise CannotRun(f"cannot write {o.output}: {exc.strerror or exc}") from None
    notes = {job.domain.name: job.domain.description for job in plan.jobs}
    if o.fmt == "table" or o.output is not None:  # --output: the document to the file only
        render.print_results(results, verbose=o.verbose, notes=notes)
    else:
        click.echo(document, nl=not document.endswith("\n"))
    strict = o.mode == "replay" and bool(o.domains)  # each named domain must replay something
    for name in plan.not_recorded:
        argument = plan.arguments.get(name, name)
        hint = f"record it with `agentic-eval run {argument} --backend scripted --record`"
        if strict:
            click.echo(
                f"agentic-eval: error: {name}: nothing recorded under {o.recordings} to "
                f"replay; {hint}",
                err=True,
            )
        else:
            warn(f"{name}: skipped: nothing recorded under {o.recordings}; {hint}")
    for job, result in zip(plan.jobs, results, strict=False):
        skipped = [c.result for c in result.run.cases if c.result.outcome.kind == "transient"]
        if job.plan.backend.record and skipped:
            cases = ", ".join(r.case_id if r.sample == 0 else f"{r.case_id}@{r.sample}"
                              for r in skipped[:5])  # fmt: skip
            warn(
                f"{job.domain.name}: {len(skipped)} transient samples not recorded "
                f"(the provider failed; such a file could never replay): {cases}"
            )
    for line in plan.partial:
        warn(line)
    for line in plan.broken:
        click.echo(f"agentic-eval: error: {one_line(line)}", err=True)
    for r in results:
        if r.status == "interrupted":
            warn(
                f"{r.suite}: run {r.run_id} stopped; finish it with "
                f"`agentic-eval run --resume {r.run_id}`"
            )
    if stopper():
        return stopper.exit_code()
    if o.mode == "replay":
        if not results and not plan.broken:
            where = "" if o.recordings.is_dir() else " (no such folder)"
            click.echo(
                f"agentic-eval: error: nothing to replay: no recording under "
                f"{o.recordings}{where} matches; nothing was judged",
                err=True,
            )
            return 2  # no verdict, as a batch with nothing judged is inconclusive
        ok = all(r.reproduced for r in results) and not plan.broken
        return 0 if ok and not (strict and plan.not_recorded) else 1
    return max((EXIT_CODES[r.gate.verdict] for r in results), default=0)


def _document(
    o: RunOptions, results: list[SessionResult], entries: list[StoredEntry], plan: Plan
) -> str:
    """The --format document (json when the terminal table is chosen)."""
    if o.fmt == "markdown":
        notes = {job.domain.name: job.domain.description for job in plan.jobs}
        return render.markdown_table(results, notes)
    if o.fmt == "junit":
        from agentic_eval.report import runs_junit, runs_view

        return runs_junit(runs_view(entries))
    return render.runs_json(results, plan.not_recorded, plan.broken)


async def _preflight(job: Job) -> None:
    """Build the job's backend once before anything runs, so a missing key or SDK, or a
    recording folder of another producer, stops the command before the first run starts."""
    if job.plan.backend.kind == "replay" or job.resume is not None:
        return
    from agentic_eval.batch import build_backend
    from agentic_eval.batch.backends import plan_agents

    with _backend_errors(job):
        backend = build_backend(
            job.plan.backend, job.plan.suite, plan_agents(job.plan.kind, job.plan.suite)
        )
    await backend.aclose()


@contextlib.contextmanager
def _backend_errors(job: Job) -> Generator[None]:
    """A backend that cannot be built, as one line: another producer's recording folder is a
    usage error, a missing key or SDK an error."""
    try:
        yield
    except ProducerMismatch as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except AuthenticationFailed as exc:
        provider = job.plan.backend.provider or "provider"
        raise CannotRun(one_line(f"{provider}: {exc}")) from None
    except BackendError as exc:
        raise CannotRun(one_line(str(exc))) from None
    except RecordingError as exc:
        raise CannotRun(one_line(str(exc))) from None


def _open(job: Job, store: Store) -> str:
    """The job's run: the one it resumes (running again), or a new one opened from its plan.

    Raises:
        click.ClickException: When the plan's backend cannot be built (one line).
        click.UsageError: When a recording folder holds another producer's transcripts.
    """
    if job.resume is not None:
        store.reopen_run(job.resume, this_process())
        return job.resume
    with _backend_errors(job):
        run_id = open_run(store, job.plan)
    return run_id


async def _run_job(
    o: RunOptions, job: Job, store: Store, stopper: Stopper, filing: HistorySink
) -> SessionResult:
    run_id = _open(job, store)
    bar = None
    progress = None
    if o.mode == "live" and o.fmt == "table":
        bar = render.progress_bar(job.domain.name, len(job.plan.keys))
        progress = bar.advance
    try:
        return await run_plan(store, run_id, on_case=progress, should_stop=stopper, after=[filing])
    except BatchError as exc:
        raise CannotRun(one_line(str(exc))) from None
    finally:
        if bar is not None:
            bar.close()
            sys.stderr.flush()
