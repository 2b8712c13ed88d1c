"""Carry out a ``run``: plan jobs, build backends from specs, run sessions, print, exit code."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from agentic_eval.agent.loop import Limits
from agentic_eval.backends.base import AuthenticationFailed, BackendError, ModelBackend
from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.backends.spec import BackendSpec, live_backend_from_spec
from agentic_eval.cli import render
from agentic_eval.cli.common import load_cases, open_recorder, resolve_domains, select_cases, warn
from agentic_eval.cli.run import RunOptions
from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.core.realdata import inside_git_work_tree
from agentic_eval.core.text import one_line
from agentic_eval.domains.base import Domain
from agentic_eval.evaluation.gate import EXIT_CODES
from agentic_eval.evaluation.reconcile import reconcile_run
from agentic_eval.evaluation.session import SessionResult, run_session
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.history import (
    HistoryError,
    StoredEntry,
    entry_from_session,
    history_dir,
    record_session,
)
from agentic_eval.recordings.files import (
    RecordingError,
    list_agents,
    unnamed_folders,
    write_atomic,
)
from agentic_eval.recordings.layout import LabelError, agent_dir, check_label
from agentic_eval.recordings.record import RecordingBackend
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store, StoreError
from agentic_eval.tasks.spec import TaskSpec


@dataclass(frozen=True)
class Job:
    """One suite with one backend."""

    domain: Domain[Any]
    specs: list[TaskSpec[Any]]
    backend: ModelBackend
    settings: RunSettings
    spec: BackendSpec
    full: bool


@dataclass
class Plan:
    """The jobs, and what could not be run (one line each)."""

    jobs: list[Job]
    not_recorded: list[str]
    broken: list[str]


def _settings(o: RunOptions, model: str) -> RunSettings:
    return RunSettings(
        model=model,
        approval_mode=o.approval or "enforce",
        limits=Limits(max_turns=o.max_turns, max_tokens=o.max_tokens),
        temperature=o.temperature,
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
        return
    for agent in agents:
        directory = agent_dir(o.recordings, domain.name, agent)
        try:
            backend = ReplayBackend(directory)
        except RecordingError as exc:
            plan.broken.append(f"{domain.name} / {agent}: {exc}")
            continue
        settings = RunSettings.from_parameters(backend.info().model, backend.parameters())
        specs: list[TaskSpec[Any]] = []
        for case in cases:
            samples = sorted(s for c, s in backend.paths if c == case.id) or [0]
            specs.extend(domain.task_spec(case, settings.limits, s) for s in samples)
        spec = BackendSpec(kind="replay", agent=agent, recordings=str(o.recordings))
        plan.jobs.append(Job(domain, specs, backend, settings, spec, o.pattern is None))


def _backend(o: RunOptions, domain: Domain[Any]) -> tuple[ModelBackend, BackendSpec, str]:
    if o.mode == "scripted":
        name = o.agent or "reference"
        agents = {**{m.name: m.agent for m in domain.mutants()}, **domain.agents()}
        if name not in agents:
            known = ", ".join(sorted(agents)) or "none"
            raise click.UsageError(f"{domain.name} has no scripted agent {name!r} ({known})")
        backend: ModelBackend = ScriptedBackend(o.label or name, agents[name])
        spec = BackendSpec(kind="scripted", agent=name, label=o.label)
        return backend, spec, backend.info().model
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
    try:
        return live_backend_from_spec(spec), spec, o.model
    except AuthenticationFailed as exc:
        raise click.ClickException(one_line(f"{o.provider}: {exc}")) from None
    except BackendError as exc:
        raise click.ClickException(one_line(str(exc))) from None


def plan_jobs(o: RunOptions) -> Plan:
    """The jobs a ``run`` asks for.

    Raises:
        click.UsageError: For bad combinations, unknown agents, bad labels, no matching case.
    """
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
        backend, spec, model = _backend(o, domain)
        if o.record:
            backend = open_recorder(
                backend,
                o.recordings,
                domain.name,
                what=domain.name,
                real_fixtures=bool(domain.external_fixtures()),
            )
            spec = spec.model_copy(update={"record": True, "recordings": str(o.recordings)})
        settings = _settings(o, model)
        specs = domain.task_specs(cases, settings.limits, o.samples)
        plan.jobs.append(Job(domain, specs, backend, settings, spec, o.pattern is None))
    bare_agent = o.mode == "replay" and o.agent is not None and not o.domains
    if bare_agent and not plan.jobs and not plan.broken:
        raise click.UsageError(f"no domain has recordings of agent {o.agent!r}")
    if not matched:
        if o.pattern is not None:
            raise click.UsageError(f"no case matches --cases {o.pattern!r}")
        raise click.UsageError("no domain has any case to run")
    return plan


class Stopper:
    """SIGINT/SIGTERM: the first stops new samples from starting, the second abandons those in
    flight. Remembers which signal came, for the exit code (130 / 143)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.main: asyncio.Task[Any] | None = None

    def __call__(self) -> bool:
        return self.signal is not None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        self.main = asyncio.current_task()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError):  # not the main thread, or no support
                return

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                return

    def _on_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self.signal is None:
            self.signal = sig
            click.echo(
                f"agentic-eval: {name}: no new samples start; finishing those in flight "
                f"({name} again abandons them)",
                err=True,
            )
        elif self.main is not None:
            click.echo(f"agentic-eval: {name}: abandoning the samples in flight", err=True)
            self.main.cancel()

    def exit_code(self) -> int:
        return 128 + (self.signal or signal.SIGINT)


async def execute(o: RunOptions) -> int:
    """Run every job; print; return the exit code."""
    plan = plan_jobs(o)
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
        for dead in store.abandoned_runs():
            started = dead.started_at.strftime("%Y-%m-%d %H:%M")
            kept = reconcile_run(store, dead)
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
            store.finish_run(dead.id, None, dead.heartbeat_at or dead.started_at, None, "abandoned")
            store.recount(dead.id)
    except StoreError as exc:
        raise click.ClickException(one_line(str(exc))) from None
    stopper = Stopper()
    stopper.install()
    results: list[SessionResult] = []
    entries: list[StoredEntry] = []
    code: int | None = None
    try:
        for job in plan.jobs:
            if stopper():
                break
            result = await _run_job(o, job, store, stopper)
            results.append(result)
            stored = _history(o, job, result)
            entries.append(stored)
            if not any(s.external_fixtures for s in job.specs):
                entry = stored.entry
                text = canonical_file_text(entry)
                filed = history_dir() if stored.sha256 else None  # a file was written
                store.add_history_entry(result.run_id, entry.suite, entry.finished_at, text, filed)
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
        for job in plan.jobs:
            await job.backend.aclose()
        store.close()
    if code is not None:
        return code
    document = _document(o, results, entries, plan)
    if o.output is not None:
        try:
            write_atomic(o.output, document)
        except OSError as exc:
            raise click.ClickException(f"cannot write {o.output}: {exc.strerror or exc}") from None
    notes = {job.domain.name: job.domain.description for job in plan.jobs}
    if o.fmt == "table":
        render.print_results(results, verbose=o.verbose, notes=notes)
    else:
        click.echo(document, nl=not document.endswith("\n"))
    strict = o.mode == "replay" and bool(o.domains)  # each named domain must replay something
    for name in plan.not_recorded:
        hint = f"record it with `agentic-eval run {name} --backend scripted --record`"
        if strict:
            click.echo(
                f"agentic-eval: error: {name}: nothing recorded under {o.recordings} to "
                f"replay; {hint}",
                err=True,
            )
        else:
            warn(f"{name}: skipped: nothing recorded under {o.recordings}; {hint}")
    for job in plan.jobs:
        if isinstance(job.backend, RecordingBackend) and job.backend.skipped:
            cases = ", ".join(c if n == 0 else f"{c}@{n}" for _, c, n in job.backend.skipped[:5])
            warn(
                f"{job.domain.name}: {len(job.backend.skipped)} transient samples not recorded "
                f"(the provider failed; such a file could never replay): {cases}"
            )
    for line in plan.broken:
        click.echo(f"agentic-eval: error: {one_line(line)}", err=True)
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
            return 1
        ok = all(r.reproduced for r in results) and not plan.broken
        return 0 if ok and not (strict and plan.not_recorded) else 1
    return max((EXIT_CODES[r.gate.verdict] for r in results), default=0)


def _history(o: RunOptions, job: Job, result: SessionResult) -> StoredEntry:
    """The run's history entry, written to the history folder unless --no-history (or unless
    the run used real fixtures and the history folder lies inside a git repository)."""
    real = any(s.external_fixtures for s in job.specs)
    if real and o.history and inside_git_work_tree(history_dir()):
        warn(
            f"{job.domain.name} used real fixtures: its history entry is not written into "
            f"{history_dir()} (inside a git repository); set AGENTIC_EVAL_HISTORY_DIR elsewhere"
        )
    if not o.history or (real and inside_git_work_tree(history_dir())):
        entry = entry_from_session(result, job.domain, job.specs, job.settings, job.spec)
        return StoredEntry(Path(f"{result.run_id}.json"), entry)
    try:
        return record_session(result, job.domain, job.specs, job.settings, job.spec)
    except HistoryError as exc:  # a history write never fails the run
        warn(str(exc))
        entry = entry_from_session(result, job.domain, job.specs, job.settings, job.spec)
        return StoredEntry(Path(f"{result.run_id}.json"), entry)


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


async def _run_job(o: RunOptions, job: Job, store: Store, stopper: Stopper) -> SessionResult:
    bar = None
    progress = None
    if o.mode == "live" and o.fmt == "table":
        bar = render.progress_bar(job.domain.name, len(job.specs))
        progress = bar.advance
    try:
        return await run_session(
            job.domain.name,
            job.specs,
            job.backend,
            job.settings,
            o.mode,
            store=store,
            backend_spec=job.spec,
            concurrency=o.concurrency,
            on_case=progress,
            full=job.full,
            should_stop=stopper,
        )
    finally:
        if bar is not None:
            bar.close()
            sys.stderr.flush()
