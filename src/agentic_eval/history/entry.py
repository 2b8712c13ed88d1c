"""A history entry: one run's scorecard with everything that explains a change between runs.

Each run writes one entry as canonical JSON to ``<history>/<suite>/<UTC timestamp>_<run id>.json``
(see :mod:`agentic_eval.history.files`). The entry holds the full scorecard, the gate as read from
the store, the run configuration, what produced the run (a scripted agent, a model via a
provider, or a replay of which recording) and fingerprints of everything else a verdict depends
on (system prompt, tool schemas, fixtures, answer key, package version, git commit).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.core.messages import Frozen
from agentic_eval.core.scorecard import GateSummary, Scorecard
from agentic_eval.core.settings import RunParameters
from agentic_eval.core.text import safe_url

HISTORY_SCHEMA_VERSION = 2
"""2 adds ``previous_sha256`` (the chain); format-1 entries are still read, as unchained."""

ProducerKind = Literal["scripted", "model", "replay"]
RunMode = Literal["replay", "scripted", "live"]
RunStatus = Literal["finished", "interrupted"]

SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
"""Suite names and run ids: they become folder and file names."""


def _safe(value: str, what: str) -> str:
    if not SAFE_NAME.match(value):
        raise ValueError(
            f"{what} {value!r} must be letters, digits, '_', '.', '-' (not leading '.')"
        )
    return value


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("timestamps must carry a time zone (UTC)")
    return value.astimezone(UTC)


class RecordingRef(Frozen):
    """A recording folder, identified by content so two replays of it are recognisable."""

    folder: str = Field(description="The agent folder (as the run was given it, POSIX form).")
    transcripts: int = Field(ge=0, description="Transcript files in the folder.")
    transcripts_sha256: str | None = Field(
        description="sha256 over every transcript's file name and bytes (None: unreadable)."
    )
    scorecard_sha256: str | None = Field(
        description="sha256 of the committed scorecard.json bytes (None: missing or unreadable)."
    )


class Producer(Frozen):
    """What produced a run: a scripted agent, a model via a provider, or a replay."""

    kind: ProducerKind = Field(
        description="scripted: Python agent; model: a model via a provider; replay: recorded "
        "responses served again (never new agent behaviour)."
    )
    agent: str = Field(description="Agent label the run is filed under.")
    agent_kind: Literal["scripted", "model"] = Field(
        description="Who produced the responses (for a replay: who produced the recording)."
    )
    backend: str = Field(description="Backend of the responses (scripted, anthropic, openai...).")
    model: str = Field(description="Model name ('scripted:<agent>' for scripted agents).")
    provider: str | None = Field(default=None, description="Live provider, for model runs.")
    base_url: str | None = Field(
        default=None,
        description="Provider base URL, when one was set, as core.text.safe_url shows it "
        "(no credentials).",
    )
    recording: RecordingRef | None = Field(
        default=None,
        description="replay: the recording replayed; a recorded run: the recording it wrote.",
    )

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        return None if value is None else safe_url(value)


class RunConfig(Frozen):
    """How the run was configured (what ``run_session`` stores on the run row)."""

    mode: RunMode = Field(description="replay, scripted or live.")
    model: str = Field(description="Model name sent in requests.")
    parameters: RunParameters = Field(description="Limits, approval mode, temperature, gate.")
    backend: BackendSpec | None = Field(description="The backend spec, when one was given.")
    planned_samples: int = Field(ge=0, description="Samples the run set out to judge.")
    complete: bool = Field(description="Whether the run covered every case of the suite.")


class Fingerprints(Frozen):
    """Hashes of everything besides the agent that a verdict depends on."""

    system_prompt_sha256: str = Field(description="sha256 of the distinct system prompts.")
    tool_schema_sha256: str = Field(
        description="sha256 of the distinct tool lists the agent saw (tools, approval, submit)."
    )
    fixtures_sha256: str | None = Field(description="Domain.fixtures_sha256() (None: no domain).")
    answer_key_sha256: str = Field(description="sha256 of the cases run, expectations included.")
    case_sha256: dict[str, str] = Field(description="sha256 of each case run, by case id.")
    package_version: str = Field(description="agentic-eval version.")
    git_commit: str | None = Field(description="HEAD commit of the working tree, if in a repo.")


class ReplayResult(Frozen):
    """Replay only: whether the recording was reproduced."""

    reproduced: bool = Field(description="Every sample and the committed scorecard reproduced.")
    samples_reproduced: int = Field(ge=0, description="Samples reproduced in every field.")
    samples: int = Field(ge=0, description="Samples replayed.")
    problems: tuple[str, ...] = Field(description="What was not reproduced.")


class SampleFacts(Frozen):
    """What a run knows of one sample beyond its scorecard row (never part of the scorecard,
    which a replay reproduces byte for byte)."""

    case_id: str = Field(description="The case.")
    sample: int = Field(ge=0, description="The epoch.")
    seconds: float = Field(ge=0, description="Wall time of the sample.")
    reproduced: bool | None = Field(
        default=None, description="Replay: whether the recording was reproduced in every field."
    )
    problem: str = Field(default="", description="Replay: the first field not reproduced.")
    detail: str = Field(default="", description="The outcome in full where its reason is one line.")


class HistoryEntry(Frozen):
    """One run in a suite's history (canonical JSON, reviewable in git)."""

    schema_version: Literal[1, 2] = Field(default=HISTORY_SCHEMA_VERSION, description="Format.")
    run_id: str = Field(description="The store's run id.")
    suite: str = Field(description="Suite (domain) name.")
    started_at: datetime = Field(description="When the run started (UTC).")
    finished_at: datetime = Field(description="When the run finished (UTC).")
    status: RunStatus = Field(description="finished or interrupted.")
    producer: Producer = Field(description="What produced the run.")
    config: RunConfig = Field(description="Run configuration.")
    fingerprints: Fingerprints = Field(description="What else the verdicts depend on.")
    scorecard: Scorecard = Field(description="The run's scorecard, in full.")
    gate: GateSummary = Field(description="The gate as read back from the store's sample rows.")
    replay: ReplayResult | None = Field(default=None, description="Replay fidelity.")
    sample_facts: tuple[SampleFacts, ...] = Field(
        default=(),
        description="Per sample: wall time, and for a replay whether it was reproduced (empty in "
        "entries written before they were kept).",
    )
    previous_sha256: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="sha256 of the file of the entry before this one in its series (None: the "
        "first of its series). A deleted, reordered or edited entry breaks the chain.",
    )

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        return _safe(value, "run id")

    @model_validator(mode="after")
    def _chained_only_from_format_2(self) -> HistoryEntry:
        if self.schema_version < 2 and self.previous_sha256 is not None:
            raise ValueError("previous_sha256 needs schema_version 2")
        return self

    @field_validator("suite")
    @classmethod
    def _suite(cls, value: str) -> str:
        return _safe(value, "suite")

    @field_validator("started_at", "finished_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return _utc(value)

    @property
    def passed(self) -> int:
        """Samples that passed."""
        return self.scorecard.totals.passed

    @property
    def samples(self) -> int:
        """Samples judged or not."""
        return self.scorecard.totals.cases

    @property
    def pass_rate(self) -> float:
        """passed / samples (0 when there are none)."""
        return self.passed / self.samples if self.samples else 0.0


SeriesKey = tuple[str, str, str, str]


def series_key(entry: HistoryEntry) -> SeriesKey:
    """A series: runs of one suite by one agent, in one approval mode, produced the same way
    (a replay and a live run of the same agent are different series)."""
    produced = entry.scorecard.produced_by
    return (entry.suite, produced.agent, produced.approval_mode, entry.producer.kind)


def entry_digest(data: str | bytes) -> str:
    """The sha256 an entry's successor records: over the entry file's exact bytes."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def describe_producer(p: Producer) -> str:
    """What produced a run, in words; a replay is never presented as new agent behaviour."""
    if p.kind == "replay":
        where = p.recording.folder if p.recording is not None else "a recording"
        return f"replay of {where} (recorded from {_origin(p)})"
    return _origin(p)


def _origin(p: Producer) -> str:
    if p.agent_kind == "scripted":
        return f"scripted agent {p.agent}"
    via = p.provider or p.backend
    label = "" if p.agent == p.model else f" as {p.agent}"
    return f"model {p.model} via {via}{label}"
