"""run_case and run_tasks: drive the agent loop over task specs and judge the results.

Nothing here needs a :class:`~agentic_eval.domains.Domain`: whatever is run arrives as a
:class:`~agentic_eval.tasks.TaskSpec`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from agentic_eval._version import __version__
from agentic_eval.agent.approval import ApprovalCheckpoint
from agentic_eval.agent.loop import AgentRun, run_agent, submit_spec
from agentic_eval.agent.tools import DomainFault, describe_exception
from agentic_eval.backends.base import (
    AuthenticationFailed,
    BackendInfo,
    CallContext,
    ModelBackend,
    start_sample,
)
from agentic_eval.checks.base import CheckContext, Trace, run_checks
from agentic_eval.core.canonical import canonical_bytes, canonical_json
from agentic_eval.core.messages import trusted
from agentic_eval.core.results import ApprovalMode, CheckResult, Outcome, unapproved_attempts
from agentic_eval.core.scorecard import CaseResult, ProducedBy
from agentic_eval.core.transcript import (
    TRANSCRIPT_SCHEMA_VERSION,
    Provenance,
    Transcript,
    TranscriptParts,
    Verdict,
    encode_transcript_parts,
)
from agentic_eval.evaluation.gate import case_result
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.layout import sample_name
from agentic_eval.tasks.spec import TaskSpec


@dataclass(frozen=True)
class CaseRun:
    """One sample's result and transcript, plus what is not part of the reproducible scorecard."""

    transcript: Transcript | None
    """The full transcript; ``run_tasks`` keeps ``None`` here once callbacks have seen it, so a
    large batch holds results, not conversations."""
    result: CaseResult
    started_at: datetime
    finished_at: datetime
    duration_ms: float
    input_tokens: int
    output_tokens: int
    reproduced: bool | None
    """Replay only: whether the recording was reproduced in every field."""
    problem: str = ""
    """Replay only: the first field not reproduced."""
    attempt: int = 1
    """The sample's attempt (the rejection round of a workflow step, from 1); its epoch is
    ``result.sample``. Kept here rather than in the scorecard's :class:`CaseResult`, whose
    samples each have one attempt (a scenario's rounds are each a run of their own)."""
    detail: str = ""
    """The outcome in full where its reason is one line (every schema error of an output)."""
    encoded: Callable[[], bytes] | None = None
    """``canonical_bytes(transcript)``, made at most once from the parts the loop serialised
    already (None when the transcript is not the one the loop's parts make up)."""
    parts: Callable[[], TranscriptParts | None] | None = None
    """The same bytes in three parts, around the request template (None where ``encoded``
    is; the callable returns None when only ``canonical_bytes`` can write the transcript)."""

    def transcript_text(self) -> str | None:
        """The transcript as canonical JSON text (None when the run holds none)."""
        if self.transcript is None:
            return None
        if self.encoded is not None:
            return self.encoded().decode("utf-8")
        return canonical_json(self.transcript)


@dataclass(frozen=True)
class TasksRun:
    """The sample results of a run, sorted by case id, then epoch, then attempt."""

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
    spec: TaskSpec[Any], run: AgentRun, trace: Trace, env: Any
) -> tuple[Outcome, tuple[CheckResult, ...]]:
    outcome = run.outcome
    transient = outcome is not None and outcome.kind == "transient"
    if outcome is not None and transient and not unapproved_attempts(trace.policy_events):
        return outcome, ()
    ctx = CheckContext(
        case=spec.case,
        output=run.output,
        trace=trace,
        env=env,
        dialogue=tuple(run.dialogue),
        user_tool_calls=tuple(run.user_tool_calls),
    )
    checks, crashes = run_checks(spec.checks, ctx)
    if outcome is not None and transient:
        # The agent had already made a must-approve call without approval: that fails a hard
        # gate whatever the provider did next, so the sample is judged, never excluded.
        names = ", ".join(dict.fromkeys(c.name for c in checks if not c.passed))
        reason = (
            "an unapproved must-approve call was made before the provider failed "
            f"({outcome.reason})" + (f"; failed: {names}" if names else "")
        )
        return Outcome(kind="check_failed", reason=reason, where="approval checkpoint"), tuple(
            checks
        )
    if crashes and (outcome is None or outcome.kind == "check_failed"):
        first = crashes[0]
        outcome = Outcome(kind="error", reason=first.reason, where=first.where)
    if outcome is None:
        failed = [c for c in checks if not c.passed]
        if failed:
            names = ", ".join(dict.fromkeys(c.name for c in failed))
            outcome = Outcome(kind="check_failed", reason=f"failed: {names}", where=failed[0].name)
        else:
            outcome = _PASSED
    return outcome, tuple(checks)


def _prepare(spec: TaskSpec[Any]) -> tuple[Any, Outcome | None]:
    """A fresh environment, or the outcome naming the suite code that broke."""
    try:
        if spec.kind.submit:
            submit_spec(spec.output_model)
    except Exception as exc:
        where = f"output model {spec.output_model.__name__} has no JSON schema"
        return None, Outcome(
            kind="error", reason=f"{where}: {describe_exception(exc)}", where=where
        )
    try:
        return spec.make_env(), None
    except DomainFault as fault:
        return None, Outcome(kind="error", reason=fault.reason, where=fault.where)
    except Exception as exc:
        fault = DomainFault(f"make_env raised {type(exc).__name__}", describe_exception(exc))
        return None, Outcome(kind="error", reason=fault.reason, where=fault.where)


async def run_case(spec: TaskSpec[Any], backend: ModelBackend, settings: RunSettings) -> CaseRun:
    """Run one sample of one task end to end and judge it. Never raises for agent, provider or
    suite-code failures: each is an outcome.

    Raises:
        AuthenticationFailed: The provider refused the credentials (the run cannot go on).
    """
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    await start_sample(backend, spec.suite, spec.case_id, spec.sample, spec.attempt)
    env, broken = _prepare(spec)
    checkpoint = ApprovalCheckpoint(settings.approval_mode, spec.approver)
    if broken is not None:
        run = AgentRun(outcome=broken)
        outcome, checks = broken, ()
        trace = Trace((), ())
    else:
        run = await run_agent(
            backend,
            CallContext(spec.suite, spec.case_id, 0, sample=spec.sample, attempt=spec.attempt),
            model=settings.model,
            system=spec.system_prompt,
            task=spec.task,
            tools=spec.tools,
            env=env,
            output_model=spec.submitted_model,
            checkpoint=checkpoint,
            limits=spec.limits,
            temperature=settings.temperature,
            user=spec.user,
            user_backend=None
            if spec.user is None
            else backend.user_backend(spec.user.make_backend()),
        )
        trace = Trace(tuple(run.tool_calls), tuple(checkpoint.events), tuple(run.unrun_calls))
        outcome, checks = _judge(spec, run, trace, env)
    provenance, provenance_json = _provenance(backend.info(), settings, spec.external_fixtures)
    # Built from values validated where they came from (the loop, the checks): not re-validated.
    transcript = trusted(
        Transcript,
        {
            "schema_version": TRANSCRIPT_SCHEMA_VERSION,
            "domain": spec.suite,
            "case_id": spec.case_id,
            "sample": spec.sample,
            "attempt": spec.attempt,
            "provenance": provenance,
            "request": run.request,
            "turns": tuple(run.turns),
            "tool_calls": trace.tool_calls,
            "policy_events": trace.policy_events,
            "output": _output_json(run.output),
            "verdict": trusted(Verdict, {"outcome": outcome, "checks": checks}),
            "user_turns": tuple(run.user_turns),
            "user_tool_calls": tuple(run.user_tool_calls),
        },
    )

    split: list[TranscriptParts | None] = []
    made: list[bytes] = []

    def parts() -> TranscriptParts | None:
        if not split:
            if len(run.turns_json) != len(run.turns) or (run.request_json is None) != (
                run.request is None
            ):  # pragma: no cover - every run comes from run_agent, which keeps both
                split.append(None)
            else:
                split.append(
                    encode_transcript_parts(
                        transcript,
                        provenance=provenance_json,
                        request=run.request_json,
                        turns=run.turns_json,
                        user_turns=run.user_turns_json,
                    )
                )
        return split[0]

    def encoded() -> bytes:
        if not made:
            found = parts()
            made.append(canonical_bytes(transcript) if found is None else found.whole())
        return made[0]

    review = backend.review_encoded(transcript, encoded)
    await backend.finish_case(review.transcript)
    return CaseRun(
        transcript=review.transcript,
        result=case_result(review.transcript),
        started_at=started_at,
        finished_at=datetime.now(UTC),
        duration_ms=(time.perf_counter() - started) * 1000,
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
        reproduced=review.reproduced,
        problem=review.problem,
        attempt=spec.attempt,
        detail=run.detail,
        encoded=encoded if review.transcript is transcript else None,
        parts=parts if review.transcript is transcript else None,
    )


_PASSED = Outcome(kind="passed")


def _output_json(output: BaseModel | None) -> dict[str, Any] | None:
    """``output.model_dump(mode="json")``, without its per-call argument handling."""
    if output is None:
        return None
    return type(output).__pydantic_serializer__.to_python(output, mode="json")


_provenance_memo: list[tuple[BackendInfo, RunSettings, str | None, Provenance, bytes]] = []


def _provenance(
    info: BackendInfo, settings: RunSettings, external: str | None
) -> tuple[Provenance, bytes]:
    """The provenance of a run's transcripts and its canonical JSON, made once per run (a
    one-entry memo: every sample of a run shares them)."""
    for was_info, was_settings, was_external, provenance, encoded in _provenance_memo:
        if was_settings is settings and was_external == external and was_info == info:
            return provenance, encoded
    provenance = Provenance(
        agent=info.agent,
        agent_kind=info.agent_kind,
        backend=info.backend,
        model=info.model,
        parameters=settings.parameters(),
        package_version=__version__,
        external_fixtures=external,
    )
    encoded = canonical_bytes(provenance)
    _provenance_memo[:] = [(info, settings, external, provenance, encoded)]
    return provenance, encoded


def _refuse_clashes(specs: Sequence[TaskSpec[Any]]) -> None:
    seen: set[tuple[str, str, int, int]] = set()
    for spec in specs:
        key = spec.key()
        if key in seen:
            name = sample_name(spec.case_id, spec.sample, spec.attempt)
            raise ValueError(
                f"sample {name} of {spec.suite} is given twice (epoch {spec.sample}, attempt "
                f"{spec.attempt}): a sample is one (case, epoch, attempt)"
            )
        seen.add(key)


CaseCallback = Callable[[CaseRun], None]
PAUSE_EVERY = 16
"""A sequential run gives the event loop a turn (signal handlers, the heartbeat) before every
this many samples: a turn costs about a tenth of a replayed sample."""


async def run_tasks(
    specs: Sequence[TaskSpec[Any]],
    backend: ModelBackend,
    settings: RunSettings,
    *,
    concurrency: int = 1,
    on_case: CaseCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TasksRun:
    """Run ``specs`` with at most ``concurrency`` at once.

    Args:
        specs: The samples to run.
        backend: Where responses come from.
        settings: Model name, approval mode, temperature, gate thresholds.
        concurrency: Samples in flight at once.
        on_case: Called as each sample is judged (progress, persistence).
        should_stop: Polled before each sample starts; once true, no new sample starts (the
            ones in flight finish and are reported).

    Raises:
        ValueError: When two specs are the same sample (suite, case, epoch, attempt): their
            recordings, replays and rows would clash. Nothing has run.
        AuthenticationFailed: At the first refusal of credentials; other samples are cancelled.
    """
    _refuse_clashes(specs)
    started_at = datetime.now(UTC)
    semaphore = asyncio.Semaphore(max(1, concurrency))
    runs: list[CaseRun] = []

    def keep(result: CaseRun) -> None:
        if on_case is not None:
            on_case(result)
        r = result
        runs.append(  # the same run without its transcript (faster than dataclasses.replace)
            CaseRun(
                None,
                r.result,
                r.started_at,
                r.finished_at,
                r.duration_ms,
                r.input_tokens,
                r.output_tokens,
                r.reproduced,
                r.problem,
                r.attempt,
                r.detail,
            )
        )

    async def one(spec: TaskSpec[Any]) -> None:
        await asyncio.sleep(0)  # let signals in before the semaphore is taken
        async with semaphore:
            # The slot may come from a sample that just failed the group (a refused key): its
            # cancellation is queued behind this wake-up, so let it in before sending anything.
            await asyncio.sleep(0)
            if should_stop is not None and should_stop():
                return
            result = await run_case(spec, backend, settings)
        keep(result)

    if concurrency <= 1:
        for i, spec in enumerate(specs):
            if i % PAUSE_EVERY == 0:  # a scripted or replayed sample never suspends
                await asyncio.sleep(0)  # let signals in
            if should_stop is not None and should_stop():
                break
            keep(await run_case(spec, backend, settings))
    else:
        try:
            async with asyncio.TaskGroup() as group:
                for spec in specs:
                    group.create_task(one(spec))
        except* AuthenticationFailed as group_error:
            raise group_error.exceptions[0] from None
    runs.sort(key=lambda r: (r.result.case_id, r.result.sample, r.attempt))
    return TasksRun(cases=tuple(runs), started_at=started_at, finished_at=datetime.now(UTC))
