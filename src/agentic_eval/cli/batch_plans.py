"""``agentic-eval batch``'s flags as a run plan: a domain's cases, a workflow scenario, or the
corpus of human-decided jobs, on a scripted, replayed or live backend."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from agentic_eval.cli.common import load_cases, resolve_one_domain, select_cases
from agentic_eval.core.text import one_line


def backend_spec(
    mode: str, agent: str | None, agents: Any, suite: str, provider: str | None,
    model: str | None, base_url: str | None, recordings: Any, retries: int, timeout: float,
) -> Any:  # fmt: skip
    """The backend the flags name, as a spec (a usage error for an unknown scripted agent)."""
    from agentic_eval.backends.spec import BackendSpec

    if mode == "scripted":
        label = agent or "reference"
        if label not in agents:
            known = ", ".join(sorted(agents)) or "none"
            raise click.UsageError(f"{suite} has no scripted agent {label!r} ({known})")
        return BackendSpec(kind="scripted", agent=label)
    if mode == "replay":
        return BackendSpec(kind="replay", agent=agent or "reference", recordings=str(recordings))
    assert provider is not None and model is not None
    return BackendSpec(kind="live", provider=provider, model=model, base_url=base_url,
                       label=agent, retries=retries, timeout=timeout)  # fmt: skip


def parameters(
    approval: Any, temperature: float, max_turns: int | None, max_tokens: int,
    max_failure_rate: float, max_transient: float,
) -> Any:  # fmt: skip
    """The run parameters the flags give (``max_turns`` None: the default budget)."""
    from agentic_eval.core.settings import DEFAULT_MAX_TURNS, RunParameters

    return RunParameters(
        approval_mode=approval, temperature=temperature,
        max_turns=DEFAULT_MAX_TURNS if max_turns is None else max_turns,
        max_tokens=max_tokens, max_failure_rate=max_failure_rate, max_transient=max_transient,
    )  # fmt: skip


def scenario_flags_plan(
    name: str, samples: int, mode: str, agent: str | None, provider: str | None,
    model: str | None, base_url: str | None, concurrency: int, approval: Any, gate_mode: Any,
    max_failure_rate: float | None, max_transient: float, max_turns: int | None, max_tokens: int,
    temperature: float, recordings: Any, retries: int, timeout: float,
) -> Any:  # fmt: skip
    from agentic_eval.batch.planning import scenario_plan
    from agentic_eval.workflow.errors import WorkflowError
    from agentic_eval.workflow.scenarios import get_scenario, scripted_agents

    try:
        s = get_scenario(name)
    except (WorkflowError, ValueError, LookupError) as exc:
        raise click.UsageError(one_line(str(exc))) from None
    suite = s.workflow.key
    spec = backend_spec(mode, agent or (s.agent if mode != "live" else None),
                         scripted_agents(suite), suite, provider, model, base_url, recordings,
                         retries, timeout)  # fmt: skip
    rate = s.max_failure_rate if max_failure_rate is None else max_failure_rate
    params = parameters(approval, temperature, max_turns, max_tokens, rate, max_transient)
    return scenario_plan(s.name, spec, params, samples=samples, concurrency=concurrency,
                         gate=gate_mode)  # fmt: skip


def domain_flags_plan(
    name: str, pattern: str | None, samples: int, mode: str, agent: str | None,
    provider: str | None, model: str | None, base_url: str | None, concurrency: int,
    approval: Any, gate_mode: Any, max_failure_rate: float, max_transient: float,
    max_turns: int | None,
    max_tokens: int, temperature: float, recordings: Any, retries: int, timeout: float,
) -> Any:  # fmt: skip
    from agentic_eval.batch import scripted_agents
    from agentic_eval.batch.planning import replay_plan, suite_plan
    from agentic_eval.recordings.files import RecordingError

    domain = resolve_one_domain(name, "batch")
    cases = select_cases(load_cases(domain), pattern)
    if not cases:
        raise click.UsageError(f"no case of {name} matches --cases {pattern!r}")
    if mode == "replay":  # every recorded sample, with the parameters it was recorded with
        if samples != 1:
            raise click.UsageError("a replay batch runs the recorded samples; drop --samples")
        try:
            return replay_plan(domain, cases, recordings, agent or "reference",
                               concurrency=concurrency, full=pattern is None)  # fmt: skip
        except RecordingError as exc:
            raise click.UsageError(one_line(str(exc))) from None
    spec = backend_spec(mode, agent, scripted_agents(domain), name, provider, model, base_url,
                         recordings, retries, timeout)  # fmt: skip
    params = parameters(approval, temperature, domain.turn_budget(max_turns), max_tokens,
                         max_failure_rate, max_transient)  # fmt: skip
    return suite_plan(domain, cases, spec, params, samples=samples, concurrency=concurrency,
                      full=pattern is None, gate=gate_mode)  # fmt: skip


def corpus_flags_plan(
    store: Any, mode: str, agent: str | None, provider: str | None, model: str | None,
    base_url: str | None, samples: int, concurrency: int, params: Any, gate_mode: Any,
    template: str | None, since: datetime | None, until: datetime | None, limit: int | None,
    origins: tuple[str, ...], retries: int, timeout: float,
) -> Any:  # fmt: skip
    """The corpus the filters select, as a plan (a usage error for an empty or unusable one).

    Raises:
        BatchError: As :func:`agentic_eval.batch.planning.corpus_plan`.
    """
    from agentic_eval.backends.spec import BackendSpec
    from agentic_eval.batch.planning import corpus_plan

    if mode == "replay":
        raise click.UsageError("a corpus batch runs a scripted or live agent, not a replay")
    if mode == "scripted":  # which workflow's agents follows from the jobs the corpus selects
        spec = BackendSpec(kind="scripted", agent=agent or "reference")
    else:
        spec = backend_spec(mode, agent, {}, "", provider, model, base_url, None, retries,
                            timeout)  # fmt: skip
    return corpus_plan(
        store, spec, params, template=template, since=_utc(since), until=_utc(until),
        limit=limit, origins=origins or None, samples=samples, concurrency=concurrency,
        gate=gate_mode,
    )  # fmt: skip


def _utc(moment: datetime | None) -> datetime | None:
    """A moment given on the command line, read as UTC."""
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
