"""SQLAlchemy models: one ``eval_run`` per suite run and one ``eval_sample`` per sample.

Text columns are unbounded (``Text``) so that PostgreSQL and SQLite accept the same data; the
store also strips NUL characters, which PostgreSQL refuses in text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the store's tables."""


class EvalRun(Base):
    """A run of one suite with one agent. Totals are a cache: the gate is read from the samples."""

    __tablename__ = "eval_run"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    domain: Mapped[str] = mapped_column(Text, index=True)
    agent: Mapped[str] = mapped_column(Text)
    agent_kind: Mapped[str] = mapped_column(String(20))
    backend: Mapped[str] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String(20))
    model: Mapped[str] = mapped_column(Text)
    approval_mode: Mapped[str] = mapped_column(String(20))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="running")
    """running, finished or interrupted; a ``running`` row with an old heartbeat is abandoned."""
    settings: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The typed run parameters (plus the model name)."""
    backend_spec: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The serialised backend spec: a worker or a resume rebuilds the backend from it."""
    plan: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The RunPlan the run was opened with (None: a run started without one)."""
    planned_samples: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(Text, nullable=True)
    samples: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)
    check_failed: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[int] = mapped_column(Integer, default=0)
    transient: Mapped[int] = mapped_column(Integer, default=0)
    hard_gate_failures: Mapped[int] = mapped_column(Integer, default=0)
    failure_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    gate: Mapped[str | None] = mapped_column(String(20), nullable=True)
    scorecard_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    reproduced: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    package_version: Mapped[str] = mapped_column(Text)


class EvalSample(Base):
    """One sample (one run of one case) within a run; (run, case, sample, attempt) is unique:
    ``sample`` is the epoch, ``attempt`` the rejection round of a workflow step (from 1)."""

    __tablename__ = "eval_sample"
    __table_args__ = (
        UniqueConstraint(
            "run_id", "case_id", "sample", "attempt", name="uq_eval_sample_run_case_sample_attempt"
        ),
        # what the gate counts, read from the index alone (migration 0012)
        Index(
            "ix_eval_sample_gate",
            *("run_id", "case_id", "outcome", "hard_gate_failed", "case_verdict"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("eval_run.id", ondelete="CASCADE"), index=True
    )
    case_id: Mapped[str] = mapped_column(Text)
    sample: Mapped[int] = mapped_column(Integer, default=0)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    worker_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    outcome: Mapped[str] = mapped_column(String(20), index=True)
    failure_reason: Mapped[str] = mapped_column(Text, default="")
    failure_where: Mapped[str] = mapped_column(Text, default="")
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    hard_gate_failed: Mapped[bool] = mapped_column(Boolean)
    unapproved_attempts: Mapped[int] = mapped_column(Integer)
    unapproved_executions: Mapped[int] = mapped_column(Integer)
    turns: Mapped[int] = mapped_column(Integer)
    tool_calls: Mapped[int] = mapped_column(Integer)
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    duration_ms: Mapped[float] = mapped_column(Float)
    transcript_ref: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The transcript file the sample was recorded to or replayed from."""
    transcript: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The transcript itself (canonical JSON) when no file holds it (unrecorded runs)."""
    reproduced: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    source_job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    """A corpus sample: the real job it replayed (None for any other run)."""
    case_verdict: Mapped[str | None] = mapped_column(String(20), nullable=True)
    """A corpus sample: that job's first human verdict on the step, ``approved`` (judged) or
    ``rejected`` (run, not judged); None for any other run."""
    request_template: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """When set, ``transcript`` is stored without the value of its request template, which is
    the :class:`RequestTemplateRow` of this sha256, to be put back at ``request_at`` (the
    store's reads return the whole transcript): every sample of a suite shares it, and it is
    most of a scripted transcript's bytes. None: ``transcript`` is whole."""
    request_at: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Where in ``transcript`` (in characters) the request template's value goes."""


class RequestTemplateRow(Base):
    """A request template (model, system prompt, tools...) as canonical JSON, kept once for
    every stored transcript that has it (content-addressed)."""

    __tablename__ = "eval_request_template"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    template: Mapped[str] = mapped_column(Text)


class HistoryEntryRow(Base):
    """A run's history entry (scorecard, configuration, fingerprints) as canonical JSON, beside
    the file written to the history folder."""

    __tablename__ = "history_entry"

    run_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("eval_run.id", ondelete="CASCADE"), primary_key=True
    )
    suite: Mapped[str] = mapped_column(Text, index=True)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    entry: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    filed_in: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The history folder (absolute) the entry file was written to; None when none was."""
