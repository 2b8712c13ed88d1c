"""What the workflow service returns: frozen snapshots of rows, ids as ``str``, times as aware UTC
datetimes, JSON as ``dict``/``list`` (copies: changing one changes nothing stored)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Role = Literal["operator", "agent", "worker", "system"]
JobState = Literal["open", "in_progress", "done", "cancelled"]
JobOrigin = Literal["real", "scenario", "workflow-batch", "imported"]
"""Where a job came from: ``real`` (made by the people and systems the workflow serves),
``scenario`` (seeded by an eval scenario: ``step``, ``batch --scenario``), ``workflow-batch``
(driven by ``workflow batch``, its operator a policy) or ``imported``. Only ``real`` and
``imported`` jobs are the corpus of human decisions; the others never enter it unless asked for."""
JOB_ORIGINS: tuple[JobOrigin, ...] = ("real", "scenario", "workflow-batch", "imported")
HUMAN_ORIGINS: tuple[JobOrigin, ...] = ("real", "imported")
"""The origins whose decisions a human made: what the corpus replays by default."""
StepState = Literal["pending", "claimed", "submitted", "approved"]
ClaimStatus = Literal["live", "released"]
AttemptStatus = Literal[
    "running", "submitted", "failed", "approved", "rejected", "interrupted", "abandoned"
]
DecisionKind = Literal["approve", "reject"]

ROLES: tuple[Role, ...] = ("operator", "agent", "worker", "system")
DECISIONS: tuple[DecisionKind, ...] = ("approve", "reject")


@dataclass(frozen=True)
class User:
    """Someone who acts on jobs. Only operators decide."""

    id: str
    name: str
    role: Role
    created_at: datetime


@dataclass(frozen=True)
class Template:
    """A job template: its step template keys in order (the keys ``CHECKS_BY_TEMPLATE`` uses)."""

    key: str
    title: str
    steps: tuple[str, ...]
    created_at: datetime


@dataclass(frozen=True)
class Job:
    """A job made from a template, with its requirements and seeded inputs."""

    id: str
    template_key: str
    title: str
    state: JobState
    requirements: dict[str, Any]
    inputs: dict[str, Any]
    created_by: str
    """The id of the user who created the job."""
    created_at: datetime
    origin: JobOrigin = "real"
    """Where the job came from (:data:`JobOrigin`)."""


@dataclass(frozen=True)
class Step:
    """One step of a job."""

    job_id: str
    key: str
    position: int
    """0 for the template's first step."""
    state: StepState
    created_at: datetime


@dataclass(frozen=True)
class Transition:
    """A ``JobTransition`` row: one state change of a job (``step_key`` None) or of a step."""

    id: str
    job_id: str
    step_key: str | None
    actor_id: str
    at: datetime
    from_state: str
    """The state left; ``""`` for the creation of the job."""
    to_state: str
    reason: str


@dataclass(frozen=True)
class Claim:
    """A user's claim of one attempt at one step; ``live`` until the attempt finishes, its
    process is interrupted, or, its lease having expired, someone releases it."""

    id: str
    job_id: str
    step_key: str
    attempt_id: str
    claimant_id: str
    claimed_at: datetime
    released_at: datetime | None
    status: ClaimStatus
    lease_expires_at: datetime | None = None
    """Until when the claim is safe from release without a renewal; None for a claim made
    before leases (a live one counts as expired)."""
    heartbeat_at: datetime | None = None
    """When the holding process last renewed the lease."""
    holder: str | None = None
    """Which process holds (or held) the claim: host and pid."""


@dataclass(frozen=True)
class Attempt:
    """One attempt at a step, kept by time; ``output`` None when the attempt broke."""

    id: str
    job_id: str
    step_key: str
    number: int
    """1 for the step's first attempt."""
    claim_id: str
    started_at: datetime
    finished_at: datetime | None
    output: dict[str, Any] | None
    note: str
    feedback: list[str]
    """The rejection reasons the step had been given when this attempt was claimed, oldest
    first."""
    status: AttemptStatus


@dataclass(frozen=True)
class Decision:
    """An operator's verdict on a submitted attempt."""

    id: str
    attempt_id: str
    job_id: str
    step_key: str
    operator_id: str
    decision: DecisionKind
    reason: str
    at: datetime


@dataclass(frozen=True)
class ReleasedClaim:
    """A claim released without its attempt finishing: its process was interrupted
    (``interrupted``), or its lease expired and someone else released it (``abandoned``)."""

    job_id: str
    step_key: str
    claim_id: str
    attempt_id: str
    attempt_number: int
    claimant: str
    """The name of the user who had claimed the step."""
    holder: str | None
    """Which process held it (host and pid), when known."""
    lease_expires_at: datetime | None
    released_at: datetime
    released_by: str
    """The name of the user the release is recorded as (the claimant for an interruption, the
    system user or an operator for an expired lease)."""
    attempt_status: AttemptStatus
    """``interrupted`` or ``abandoned``."""
    reason: str
    """The reason written on the step's transition back to ``pending``."""


@dataclass(frozen=True)
class Retrieval:
    """One thing an attempt's tools retrieved, as the tool gave it to the agent: what an attempt
    hands :meth:`~agentic_eval.workflow.service.Workflow.finish_attempt` to keep."""

    source: str
    """What was retrieved: a URL, a registry search, a document id."""
    text: str
    """The exact text the agent was given (for a source not found, the tool's answer)."""
    title: str | None = None
    """The title the tool gave with the text, if it gives one."""
    found: bool = True
    """False when the source was not there (a 404): the replay answers the same."""


@dataclass(frozen=True)
class Retrieved:
    """One source an attempt's tools retrieved, as kept: the exact text, its sha256, the title
    and whether it was found."""

    source: str
    """What was retrieved: a URL, a registry search, a document id."""
    text: str
    sha256: str
    """Of the text's UTF-8 bytes: identical pages are stored once."""
    title: str | None = None
    """The title the tool gave (None: none, or kept before titles were)."""
    found: bool = True
    """False when the source was not there: ``text`` is what the tool answered."""
