"""View models: what every renderer (terminal, Markdown, JUnit XML, JSON, HTML) shows.

Plain frozen dataclasses holding display-ready, JSON-compatible values, built from history
entries and diffs by :mod:`agentic_eval.report.build`. The JSON renderer dumps them as they are,
and reads them back into equal values (``report_from_json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict

REPORT_SCHEMA_VERSION = 2
"""2: a report has one entry per series (``SuiteReport.series``), not one per suite."""
_STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class CheckView:
    """A failed check."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    name: str
    hard_gate: bool
    message: str
    expected: Any = None
    actual: Any = None


@dataclass(frozen=True)
class CaseView:
    """One sample of a run."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    case_id: str
    sample: int
    outcome: str
    """passed, check_failed, error or transient."""
    reason: str
    hard_gate_failed: bool
    failed_checks: tuple[CheckView, ...]
    turns: int
    tool_calls: int
    seconds: float = 0.0
    """Wall time of the sample (0 in entries written before it was kept)."""
    reproduced: bool | None = None
    """Replay: whether the recording was reproduced in every field."""
    problem: str = ""
    """Replay: the first field not reproduced."""
    detail: str = ""
    """The outcome in full where its reason is one line (every schema error)."""

    @property
    def name(self) -> str:
        """``case`` or ``case@sample``."""
        return self.case_id if self.sample == 0 else f"{self.case_id}@{self.sample}"


@dataclass(frozen=True)
class RunSummaryView:
    """One run, in a line: what produced it and how it did."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    run_id: str
    suite: str
    started_at: str
    """ISO 8601, UTC."""
    status: str
    producer: str
    """What produced it, in words (a replay says which recording)."""
    producer_kind: str
    """scripted, model or replay."""
    agent: str
    model: str
    approval_mode: str
    passed: int
    samples: int
    transient: int
    hard_gate_failures: int
    unapproved_attempts: int
    unapproved_executions: int
    verdict: str
    gate_reason: str
    pass_rate: float
    reproduced: bool | None
    """Replays: whether the recording was reproduced."""
    replay_problems: tuple[str, ...]
    """Replays: what was not reproduced."""
    duration_seconds: float
    file: str
    """The history entry file."""
    expected_to_fail: bool = False
    """The agent is shipped to fail (a mutant or a red-team demo): a failed gate is expected."""


@dataclass(frozen=True)
class RunView:
    """A run with every sample (failed checks only)."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    summary: RunSummaryView
    cases: tuple[CaseView, ...]


@dataclass(frozen=True)
class FlipView:
    """A check that failed on one side only."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    name: str
    hard_gate: bool
    before: str
    """held, failed or not run."""
    after: str
    why: str


@dataclass(frozen=True)
class ChangeView:
    """A case whose verdict changed, or that still fails."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    case_id: str
    sample: int
    kind: str
    """regressed, improved, still_failing, new, removed or inconclusive."""
    before: str
    """Outcome in the base run ('-' when absent)."""
    after: str
    """Outcome in the head run ('-' when absent)."""
    flips: tuple[FlipView, ...]
    note: str
    """The outcome's reason when no check explains it; an answer-key change."""

    @property
    def name(self) -> str:
        """``case`` or ``case@sample``."""
        return self.case_id if self.sample == 0 else f"{self.case_id}@{self.sample}"


@dataclass(frozen=True)
class DiffView:
    """Two runs of one suite, compared."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    suite: str
    base: RunSummaryView
    head: RunSummaryView
    counts: dict[str, int]
    """Cases by change kind, unchanged included."""
    changes: tuple[ChangeView, ...]
    """Every case but the unchanged ones, by case id."""
    causes: tuple[str, ...]
    """What else differs between the runs (model, fixtures, prompt...)."""
    replay: str
    """What replays mean for this diff ('' when neither run is one)."""

    @property
    def regressions(self) -> int:
        """Cases that passed in the base run and fail in the head run."""
        return self.counts.get("regressed", 0)


@dataclass(frozen=True)
class PointView:
    """A run in the history listing and plot."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    run_id: str
    started_at: str
    producer: str
    producer_kind: str
    passed: int
    samples: int
    pass_rate: float
    hard_gate_failures: int
    verdict: str
    status: str
    baseline: bool
    reproduced: bool | None


@dataclass(frozen=True)
class BlockView:
    """One piece of a turn: the task, a tool result, the model's text or a tool call."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    role: str
    text: str


@dataclass(frozen=True)
class TurnView:
    """One model turn: what the harness sent, then what the model answered."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    index: int
    sent: tuple[BlockView, ...]
    reply: tuple[BlockView, ...]


@dataclass(frozen=True)
class TranscriptView:
    """A failed sample's conversation (empty with ``source`` saying why, when unavailable)."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    case_id: str
    sample: int
    available: bool
    source: str
    """Where the transcript was read from, or why it is not shown."""
    turns: tuple[TurnView, ...]
    output: str
    """The submitted output as indented JSON ('' when none)."""


@dataclass(frozen=True)
class SuiteReport:
    """One suite in a report: its history, the diff, the head run and failed transcripts."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    suite: str
    history: tuple[PointView, ...]
    """Oldest first."""
    head: RunView | None
    diff: DiffView | None
    note: str
    """Why there is no diff, when there is none."""
    transcripts: tuple[TranscriptView, ...]
    """The head run's failed samples (when transcripts were asked for)."""
    series: str = ""
    """The series within the suite: ``agent (approval mode, producer kind)``."""

    @property
    def title(self) -> str:
        """``suite / series`` (the suite alone when there is no series)."""
        return f"{self.suite} / {self.series}" if self.series else self.suite


@dataclass(frozen=True)
class ReportView:
    """A whole report: one entry per series of each suite."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    suites: tuple[SuiteReport, ...]
    schema_version: int = REPORT_SCHEMA_VERSION

    @property
    def regressions(self) -> int:
        """Regressed cases over every suite."""
        return sum(s.diff.regressions for s in self.suites if s.diff is not None)


@dataclass(frozen=True)
class RunsView:
    """The runs of one ``run`` command (for ``run --format``)."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT
    runs: tuple[RunView, ...]
    schema_version: int = REPORT_SCHEMA_VERSION
