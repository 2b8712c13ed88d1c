"""SQLAlchemy models: one ``eval_run`` per domain run and one ``eval_sample`` per case."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the store's tables."""


class EvalRun(Base):
    """A run of one domain with one agent."""

    __tablename__ = "eval_run"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    domain: Mapped[str] = mapped_column(String(100), index=True)
    agent: Mapped[str] = mapped_column(String(200))
    agent_kind: Mapped[str] = mapped_column(String(20))
    backend: Mapped[str] = mapped_column(String(50))
    mode: Mapped[str] = mapped_column(String(20))
    model: Mapped[str] = mapped_column(String(200))
    approval_mode: Mapped[str] = mapped_column(String(20))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="running")
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
    package_version: Mapped[str] = mapped_column(String(40))


class EvalSample(Base):
    """One case's result within a run."""

    __tablename__ = "eval_sample"
    __table_args__ = (UniqueConstraint("run_id", "case_id", name="uq_eval_sample_run_case"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("eval_run.id", ondelete="CASCADE"), index=True
    )
    case_id: Mapped[str] = mapped_column(String(200))
    outcome: Mapped[str] = mapped_column(String(20), index=True)
    failure_reason: Mapped[str] = mapped_column(Text, default="")
    failure_where: Mapped[str] = mapped_column(String(200), default="")
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    hard_gate_failed: Mapped[bool] = mapped_column(Boolean)
    unapproved_attempts: Mapped[int] = mapped_column(Integer)
    unapproved_executions: Mapped[int] = mapped_column(Integer)
    turns: Mapped[int] = mapped_column(Integer)
    tool_calls: Mapped[int] = mapped_column(Integer)
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    duration_ms: Mapped[float] = mapped_column(Float)
    transcript_ref: Mapped[str | None] = mapped_column(String(500), nullable=True)
    reproduced: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
