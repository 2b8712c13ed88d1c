"""Typed fixtures of the process_mapping domain: business processes as event logs plus step data.

Each process has an SOP (documentation, possibly out of date), an event log (what people actually
did: case id, activity, actor, role, system, timestamp) and a catalogue of steps with the
attributes the automation policy reasons over. Money is integer cents of ``currency``; handle
times are whole minutes; exception rates are whole percent. Nothing here reads a clock.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentic_eval.domains.fixtures import FixtureLoader, find_by_id, unique_ids

__all__ = [
    "FIXTURES_PATH",
    "DecisionType",
    "Defect",
    "InputStructure",
    "LogEvent",
    "Process",
    "ProcessFixtures",
    "Role",
    "Step",
    "System",
    "SystemAccess",
    "fixtures_path",
    "load_fixtures",
]

FIXTURES_PATH = Path(__file__).with_name("fixtures.json")
"""The committed, fictional gold data."""

InputStructure = Literal["structured", "semi_structured", "unstructured"]
"""How the step's input arrives: fields in a system, a known document layout, or free text."""
DecisionType = Literal["rule_based", "judgement"]
"""Whether the step follows written rules or needs a person's judgement."""
SystemAccess = Literal["api", "screen_only"]
"""How software can reach the step's system: an API, or only its user interface."""
Defect = Literal["missing_owner", "inconsistent_data", "manual_workaround", "no_audit_trail"]
"""A known defect of the step as it runs today."""

_T = TypeVar("_T")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Role(_Model):
    """A role that performs process steps, with its fully loaded hourly cost."""

    role_id: str = Field(description="Role id, e.g. R-APC.")
    name: str = Field(description="Role name.")
    hourly_cost_cents: int = Field(gt=0, description="Cost of one hour of this role, in cents.")


class System(_Model):
    """A business application steps are performed in."""

    system_id: str = Field(description="System id, e.g. SYS-ERP.")
    name: str = Field(description="System name.")


class Process(_Model):
    """A business process and its standard operating procedure."""

    process_id: str = Field(description="Process id, e.g. P-INV.")
    name: str = Field(description="Process name.")
    department: str = Field(description="Department that runs it.")
    sop: str = Field(description="SOP text as documented (may not match what happens).")


class Step(_Model):
    """One step of a process, with the attributes the automation policy reads."""

    step_id: str = Field(description="Step id, e.g. INV-CAP.")
    process_id: str = Field(description="Process it belongs to.")
    activity: str = Field(description="Activity name as it appears in the event log.")
    volume_per_month: int = Field(ge=0, description="Times the step is performed per month.")
    handle_time_minutes: int = Field(gt=0, description="Minutes of work per execution.")
    input_structure: InputStructure = Field(description="How the input arrives.")
    decision_type: DecisionType = Field(description="Rule-based or judgement.")
    exception_rate_pct: int = Field(
        ge=0, le=100, description="Percent of executions that hit an exception."
    )
    system_access: SystemAccess = Field(description="API or screen only.")
    defects: tuple[Defect, ...] = Field(description="Known defects (empty: none).")


class LogEvent(_Model):
    """One row of a process's event log."""

    event_id: str = Field(description="Event id, in export order (not necessarily time order).")
    process_id: str = Field(description="Process.")
    case_id: str = Field(description="The process instance (log case) the event belongs to.")
    activity: str = Field(description="Activity performed.")
    actor_id: str = Field(description="Pseudonymous person who performed it.")
    role_id: str = Field(description="The actor's role.")
    system_id: str = Field(description="System it was performed in.")
    timestamp: datetime = Field(description="When it was performed (local time).")


class ProcessFixtures(_Model):
    """All processes. Validation enforces referential integrity, so lookups cannot miss."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    currency: str = Field(description="Currency of every amount (ISO 4217).")
    roles: tuple[Role, ...] = Field(description="Roles and their hourly costs.")
    systems: tuple[System, ...] = Field(description="Systems.")
    processes: tuple[Process, ...] = Field(description="Processes.")
    steps: tuple[Step, ...] = Field(description="Every step of every process.")
    event_log: tuple[LogEvent, ...] = Field(description="Event logs of every process.")

    @model_validator(mode="after")
    def _integrity(self) -> Self:
        roles = unique_ids("role", (r.role_id for r in self.roles))
        systems = unique_ids("system", (s.system_id for s in self.systems))
        processes = unique_ids("process", (p.process_id for p in self.processes))
        unique_ids("step", (s.step_id for s in self.steps))
        unique_ids("event", (e.event_id for e in self.event_log))
        activities: dict[tuple[str, str], str] = {}
        for step in self.steps:
            if step.process_id not in processes:
                raise ValueError(f"{step.step_id}: unknown process {step.process_id}")
            if len(set(step.defects)) != len(step.defects):
                raise ValueError(f"{step.step_id}: a defect is listed twice")
            if (step.process_id, step.activity) in activities:
                raise ValueError(f"{step.step_id}: activity {step.activity!r} is not unique")
            activities[(step.process_id, step.activity)] = step.step_id
        case_process: dict[str, str] = {}
        seen: set[str] = set()
        for e in self.event_log:
            step_id = activities.get((e.process_id, e.activity))
            if step_id is None:
                raise ValueError(f"{e.event_id}: activity {e.activity!r} is no step of its process")
            if e.role_id not in roles or e.system_id not in systems:
                raise ValueError(f"{e.event_id}: unknown role or system")
            if case_process.setdefault(e.case_id, e.process_id) != e.process_id:
                raise ValueError(f"{e.event_id}: log case {e.case_id} spans two processes")
            seen.add(step_id)
        missing = sorted(s.step_id for s in self.steps if s.step_id not in seen)
        if missing:
            raise ValueError(f"steps never seen in the event log: {missing}")
        return self

    def process(self, process_id: str) -> Process:
        """The process with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.processes, process_id, lambda p: p.process_id)

    def step(self, step_id: str) -> Step:
        """The step with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.steps, step_id, lambda s: s.step_id)

    def role(self, role_id: str) -> Role:
        """The role with this id.

        Raises:
            KeyError: When there is none.
        """
        return find_by_id(self.roles, role_id, lambda r: r.role_id)

    def steps_of(self, process_id: str) -> list[Step]:
        """The process's steps, in step-id order (the catalogue order, not the process order)."""
        return sorted(
            (s for s in self.steps if s.process_id == process_id), key=lambda s: s.step_id
        )

    def log_of(self, process_id: str) -> list[LogEvent]:
        """The process's event log in export (event-id) order."""
        found = [e for e in self.event_log if e.process_id == process_id]
        return sorted(found, key=lambda e: e.event_id)


LOADER = FixtureLoader(ProcessFixtures, "process_mapping", FIXTURES_PATH)


def fixtures_path() -> Path:
    """The fixture file in use: the external one under ``$EVAL_FIXTURE_DIR``, or ours."""
    return LOADER.path()


def load_fixtures() -> ProcessFixtures:
    """The fixtures in use, validated (cached per file version: treat the result as read-only).

    Raises:
        FixtureError: One line naming the file and the first invalid field.
    """
    return LOADER()
