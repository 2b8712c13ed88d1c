"""Domain errors of the workflow runtime: each a one-line message naming the job, step and state.

An error raised by a service call means the call changed nothing: its transaction is rolled back.
"""

from __future__ import annotations


class WorkflowError(Exception):
    """Base of the workflow's domain errors; also raised for invalid arguments (an unknown role,
    a template that redefines its steps, a naive datetime)."""


class NotFound(WorkflowError):
    """An id or key names no user, template, job, step, claim or attempt."""


class IllegalTransition(WorkflowError):
    """The call would move a job, step, claim or attempt along a transition that is not legal
    from its current state (approving an unfinished step, claiming out of order, deciding twice,
    rejecting without a reason, acting on a cancelled job...)."""


class ClaimConflict(IllegalTransition):
    """The step already has a live claim (checked by the service, and by the database's unique
    index on live claims when two claimers race)."""


class NotAnOperator(WorkflowError):
    """A decision (or another operator-only action) was asked of a user who is not an operator."""
