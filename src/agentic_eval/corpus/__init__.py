"""The corpus: real, human-decided jobs of the workflow, rebuilt as scenarios and replayed."""

from agentic_eval.corpus.audit import JudgedAgainst, judged_against
from agentic_eval.corpus.jobs import case_name, scenario_from_job
from agentic_eval.corpus.replay import case_scenario, find_decision
from agentic_eval.corpus.select import CaseVerdict, CorpusCase, corpus_cases

__all__ = [
    "CaseVerdict",
    "CorpusCase",
    "JudgedAgainst",
    "case_name",
    "case_scenario",
    "corpus_cases",
    "find_decision",
    "judged_against",
    "scenario_from_job",
]
