"""run_case and run_domain: drive the agent loop over a domain's cases and judge the results."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from agentic_eval._version import __version__
from agentic_eval.agent.approval import ApprovalCheckpoint
from agentic_eval.agent.loop import AgentRun, Limits, run_agent
from agentic_eval.backends.base import AuthenticationFailed, CallContext, ModelBackend
from agentic_eval.core.results import ApprovalMode, CheckResult, Outcome
from agentic_eval.core.scorecard import CaseResult, ProducedBy, Scorecard
from agentic_eval.core.transcript import Provenance, Transcript, Verdict
from agentic_eval.domains.base import CaseSpec, Domain, Trace
from agentic_eval.evaluation.gate import build_scorecard, case_result


@dataclass(frozen=True)
class RunSettings:
    """Everything besides the backend that a run's requests and verdicts depend on."""

    model: str
    approval_mode: ApprovalMode = "enforce"
    limits: Limits = field(default_factory=Limits)
    temperature: float = 0.0
    max_failure_rate: float = 0.01
    max_transient: float = 0.2

    def parameters(self) -> dict[str, Any]:
        """For provenance; replay reads them back with :meth:`from_parameters`."""
        return {
            "approval_mode": self.approval_mode,
            "temperature": self.temperature,
            "max_failure_rate": self.max_failure_rate,
            "max_transient": self.max_transient,
            **self.limits.as_dict(),
        }

    @classmethod
    def from_parameters(cls, model: str, params: dict[str, Any]) -> RunSettings:
        """Settings as recorded in a transcript's provenance."""
        mode = params.get("approval_mode", "enforce")
        return cls(
            model=model,
            approval_mode="observe" if mode == "observe" else "enforce",
            limits=Limits(
                max_turns=int(params.get("max_turns", 12)),
                max_tokens=int(params.get("max_tokens", 1024)),
                max_total_tokens=params.get("max_total_tokens"),
            ),
            temperature=float(params.get("temperature", 0.0)),
            max_failure_rate=float(params.get("max_failure_rate", 0.01)),
            max_transient=float(params.get("max_transient", 0.2)),
        )


@dataclass(frozen=True)
class CaseRun:
    """One case's result and transcript, plus what is not part of the reproducible scorecard."""

    transcript: Transcript | None
    """The full transcript; ``run_domain`` keeps ``None`` here once callbacks have seen it, so a
    large batch holds results, not conversations."""
    result: CaseResult
    duration_ms: float
    input_tokens: int
    output_tokens: int
    reproduced: bool | None
    """Replay only: whether the recorded verdict was reproduced exactly."""


@dataclass(frozen=True)
class DomainRun:
    """A domain run: scorecard plus per-case runs."""

    scorecard: Scorecard
    cases: tuple[CaseRun, ...]
    started_at: datetime
    finished_at: datetime


def produced_by(backend: ModelBackend, mode: ApprovalMode) -> ProducedBy:
    """The scorecard label for what produced the samples."""
    info = backend.info()
    return ProducedBy(
        agent=info.agent,
        agent_kind=info.agent_kind,
        backend=info.backend,
        model=info.model,
        approval_mode=mode,
    )


def _judge(
    domain: Domain[Any], case: CaseSpec, run: AgentRun, trace: Trace, env: Any
) -> tuple[Outcome, tuple[CheckResult, ...]]:
    outcome = run.outcome
    if outcome is not None and outcome.kind == "transient":
        return outcome, ()
    checks: list[CheckResult] = []
    try:
        if run.output is not None:
            checks.extend(domain.check_output(case, run.output, env))
        checks.extend(domain.check_trace(case, trace, env))
    except Exception as exc:  # a crashing check is a harness error, reported as data
        return Outcome(
            kind="error", reason=f"check crashed: {type(exc).__name__}: {exc}", where="checks"
        ), tuple(checks)
    if outcome is None:
        failed = [c for c in checks if not c.passed]
        if failed:
            names = ", ".join(c.name for c in failed)
            outcome = Outcome(kind="check_failed", reason=f"failed: {names}", where=failed[0].name)
        else:
            outcome = Outcome(kind="passed")
    return outcome, tuple(checks)


async def run_case(
    domain: Domain[Any], case: CaseSpec, backend: ModelBackend, settings: RunSettings
) -> CaseRun:
    """Run one case end to end and judge it. Never raises for agent or provider failures.

    Raises:
        AuthenticationFailed: The provider refused the credentials (the run cannot go on).
    """
    started = time.perf_counter()
    await backend.start_case(domain.name, case.id)
    env = domain.make_env(case)
    checkpoint = ApprovalCheckpoint(
        settings.approval_mode, lambda action, target: domain.decide_approval(case, action, target)
    )
    run = await run_agent(
        backend,
        CallContext(domain=domain.name, case_id=case.id, turn=0),
        model=settings.model,
        system=domain.system_prompt,
        task=case.task(),
        tools=domain.tools(),
        env=env,
        output_model=domain.output_model(case),
        checkpoint=checkpoint,
        limits=settings.limits,
        temperature=settings.temperature,
    )
    trace = Trace(tuple(run.tool_calls), tuple(checkpoint.events))
    outcome, checks = _judge(domain, case, run, trace, env)
    info = backend.info()
    transcript = Transcript(
        domain=domain.name,
        case_id=case.id,
        provenance=Provenance(
            agent=info.agent,
            agent_kind=info.agent_kind,
            backend=info.backend,
            model=info.model,
            parameters=settings.parameters(),
            recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            package_version=__version__,
        ),
        request=run.request,
        turns=tuple(run.turns),
        tool_calls=trace.tool_calls,
        policy_events=trace.policy_events,
        output=run.output.model_dump(mode="json") if run.output is not None else None,
        verdict=Verdict(outcome=outcome, checks=checks),
    )
    transcript, reproduced = backend.review(transcript)
    await backend.finish_case(transcript)
    return CaseRun(
        transcript=transcript,
        result=case_result(transcript),
        duration_ms=(time.perf_counter() - started) * 1000,
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
        reproduced=reproduced,
    )


CaseCallback = Callable[[CaseRun], None]


async def run_domain(
    domain: Domain[Any],
    cases: Sequence[CaseSpec],
    backend: ModelBackend,
    settings: RunSettings,
    *,
    concurrency: int = 1,
    on_case: CaseCallback | None = None,
) -> DomainRun:
    """Run ``cases`` with at most ``concurrency`` at once; build the scorecard.

    Args:
        domain: The domain.
        cases: Which cases (usually all of the committed case file).
        backend: Where responses come from.
        settings: Model name, limits, approval mode, gate thresholds.
        concurrency: Cases in flight at once.
        on_case: Called as each case finishes (progress, persistence).

    Raises:
        AuthenticationFailed: At the first refusal of credentials; other cases are cancelled.
    """
    started_at = datetime.now(UTC)
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(case: CaseSpec) -> CaseRun:
        async with semaphore:
            result = await run_case(domain, case, backend, settings)
        if on_case is not None:
            on_case(result)
        return replace(result, transcript=None)

    if concurrency <= 1:
        runs = [await one(c) for c in cases]
    else:
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(c)) for c in cases]
        except* AuthenticationFailed as group_error:
            raise group_error.exceptions[0] from None
        runs = [t.result() for t in tasks]
    scorecard = build_scorecard(
        domain.name,
        produced_by(backend, settings.approval_mode),
        (r.result for r in runs),
        max_failure_rate=settings.max_failure_rate,
        max_transient=settings.max_transient,
    )
    return DomainRun(
        scorecard=scorecard,
        cases=tuple(sorted(runs, key=lambda r: r.result.case_id)),
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )


BackendMode = Literal["replay", "scripted", "live"]
