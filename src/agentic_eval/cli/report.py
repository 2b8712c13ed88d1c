"""``agentic-eval report``: diff two runs per series from the history; terminal, JSON, Markdown,
JUnit XML and HTML output; ``--fail-on-regression`` for CI."""

from __future__ import annotations

from pathlib import Path

import click

FORMATS = ("table", "json", "markdown", "junit")


@click.command("report")
@click.argument("domains", nargs=-1)
@click.option(
    "--base",
    "base_ref",
    default=None,
    metavar="RUN",
    help="The run to compare against: a run id (or a unique prefix), a history entry file, "
    "or 'baseline' (each series' promoted known-good run). Default: the run before the head "
    "in the same series.",
)
@click.option(
    "--head",
    "head_ref",
    default=None,
    metavar="RUN",
    help="The run to check: a run id, a file or 'baseline'. Default: each series' newest run.",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="AGENT",
    help="Only the series of this agent (the label its runs are filed under); repeat for more.",
)
@click.option(
    "--fail-on-regression", is_flag=True, help="Exit 1 when any case regressed (passed -> failed)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="table: terminal text; json (reads back), markdown (a pull-request comment), junit "
    "(JUnit XML: one testcase per case, failed checks as failure messages).",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the --format document (json when the format is table) to this file; the table "
    "prints instead of the document, as for run.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write a self-contained HTML report: pass-rate history plot, the diff, and each "
    "failed case's checks and transcript.",
)
def report(
    domains: tuple[str, ...],
    base_ref: str | None,
    head_ref: str | None,
    agents: tuple[str, ...],
    fail_on_regression: bool,
    fmt: str,
    output: Path | None,
    html_path: Path | None,
) -> int:
    """Diff the two most recent runs of each series of DOMAINS (default: every suite with a
    history). A series is one agent's runs of a suite in one approval mode, produced the same
    way (scripted, model or replay): each agent is compared with its own previous run, never
    with another agent's.

    \b
    Per case: regressed (passed -> failed), improved, still failing, new, removed,
    inconclusive (transient); for each, the checks that flipped and why. Says what else
    differs between the runs (agent, model, parameters, prompt, tools, fixtures, answer key,
    version, commit) and when runs are replays, so a replay is never taken for new agent
    behaviour. The history is $AGENTIC_EVAL_HISTORY_DIR (default .agentic-eval/history).
    With --base baseline a series without a baseline is reported as such; the others are
    compared.
    Exit codes: 0, 1 with --fail-on-regression when a case regressed, 2 for usage errors,
    unreadable or inconsistent history files, and --fail-on-regression with nothing to compare
    (no history, no series compared, or a named suite none of whose series was compared).
    \b
    Examples:
      agentic-eval report retail_ops
      agentic-eval report retail_ops --agent reference
      agentic-eval report retail_ops --base baseline --fail-on-regression
      agentic-eval report --format markdown --output report.md --html report.html
    """
    from agentic_eval.cli.report_run import run_report

    return run_report(
        domains, base_ref, head_ref, agents, fail_on_regression, fmt, output, html_path
    )
