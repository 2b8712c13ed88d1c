"""Where a run's samples go: a lifecycle of sinks, not branches on the backend in the runner.

A :class:`RunSink` takes each finished sample as it finishes (:meth:`RunSink.sample`), persists
what it buffers when asked (:meth:`RunSink.flush`: on a stop, an error and at the end) and, once
the run's scorecard has been rebuilt from the store, closes (:meth:`RunSink.close`) with what it
has to say about the run: the replay sink compares the scorecard with the committed one, the
recording sink rewrites the recording's scorecard. In the style of inspect_ai's log recorders
(``log_init`` / ``log_sample`` / ``log_finish``). Which sinks a run has follows from its stored
backend spec (:func:`agentic_eval.batch.session.plan_sinks`), so a resumed run or a worker gets
the same ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentic_eval.backends.base import ModelBackend, sample_transcript_ref
from agentic_eval.core.scorecard import CaseResult, Scorecard
from agentic_eval.evaluation.gate import case_result
from agentic_eval.evaluation.persist import CorpusStamp, SampleBuffer, sample_row
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.recordings.compare import compare_scorecard_hashed, rewrite_scorecard
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.store.db import Store


@dataclass(frozen=True)
class RunEnd:
    """What a sink is told when the run ends: the scorecard rebuilt from the store's rows."""

    suite: str
    agent: str
    scorecard: Scorecard
    runs: Sequence[CaseRun]
    """Every stored sample of the run (from its rows: no transcripts)."""
    complete: bool
    """The plan covers every case of the suite and every planned sample is stored."""
    stopped: bool
    """Planned samples are missing (a stop, or a resume still to come)."""
    keys: frozenset[tuple[str, int]]
    """The (case, sample) keys the run planned."""
    build: Callable[[Iterable[CaseResult]], Scorecard]
    """Builds a scorecard of the run's suite and producer from case results."""


@dataclass(frozen=True)
class SinkReport:
    """What a sink found when the run ended (every field optional)."""

    reproduced: bool | None = None
    fidelity: tuple[int, int] | None = None
    problems: tuple[str, ...] = ()
    recorded_to: Path | None = None
    left_alone: tuple[Path, ...] = field(default=())
    digest: str | None = None
    """sha256 of the scorecard's canonical text, when the sink hashed it anyway."""


class RunSink(Protocol):
    """Where finished samples go, as they finish."""

    def sample(self, run: CaseRun) -> None:
        """Take one finished sample."""
        ...

    def flush(self) -> None:
        """Persist whatever is buffered (called on stop, on error and at the end)."""
        ...

    def close(self, end: RunEnd) -> SinkReport:
        """The run ended: say what this sink found (its scorecard compared, written...)."""
        ...


class StoreSink:
    """Sample rows in the store, in small batches (:class:`SampleBuffer`); a corpus run's rows
    stamped with their source job and its human verdict (``stamps``, by case id)."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        backend: ModelBackend,
        suite: str,
        worker: str | None,
        stamps: Mapping[str, CorpusStamp] | None = None,
    ) -> None:
        self.buffer = SampleBuffer(store, run_id)
        self.backend, self.suite, self.worker = backend, suite, worker
        self.stamps: Mapping[str, CorpusStamp] = stamps or {}

    def sample(self, run: CaseRun) -> None:
        r = run.result
        ref = sample_transcript_ref(self.backend, self.suite, r.case_id, r.sample, run.attempt)
        stamp = self.stamps.get(r.case_id)
        self.buffer.add(sample_row(run, ref, self.worker, stamp, self.buffer.templates))

    def flush(self) -> None:
        self.buffer.flush()

    def take(self) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """The rows taken so far and their templates, handed out unwritten (see
        :meth:`SampleBuffer.take`)."""
        return self.buffer.take()

    def close(self, end: RunEnd) -> SinkReport:
        del end
        return SinkReport()


class ReplaySink:
    """A replay: each sample reproduced in every field, and the scorecard byte for byte."""

    def __init__(self, directory: Path, *, scorecard: bool = True) -> None:
        self.directory, self.scorecard = directory, scorecard
        self.problems: list[str] = []

    def sample(self, run: CaseRun) -> None:
        if not run.reproduced:
            r = run.result
            self.problems.append(
                run.problem or f"{r.case_id}: {r.outcome.kind}: {r.outcome.reason}"
            )

    def flush(self) -> None:
        return None

    def close(self, end: RunEnd) -> SinkReport:
        reproduced = sum(1 for c in end.runs if c.reproduced)
        problems = list(self.problems)
        earlier = len(end.runs) - reproduced - len(problems)
        if earlier > 0:  # judged by an earlier process of a resumed run, or by a worker
            problems.append(f"{earlier} sample(s) judged in another process were not reproduced")
        same, problem, digest = True, "", None
        if self.scorecard:  # a workflow scenario's recording has no scorecard of its own
            same, problem, digest = compare_scorecard_hashed(
                self.directory, end.scorecard, end.complete
            )
        if not same:
            problems.append(problem)
        fidelity = (reproduced, len(end.runs))
        ok = same and reproduced == len(end.runs) and not end.stopped
        return SinkReport(reproduced=ok, fidelity=fidelity, problems=tuple(problems), digest=digest)


class RecordingSink:
    """A recording: once every planned sample is in, the agent folder's scorecard is rebuilt
    from its transcripts (a full recording removes this agent's stale transcripts)."""

    def __init__(self, root: Path, full: bool) -> None:
        self.root, self.full = root, full

    def sample(self, run: CaseRun) -> None:
        del run  # the recording backend writes each transcript as its sample finishes

    def flush(self) -> None:
        return None

    def close(self, end: RunEnd) -> SinkReport:
        if end.stopped:
            return SinkReport()
        directory = agent_dir(self.root, end.suite, end.agent)
        keep = set(end.keys) if self.full else None
        path, foreign = rewrite_scorecard(
            directory, end.suite, end.agent, keep, end.build, case_result
        )
        return SinkReport(recorded_to=path, left_alone=tuple(foreign))


def merge_reports(reports: Iterable[SinkReport]) -> SinkReport:
    """One report of several sinks (each field from the sink that set it)."""
    out = SinkReport()
    for r in reports:
        out = SinkReport(
            reproduced=r.reproduced if r.reproduced is not None else out.reproduced,
            fidelity=r.fidelity or out.fidelity,
            problems=out.problems + r.problems,
            recorded_to=r.recorded_to or out.recorded_to,
            left_alone=out.left_alone + r.left_alone,
            digest=r.digest or out.digest,
        )
    return out
