"""The governed workflow runtime: users, job templates, jobs and their steps, claims, attempts
with their typed outputs (kept by time), operator decisions, and a transition row for every state
change, all persisted in the store beside eval runs. Claims are leases, renewed while their
process lives (``workflow.heartbeat``, ``workflow.leases``)."""

from agentic_eval.workflow.errors import (
    ClaimConflict,
    IllegalTransition,
    NotAnOperator,
    NotFound,
    WorkflowError,
)
from agentic_eval.workflow.heartbeat import DEFAULT_LEASE_SECONDS, LEASE_ENV, lease_seconds
from agentic_eval.workflow.records import (
    Attempt,
    AttemptStatus,
    Claim,
    ClaimStatus,
    Decision,
    DecisionKind,
    Job,
    JobState,
    ReleasedClaim,
    Retrieval,
    Retrieved,
    Role,
    Step,
    StepState,
    Template,
    Transition,
    User,
)
from agentic_eval.workflow.service import Workflow

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "LEASE_ENV",
    "Attempt",
    "AttemptStatus",
    "Claim",
    "ClaimConflict",
    "ClaimStatus",
    "Decision",
    "DecisionKind",
    "IllegalTransition",
    "Job",
    "JobState",
    "NotAnOperator",
    "NotFound",
    "ReleasedClaim",
    "Retrieval",
    "Retrieved",
    "Role",
    "Step",
    "StepState",
    "Template",
    "Transition",
    "User",
    "Workflow",
    "WorkflowError",
    "lease_seconds",
]
