"""The runnable unit: task specifications and task kinds."""

from agentic_eval.tasks.spec import TaskKind, TaskSpec, faulted_spec

__all__ = ["TaskKind", "TaskSpec", "faulted_spec"]
