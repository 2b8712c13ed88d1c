"""The corpus: real, human-decided jobs of the workflow, rebuilt as scenarios and replayed."""

from agentic_eval.corpus.jobs import scenario_from_job
from agentic_eval.corpus.select import CaseVerdict, CorpusCase, corpus_cases

__all__ = ["CaseVerdict", "CorpusCase", "corpus_cases", "scenario_from_job"]
