"""The corpus: real, human-decided jobs of the workflow, rebuilt as scenarios and replayed."""

from agentic_eval.corpus.jobs import scenario_from_job

__all__ = ["scenario_from_job"]
