"""The runnable unit: task specifications and task kinds."""

from agentic_eval.tasks.spec import TaskKind, TaskSpec, case_approver, faulted_spec, with_sample

__all__ = ["TaskKind", "TaskSpec", "case_approver", "faulted_spec", "with_sample"]
