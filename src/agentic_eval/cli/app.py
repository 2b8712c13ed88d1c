"""The command group and its sub-commands."""

from __future__ import annotations

import click

from agentic_eval._version import __version__
from agentic_eval.cli.batch import batch
from agentic_eval.cli.corpus import corpus
from agentic_eval.cli.fake_provider import fake_provider
from agentic_eval.cli.goldens import goldens
from agentic_eval.cli.guard import guard
from agentic_eval.cli.history import baseline, history
from agentic_eval.cli.listing import list_, show
from agentic_eval.cli.model import model
from agentic_eval.cli.mutants import mutants
from agentic_eval.cli.report import report
from agentic_eval.cli.rescore import rescore
from agentic_eval.cli.run import run
from agentic_eval.cli.scenarios import scenarios_cmd
from agentic_eval.cli.step import step
from agentic_eval.cli.view import view
from agentic_eval.cli.worker import worker
from agentic_eval.cli.workflow import workflow
from agentic_eval.cli.workflow_batch import workflow_batch
from agentic_eval.cli.workflow_people import users, workflow_run


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="agentic-eval", message="%(prog)s %(version)s")
def cli() -> None:
    """Evaluate LLM agents on governed workflows: fixed fixtures, deterministic tools, computed
    goldens, hard gates, and keyless record/replay that reproduces scorecards byte for byte.

    \b
    Exit codes: 0 pass / reproduced, 1 gate failed / not reproduced, 2 usage error,
    inconclusive batch or authentication failure, 130/143 interrupted (SIGINT/SIGTERM).
    """


cli.add_command(run)
cli.add_command(rescore)
cli.add_command(list_)
cli.add_command(show)
cli.add_command(goldens)
cli.add_command(guard)
cli.add_command(model)
cli.add_command(fake_provider)
cli.add_command(mutants)
cli.add_command(report)
cli.add_command(history)
cli.add_command(baseline)
cli.add_command(step)
cli.add_command(batch)
cli.add_command(scenarios_cmd, name="scenarios")
cli.add_command(workflow)
workflow.add_command(workflow_batch, name="batch")
workflow.add_command(workflow_run, name="run")
workflow.add_command(users, name="users")
cli.add_command(corpus)
cli.add_command(worker)
cli.add_command(view)
