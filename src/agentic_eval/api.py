"""The Python API: ``agentic_eval.run(...)`` replays (or records) a domain's cases and
``agentic_eval.batch(...)`` runs N samples of them through the batch gate, both returning typed
results to assert on.

Both build a stored :class:`~agentic_eval.batch.RunPlan` with the planners the CLI uses
(:mod:`agentic_eval.batch.planning`) and run it with the same library calls
(:func:`~agentic_eval.batch.open_run` and :func:`~agentic_eval.batch.finish.run_plan`, or
:func:`~agentic_eval.batch.run_agent_batch`), so a run from Python is the run ``agentic-eval run``
would make. The pytest plugin (:mod:`agentic_eval.pytest_plugin`) calls :func:`run`.

Record modes, after vcrpy's (a test's selected cases play the part of a cassette):

- ``none``: replay only; a case with no recording fails (an ``error`` sample naming it), never a
  live call.
- ``once``: when none of the selected cases is recorded, record them all; otherwise replay (a
  case still missing fails, as in ``none``). One case per test (``per_case``) makes this "record
  the case if it has no recording, else replay".
- ``new_episodes``: replay the recorded cases, record the missing ones.
- ``all``: record every selected case again.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, get_args

import agentic_eval.batch as _batch_package
from agentic_eval.backends.base import AuthenticationFailed, BackendError
from agentic_eval.backends.spec import DEFAULT_RETRIES, DEFAULT_TIMEOUT, BackendSpec
from agentic_eval.batch import BatchError, RunPlan, open_run, run_agent_batch, scripted_agents
from agentic_eval.batch.finish import run_plan
from agentic_eval.batch.planning import replay_plan, suite_plan
from agentic_eval.batch.run import stored_results
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.realdata import inside_git_work_tree
from agentic_eval.core.results import CheckResult, OutcomeKind
from agentic_eval.core.scorecard import CaseResult, GateSummary
from agentic_eval.core.settings import RunParameters
from agentic_eval.core.text import one_line
from agentic_eval.domains.base import CaseFileError, Domain
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.domains.registry import DomainLoadError, UnknownDomainError, get_domain
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.session import SessionResult
from agentic_eval.recordings.files import RecordingError, list_transcript_files
from agentic_eval.recordings.layout import DEFAULT_RECORDINGS, LabelError, agent_dir, check_label
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store, StoreError

RecordMode = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[RecordMode, ...] = get_args(RecordMode)


class AgenticEvalError(Exception):
    """A request that cannot run: an unknown domain, case or agent, an unreadable recording
    folder, a backend that cannot be built. The message is one line."""


@dataclass(frozen=True)
class SampleResult:
    """One sample: its case, epoch, outcome and checks, and for a replay whether the recording
    was reproduced."""

    case_id: str
    epoch: int
    outcome: OutcomeKind
    """passed, check_failed, error or transient."""
    reason: str
    """Why it did not pass, in one line (empty when it passed)."""
    checks: tuple[CheckResult, ...]
    """Every check, each with ``passed``, ``expected`` and ``actual``."""
    hard_gate_failed: bool
    replayed: bool
    """Replayed from a recording (False: run on the agent, and recorded if asked)."""
    reproduced: bool | None
    """Replay: the recording was reproduced in every field (None when not replayed)."""
    problem: str = ""
    """Replay: the first field not reproduced."""

    @property
    def passed(self) -> bool:
        """It passed, and a replay reproduced its recording."""
        return self.outcome == "passed" and self.reproduced is not False

    @property
    def failed_checks(self) -> tuple[CheckResult, ...]:
        """The checks that did not hold."""
        return tuple(c for c in self.checks if not c.passed)

    def describe(self) -> str:
        """One line: the sample, its outcome, and what failed."""
        name = self.case_id if self.epoch == 0 else f"{self.case_id}@{self.epoch}"
        parts = [f"{name}: {self.outcome}"]
        if self.reason:
            parts.append(self.reason)
        for c in self.failed_checks:
            parts.append(f"check {c.name} failed: expected {c.expected!r}, got {c.actual!r}")
        if self.reproduced is False and not (self.problem and self.problem in self.reason):
            parts.append(f"replay not reproduced: {self.problem or 'differs from the recording'}")
        return one_line("; ".join(parts))


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` returns: every sample, in case then epoch order."""

    domain: str
    agent: str
    record_mode: RecordMode
    samples: tuple[SampleResult, ...]
    run_ids: tuple[str, ...]
    """The store's runs (one for a replay or a recording, two when both happened)."""
    problems: tuple[str, ...] = ()
    """Replay: what was not reproduced, a committed scorecard included."""

    @property
    def passed(self) -> bool:
        """Every sample passed (and reproduced its recording), and nothing else differed."""
        return bool(self.samples) and all(s.passed for s in self.samples) and not self.problems

    @property
    def failures(self) -> tuple[SampleResult, ...]:
        """The samples that did not pass."""
        return tuple(s for s in self.samples if not s.passed)

    @property
    def recorded(self) -> tuple[str, ...]:
        """The cases run on the agent and recorded."""
        return tuple(dict.fromkeys(s.case_id for s in self.samples if not s.replayed))

    def sample(self, case_id: str, epoch: int = 0) -> SampleResult:
        """The sample of ``case_id`` (epoch ``epoch``).

        Raises:
            KeyError: No such sample in this run.
        """
        for s in self.samples:
            if s.case_id == case_id and s.epoch == epoch:
                return s
        raise KeyError(f"no sample {case_id!r} (epoch {epoch}) in this run")

    def report(self) -> str:
        """Every failing sample and problem, one per line (for an assertion message)."""
        lines = [s.describe() for s in self.failures] + list(self.problems)
        if not self.samples:
            lines.append("no sample ran")
        return "\n".join(lines) or f"{len(self.samples)} samples passed"


@dataclass(frozen=True)
class BatchResult:
    """What :func:`batch` returns: the gate read from the store, and every sample."""

    run_id: str
    gate: GateSummary
    """Verdict (PASS, FAIL, INCONCLUSIVE), counts, rates and the reason in one line."""
    samples: tuple[SampleResult, ...]

    @property
    def passed(self) -> bool:
        """The gate's verdict is PASS."""
        return self.gate.verdict == "PASS"


def _domain(name: str) -> Domain[Any]:
    try:
        return get_domain(name)
    except UnknownDomainError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    except DomainLoadError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None


def select(domain: str, cases: str | Sequence[str] | None = None) -> list[CaseSpec]:
    """The cases of ``domain`` that ``cases`` names: globs (a comma-separated string or a
    list); every case when None.

    Raises:
        AgenticEvalError: An unknown domain, an unreadable case file, or a glob matching no case.
    """
    found = _domain(domain)
    try:
        every = found.load_cases()
    except (CaseFileError, FixtureError) as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    if cases is None:
        return every
    globs = cases.split(",") if isinstance(cases, str) else list(cases)
    globs = [g.strip() for g in globs if g.strip()]
    if not globs:
        raise AgenticEvalError("cases: name at least one case id or glob")
    chosen: list[CaseSpec] = []
    for glob in globs:
        matched = [c for c in every if fnmatch.fnmatchcase(c.id, glob)]
        if not matched:
            raise AgenticEvalError(f"{domain} has no case matching {glob!r}")
        chosen.extend(c for c in matched if c not in chosen)
    return sorted(chosen, key=lambda c: c.id)


def _live_or_scripted(
    domain: Domain[Any], agent: str, provider: str | None, model: str | None,
    base_url: str | None, retries: int, timeout: float,
) -> BackendSpec:  # fmt: skip
    """The backend that answers: a live provider when one is named, else the domain's scripted
    agent ``agent``."""
    if provider is not None:
        if not model:
            raise AgenticEvalError(f"provider {provider!r} needs a model")
        return BackendSpec(kind="live", provider=provider, model=model, base_url=base_url,
                           label=agent, retries=retries, timeout=timeout)  # fmt: skip
    if model is not None or base_url is not None:
        raise AgenticEvalError("model and base_url need a provider")
    agents = scripted_agents(domain)
    if agent not in agents:
        known = ", ".join(sorted(agents)) or "none"
        raise AgenticEvalError(
            f"{domain.name} has no scripted agent {agent!r} ({known}); name a provider and "
            "model to record a model under that label"
        )
    return BackendSpec(kind="scripted", agent=agent)


def _recorded_parameters(folder: Path, recorded: set[str], domain: Domain[Any]) -> RunParameters:
    """The parameters the folder's transcripts were recorded with (a case recorded beside them
    must share them, or the folder would no longer replay); the defaults for a new folder (the
    domain's turn budget)."""
    if not recorded:
        return RunParameters(max_turns=domain.turn_budget())
    try:
        return ReplayBackend(folder).parameters()
    except RecordingError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None


def _split(
    mode: RecordMode, cases: list[CaseSpec], recorded: set[str]
) -> tuple[list[CaseSpec], list[CaseSpec]]:
    """(cases to replay, cases to record) in ``mode``."""
    if mode == "all":
        return [], cases
    if mode == "new_episodes":
        return [c for c in cases if c.id in recorded], [c for c in cases if c.id not in recorded]
    if mode == "once" and not any(c.id in recorded for c in cases):
        return [], cases
    return cases, []


async def run_async(
    domain: str,
    cases: str | Sequence[str] | None = None,
    agent: str = "reference",
    *,
    record_mode: RecordMode = "none",
    recordings: Path | str = DEFAULT_RECORDINGS,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    parameters: RunParameters | None = None,
    concurrency: int = 1,
    retries: int = DEFAULT_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    store: Store | None = None,
) -> RunResult:
    """:func:`run`, awaitable (for callers already inside an event loop)."""
    if record_mode not in RECORD_MODES:
        raise AgenticEvalError(
            f"record_mode {record_mode!r} is not one of {', '.join(RECORD_MODES)}"
        )
    try:
        check_label(agent)
    except LabelError as exc:
        raise AgenticEvalError(f"agent: {exc}") from None
    found = _domain(domain)
    chosen = select(domain, cases)
    root = Path(recordings)
    folder = agent_dir(root, found.name, agent)
    try:
        recorded = {k.case_id for k in list_transcript_files(folder) if k.attempt == 1}
    except RecordingError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    to_replay, to_record = _split(record_mode, chosen, recorded)
    if to_replay and not recorded:
        raise AgenticEvalError(
            f"no recordings of agent {agent!r} for {found.name} under {root} (record mode "
            f"{record_mode}: nothing is run live; record with mode once)"
        )
    plans: list[RunPlan] = []
    full = cases is None
    if to_record:
        spec = _live_or_scripted(found, agent, provider, model, base_url, retries, timeout)
        if found.external_fixtures() and inside_git_work_tree(root):
            raise AgenticEvalError(
                f"{found.name} is using real fixtures from EVAL_FIXTURE_DIR: refusing to record "
                f"into {root}, inside a git repository"
            )
        spec = spec.model_copy(update={"record": True, "recordings": str(root)})
        params = parameters or _recorded_parameters(folder, recorded, found)
        plans.append(suite_plan(found, to_record, spec, params, concurrency=concurrency,
                                full=full and not to_replay))  # fmt: skip
    if to_replay:
        try:
            plans.insert(0, replay_plan(found, to_replay, root, agent, concurrency=concurrency,
                                        full=full and not to_record))  # fmt: skip
        except RecordingError as exc:
            raise AgenticEvalError(one_line(str(exc))) from None
    own = store is None
    try:
        db = Store() if store is None else store
        db.migrate()
    except StoreError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    samples: list[SampleResult] = []
    problems: list[str] = []
    run_ids: list[str] = []
    try:
        for plan in plans:
            seen: dict[tuple[str, int], CaseRun] = {}

            def keep(case_run: CaseRun, seen: dict[tuple[str, int], CaseRun] = seen) -> None:
                seen[(case_run.result.case_id, case_run.result.sample)] = case_run

            try:
                run_id = open_run(db, plan)
                run_ids.append(run_id)
                session = await run_plan(db, run_id, on_case=keep)
            except (AuthenticationFailed, BackendError, RecordingError, BatchError) as exc:
                raise AgenticEvalError(one_line(str(exc))) from None
            samples.extend(_samples(session, seen))
            # The replay's problems list each sample not reproduced first (on its result
            # here), then the run's own: a committed scorecard that differs.
            unreproduced = sum(1 for c in seen.values() if c.reproduced is False)
            problems.extend(session.problems[unreproduced:])
    except StoreError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    finally:
        if own:
            db.close()
    samples.sort(key=lambda s: (s.case_id, s.epoch))
    return RunResult(found.name, agent, record_mode, tuple(samples), tuple(run_ids),
                     tuple(problems))  # fmt: skip


def _samples(session: SessionResult, seen: dict[tuple[str, int], CaseRun]) -> list[SampleResult]:
    replayed = session.mode == "replay"
    out: list[SampleResult] = []
    for stored in session.run.cases:
        r = stored.result
        live = seen.get((r.case_id, r.sample))
        out.append(_sample(r, replayed, stored.reproduced, live.problem if live else ""))
    return out


def _sample(r: CaseResult, replayed: bool, reproduced: bool | None, problem: str) -> SampleResult:
    return SampleResult(
        case_id=r.case_id, epoch=r.sample, outcome=r.outcome.kind, reason=r.outcome.reason,
        checks=r.checks, hard_gate_failed=r.hard_gate_failed, replayed=replayed,
        reproduced=reproduced if replayed else None, problem=problem,
    )  # fmt: skip


def run(
    domain: str,
    cases: str | Sequence[str] | None = None,
    agent: str = "reference",
    *,
    record_mode: RecordMode = "none",
    recordings: Path | str = DEFAULT_RECORDINGS,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    parameters: RunParameters | None = None,
    concurrency: int = 1,
    retries: int = DEFAULT_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    store: Store | None = None,
) -> RunResult:
    """Replay, or record, ``cases`` of ``domain`` by ``agent``, as ``agentic-eval run`` does.

    Args:
        domain: The domain (``retail_ops``...).
        cases: Case ids or globs (a list, or one comma-separated string); every case when None.
        agent: The recording label to replay, and to record under; when recording without a
            provider, the domain's scripted agent of that name answers.
        record_mode: none (replay only, the default), once, new_episodes or all (module doc).
        recordings: The recordings root (default ``evals/recordings``).
        provider: Record a live model of this provider (``openai``, ``anthropic``...).
        model: The live model.
        base_url: The provider's base URL (e.g. ``agentic-eval fake-provider``'s).
        parameters: Limits and approval mode of recorded runs (default: those of the folder's
            recordings, else the defaults; a replay uses the recorded ones).
        concurrency: Samples in flight.
        retries: Transient retries of a live provider.
        timeout: Seconds per live request.
        store: Where runs and samples are stored (default: the configured store, as the CLI's).

    Returns:
        Every sample's result; ``result.passed`` is True when every one passed and reproduced.

    Raises:
        AgenticEvalError: A request that cannot run (one line): unknown domain, case or agent,
            no recordings to replay, a backend that cannot be built.
    """
    return run_sync(
        run_async(
            domain, cases, agent, record_mode=record_mode, recordings=recordings,
            provider=provider, model=model, base_url=base_url, parameters=parameters,
            concurrency=concurrency, retries=retries, timeout=timeout, store=store,
        )
    )  # fmt: skip


def batch(
    domain: str,
    cases: str | Sequence[str] | None = None,
    agent: str = "reference",
    *,
    samples: int = 1,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    parameters: RunParameters | None = None,
    concurrency: int = 1,
    processes: int = 1,
    retries: int = DEFAULT_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    store: Store | None = None,
) -> BatchResult:
    """``samples`` epochs of each of ``cases`` on a scripted agent or a live model, gated as
    ``agentic-eval batch DOMAIN`` gates (:func:`~agentic_eval.batch.run_agent_batch`).

    Args:
        domain: The domain.
        cases: Case ids or globs; every case when None.
        agent: The scripted agent (no provider), or the label of a live model's run.
        samples: Epochs per case.
        provider: A live provider; ``model`` and ``base_url`` as for :func:`run`.
        model: The live model.
        base_url: The provider's base URL.
        parameters: Limits, approval mode and the gate's thresholds.
        concurrency: Samples in flight.
        processes: Child processes running the samples.
        retries: Transient retries of a live provider.
        timeout: Seconds per live request.
        store: Where the run goes (default: the configured store).

    Raises:
        AgenticEvalError: A request that cannot run (one line).
    """
    if samples < 1 or processes < 1 or concurrency < 1:
        raise AgenticEvalError("samples, processes and concurrency must be at least 1")
    found = _domain(domain)
    chosen = select(domain, cases)
    spec = _live_or_scripted(found, agent, provider, model, base_url, retries, timeout)
    params = parameters or RunParameters(max_turns=found.turn_budget())
    plan = suite_plan(found, chosen, spec, params, samples=samples,
                      concurrency=concurrency, full=cases is None)  # fmt: skip
    own = store is None
    try:
        db = Store() if store is None else store
        db.migrate()
        try:
            summary = run_sync(run_agent_batch(db, plan, processes=processes))
            rows = list(stored_results(db, summary.run_id))
        finally:
            if own:
                db.close()
    except StoreError as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    except (AuthenticationFailed, BackendError, RecordingError, BatchError) as exc:
        raise AgenticEvalError(one_line(str(exc))) from None
    return BatchResult(summary.run_id, summary.gate,
                       tuple(_sample(r, False, None, "") for r in rows))  # fmt: skip


class _CallableBatchPackage(ModuleType):
    """``agentic_eval.batch`` is both the library's batch package and the API's :func:`batch`:
    importing the package binds ``agentic_eval.batch`` to it, so the package, called, runs
    :func:`batch` (its attributes stay those of the package)."""

    def __call__(self, *args: Any, **kwargs: Any) -> BatchResult:
        return batch(*args, **kwargs)


setattr(_batch_package, "__class__", _CallableBatchPackage)  # noqa: B010 (pyright: a module's class)
