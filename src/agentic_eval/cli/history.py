"""``agentic-eval history`` (the runs of a suite, newest first) and ``agentic-eval baseline``
(promote a known-good run, show the baselines)."""

from __future__ import annotations

import click

from agentic_eval.cli.common import HistoryProblem as HistoryProblem

HISTORY_FORMATS = ("table", "json", "markdown")


@click.command("history")
@click.argument("domains", nargs=-1)
@click.option(
    "--limit",
    type=click.IntRange(0, None),
    default=20,
    show_default=True,
    help="Newest runs to list per suite (0: all).",
)
@click.option(
    "--format", "fmt", type=click.Choice(HISTORY_FORMATS), default="table", show_default=True
)
def history(domains: tuple[str, ...], limit: int, fmt: str) -> int:
    """The runs of DOMAINS (default: every suite with a history), newest first: when, what
    produced each (scripted agent, model via provider, or replay of which recording), pass
    rate, hard-gate failures and gate; the baseline is marked.

    The history is $AGENTIC_EVAL_HISTORY_DIR (default .agentic-eval/history).
    """
    from agentic_eval.cli.history_run import run_history

    return run_history(domains, limit, fmt)


@click.group("baseline")
def baseline() -> None:
    """Mark known-good runs; ``report --base baseline`` diffs against them."""


@baseline.command("promote")
@click.argument("run")
def baseline_promote(run: str) -> int:
    """Make RUN (a run id, a unique prefix of one, or a history entry file) the baseline of its
    series (its suite, agent, approval mode and producer kind), written to
    <history>/<suite>/baselines/<agent>.<mode>.<kind>.json (commit it with the history)."""
    from agentic_eval.cli.history_run import run_promote

    return run_promote(run)


@baseline.command("show")
@click.argument("domains", nargs=-1)
def baseline_show(domains: tuple[str, ...]) -> int:
    """The baseline of each series of DOMAINS (default: every suite with a history); a series
    without one says so."""
    from agentic_eval.cli.history_run import run_show

    return run_show(domains)
