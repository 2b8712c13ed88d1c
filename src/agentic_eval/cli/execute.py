"""Carry out a ``run``: build backends, run sessions, print scorecards, pick the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click

from agentic_eval.agent.loop import Limits
from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendError,
    ModelBackend,
    RetryPolicy,
)
from agentic_eval.backends.factory import live_backend
from agentic_eval.backends.record import RecordingBackend
from agentic_eval.backends.recordings import RecordingError, agent_dir, list_agents
from agentic_eval.backends.replay import ReplayBackend
from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.cli import render
from agentic_eval.domains.base import CaseSpec, Domain
from agentic_eval.evaluation.gate import EXIT_CODES
from agentic_eval.evaluation.runner import CaseRun, RunSettings
from agentic_eval.evaluation.session import SessionResult, run_session
from agentic_eval.store.db import Store, StoreError


@dataclass(frozen=True)
class Plan:
    """What the user asked ``run`` to do."""

    mode: Literal["replay", "live", "scripted"]
    domains: list[tuple[Domain[Any], list[CaseSpec]]]
    full: bool
    options: dict[str, Any]


@dataclass(frozen=True)
class Job:
    """One domain with one backend."""

    domain: Domain[Any]
    cases: list[CaseSpec]
    backend: ModelBackend
    settings: RunSettings


def _settings(plan: Plan, model: str) -> RunSettings:
    o = plan.options
    return RunSettings(
        model=model,
        approval_mode=o["approval"] or "enforce",
        limits=Limits(max_turns=o["max_turns"], max_tokens=o["max_tokens"]),
        temperature=o["temperature"],
        max_failure_rate=o["max_failure_rate"],
        max_transient=o["max_transient"],
    )


def _jobs(plan: Plan) -> list[Job]:
    o = plan.options
    root: Path = o["recordings"]
    jobs: list[Job] = []
    for domain, cases in plan.domains:
        if plan.mode == "replay":
            agents = [o["agent"]] if o["agent"] else list_agents(root, domain.name)
            if not agents:
                raise click.ClickException(
                    f"no recordings of {domain.name} under {root}; record them with "
                    f"`agentic-eval run {domain.name} --backend scripted --record`"
                )
            for agent in agents:
                try:
                    backend = ReplayBackend(agent_dir(root, domain.name, agent))
                except RecordingError as exc:
                    raise click.ClickException(str(exc)) from None
                info = backend.info()
                settings = RunSettings.from_parameters(info.model, backend.parameters())
                jobs.append(Job(domain, cases, backend, settings))
            continue
        backend: ModelBackend
        if plan.mode == "scripted":
            name = o["agent"] or "reference"
            agents_ = domain.agents()
            if name not in agents_:
                known = ", ".join(agents_) or "none"
                raise click.UsageError(f"{domain.name} has no scripted agent {name!r} ({known})")
            backend = ScriptedBackend(o["label"] or name, agents_[name])
            model = backend.info().model
        else:
            try:
                backend = live_backend(
                    o["provider"],
                    model=o["model"],
                    base_url=o["base_url"],
                    agent_label=o["label"] or o["agent"],
                    retry=RetryPolicy(max_retries=o["retries"]),
                    timeout=o["timeout"],
                )
            except AuthenticationFailed as exc:
                raise click.ClickException(f"{o['provider']}: {exc}") from None
            except BackendError as exc:
                raise click.ClickException(str(exc)) from None
            model = o["model"]
        if o["record"]:
            backend = RecordingBackend(backend, root)
        jobs.append(Job(domain, cases, backend, _settings(plan, model)))
    return jobs


async def execute(plan: Plan) -> int:
    """Run every job; print; return the exit code."""
    o = plan.options
    jobs = _jobs(plan)
    try:
        store = Store()
        store.migrate()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    results: list[SessionResult] = []
    try:
        for job in jobs:
            results.append(await _run_job(plan, job, store))
    except AuthenticationFailed as exc:
        provider = o["provider"] or "provider"
        click.echo(f"agentic-eval: error: {provider}: authentication failed: {exc}", err=True)
        return 2
    finally:
        for job in jobs:
            await job.backend.aclose()
        store.close()
    if o["as_json"]:
        click.echo(render.scorecards_json([r.run.scorecard for r in results]))
    elif o["markdown"]:
        click.echo(render.markdown_table(results))
    else:
        render.print_results(results, verbose=o["verbose"])
    if plan.mode == "replay":
        return 0 if all(r.reproduced for r in results) else 1
    return max(EXIT_CODES[r.run.scorecard.gate.verdict] for r in results)


async def _run_job(plan: Plan, job: Job, store: Store) -> SessionResult:
    progress: Callable[[CaseRun], None] | None = None
    bar = None
    if plan.mode == "live" and not plan.options["as_json"]:
        bar = render.progress_bar(job.domain.name, len(job.cases))
        progress = bar.advance
    try:
        return await run_session(
            job.domain,
            job.cases,
            job.backend,
            job.settings,
            plan.mode,
            store=store,
            concurrency=plan.options["concurrency"],
            on_case=progress,
            full=plan.full,
        )
    finally:
        if bar is not None:
            bar.close()
            sys.stderr.flush()
