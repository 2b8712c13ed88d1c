"""Tables of the governed workflow runtime (``wf_*``), on the store's declarative base.

Every table has an integer ``seq`` primary key, which only orders rows in the order they were
written (clocks can tie), and, where rows are referred to from outside, a uuid ``id``. A step is
named by its job and its template step key. Times are UTC; SQLite hands them back naive, the
workflow service makes them aware again.

The service in ``agentic_eval.workflow`` is the only writer and enforces the legal transitions;
the database adds what must hold even between two processes: one live claim per step (a partial
unique index), one attempt number per step, one step key per job.

A claim is a lease: the process holding it renews ``lease_expires_at`` while its agent works; once
that moment has passed, the next operation that meets the claim may release it (its attempt is
``abandoned``). Claims written before leases (migration 0005) have no expiry: they count as
expired.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from agentic_eval.store.models import Base

LIVE_CLAIM_INDEX = "uq_wf_claim_live_step"
"""The partial unique index that allows one ``live`` claim per (job, step)."""
LIVE_CLAIM_WHERE = "status = 'live'"
SYSTEM_USER_ID = "00000000-0000-4000-8000-000000000001"
"""The id of the ``agentic-eval`` user (role ``system``) who releases expired claims; migration
0005 creates it."""
SYSTEM_USER_NAME = "agentic-eval"


class WfUser(Base):
    """A person or program that acts on jobs: ``operator`` (decides), ``agent``, ``worker``, or
    ``system`` (agentic-eval itself, releasing expired claims)."""

    __tablename__ = "wf_user"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    role: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WfTemplate(Base):
    """A job template: an ordered list of step template keys (``research``, ``synthesize``...)."""

    __tablename__ = "wf_template"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    title: Mapped[str] = mapped_column(Text)
    steps: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WfJob(Base):
    """A job: one run of a template, with its requirements and seeded inputs."""

    __tablename__ = "wf_job"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    template_key: Mapped[str] = mapped_column(
        String(200), ForeignKey("wf_template.key"), index=True
    )
    title: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(20))
    """open, in_progress, done or cancelled."""
    requirements: Mapped[dict[str, Any]] = mapped_column(JSON)
    inputs: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_by: Mapped[str] = mapped_column(String(36), ForeignKey("wf_user.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    origin: Mapped[str] = mapped_column(
        String(20), default="real", server_default="real", index=True
    )
    """real, scenario, workflow-batch or imported (workflow.records.JobOrigin)."""
    revision: Mapped[int] = mapped_column(Integer, default=0)
    """Bumped by every change to the job or its steps; the bump locks the job's row, so two
    writers on one job are serialised (PostgreSQL row lock, SQLite write lock)."""


class WfStep(Base):
    """One step of one job, at its template position."""

    __tablename__ = "wf_step"
    __table_args__ = (
        UniqueConstraint("job_id", "key", name="uq_wf_step_job_key"),
        UniqueConstraint("job_id", "position", name="uq_wf_step_job_position"),
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(String(36), ForeignKey("wf_job.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(20))
    """pending, claimed, submitted or approved."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WfTransition(Base):
    """A state change of a job (``step_key`` NULL) or of one of its steps: who, when, from, to,
    why. Written for every change, in order (``seq``)."""

    __tablename__ = "wf_transition"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    job_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("wf_job.id", ondelete="CASCADE"), index=True
    )
    step_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    actor_id: Mapped[str] = mapped_column(String(36), ForeignKey("wf_user.id"))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    from_state: Mapped[str] = mapped_column(String(20))
    """The state left; ``""`` when the job was created."""
    to_state: Mapped[str] = mapped_column(String(20))
    reason: Mapped[str] = mapped_column(Text)


class WfClaim(Base):
    """A claim of one step attempt by one user; ``live`` until the attempt finishes."""

    __tablename__ = "wf_claim"
    __table_args__ = (
        ForeignKeyConstraint(
            ["job_id", "step_key"], ["wf_step.job_id", "wf_step.key"], ondelete="CASCADE"
        ),
        Index(
            LIVE_CLAIM_INDEX,
            "job_id",
            "step_key",
            unique=True,
            sqlite_where=text(LIVE_CLAIM_WHERE),
            postgresql_where=text(LIVE_CLAIM_WHERE),
        ),
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    job_id: Mapped[str] = mapped_column(String(36), index=True)
    step_key: Mapped[str] = mapped_column(String(200))
    attempt_id: Mapped[str] = mapped_column(String(36), unique=True)
    """The attempt made under this claim (no foreign key: the attempt refers back to the claim)."""
    claimant_id: Mapped[str] = mapped_column(String(36), ForeignKey("wf_user.id"))
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    released_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    status: Mapped[str] = mapped_column(String(20))
    """live or released."""
    lease_expires_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
    """Until when the holder may keep the claim without renewing; None for claims made before
    leases (treated as expired while live)."""
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    """When the holder last renewed the lease (the claim's time at first)."""
    holder: Mapped[str | None] = mapped_column(Text, nullable=True)
    """Which process holds the claim (host and pid), for the operator reading a release."""


class WfAttempt(Base):
    """One attempt at a step, kept by time: only its status and finish fields ever change."""

    __tablename__ = "wf_attempt"
    __table_args__ = (
        ForeignKeyConstraint(
            ["job_id", "step_key"], ["wf_step.job_id", "wf_step.key"], ondelete="CASCADE"
        ),
        UniqueConstraint("job_id", "step_key", "number", name="uq_wf_attempt_step_number"),
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    job_id: Mapped[str] = mapped_column(String(36), index=True)
    step_key: Mapped[str] = mapped_column(String(200))
    number: Mapped[int] = mapped_column(Integer)
    claim_id: Mapped[str] = mapped_column(String(36), ForeignKey("wf_claim.id"))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    output: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    feedback: Mapped[list[str]] = mapped_column(JSON)
    """The rejection reasons the step had been given when this attempt was claimed."""
    status: Mapped[str] = mapped_column(String(20))
    """running, submitted, failed, approved, rejected, interrupted (its process was stopped by a
    signal) or abandoned (its claim's lease expired)."""


class WfDecision(Base):
    """An operator's decision on a submitted attempt: approve, or reject with a reason."""

    __tablename__ = "wf_decision"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    attempt_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("wf_attempt.id", ondelete="CASCADE"), unique=True
    )
    job_id: Mapped[str] = mapped_column(String(36), index=True)
    step_key: Mapped[str] = mapped_column(String(200))
    operator_id: Mapped[str] = mapped_column(String(36), ForeignKey("wf_user.id"))
    decision: Mapped[str] = mapped_column(String(20))
    reason: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WfSourceText(Base):
    """The text of a retrieved source, stored once however many attempts retrieved it
    (content-addressed: its key is the sha256 of its UTF-8 bytes)."""

    __tablename__ = "wf_source_text"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class WfRetrieval(Base):
    """One source an attempt's tools retrieved, in order: what the attempt saw, kept so that a
    replay of the job serves exactly that text, whatever the source says today."""

    __tablename__ = "wf_retrieval"
    __table_args__ = (
        UniqueConstraint("attempt_id", "position", name="uq_wf_retrieval_attempt_position"),
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    attempt_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("wf_attempt.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    """0 for the attempt's first retrieval."""
    source: Mapped[str] = mapped_column(Text)
    """What was retrieved: a URL, a registry filing, a document id."""
    sha256: Mapped[str] = mapped_column(String(64), ForeignKey("wf_source_text.sha256"))
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The title the tool gave with the text (None: it gave none, or it was kept before
    titles were)."""
    found: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    """False when the source was not there (the text is what the tool answered, a 404)."""


WORKFLOW_TABLES = (
    WfUser,
    WfTemplate,
    WfJob,
    WfStep,
    WfTransition,
    WfClaim,
    WfAttempt,
    WfDecision,
    WfSourceText,
    WfRetrieval,
)
"""Every workflow table, parents first."""
