"""The command group and its sub-commands, each imported only when it runs (:mod:`.lazy`)."""

from __future__ import annotations

import click

from agentic_eval._version import __version__
from agentic_eval.cli.lazy import LazyCommand, LazyGroup

COMMANDS: dict[str, LazyCommand] = {
    "run": LazyCommand("agentic_eval.cli.run:run", "Run DOMAINS (default: every domain)."),
    "batch": LazyCommand(
        "agentic_eval.cli.batch:batch",
        "Run N samples of DOMAIN's cases and gate on the failure rate, read from the store.",
    ),
    "report": LazyCommand(
        "agentic_eval.cli.report:report",
        "Diff the two most recent runs of each series of DOMAINS",
    ),
    "history": LazyCommand(
        "agentic_eval.cli.history:history",
        "The runs of DOMAINS (default: every suite with a history), newest first",
    ),
    "baseline": LazyCommand(
        "agentic_eval.cli.history:baseline",
        "Mark known-good runs; ``report --base baseline`` diffs against them.",
    ),
    "list": LazyCommand(
        "agentic_eval.cli.listing:list_", "List domains, agents, cases or recordings."
    ),
    "show": LazyCommand(
        "agentic_eval.cli.listing:show",
        "Show one recorded transcript turn by turn, with its checks.",
    ),
    "rescore": LazyCommand(
        "agentic_eval.cli.rescore:rescore",
        "Re-judge the recordings of DOMAINS (default: every recorded domain) under today's checks.",
    ),
    "goldens": LazyCommand(
        "agentic_eval.cli.goldens:goldens",
        "Generate case files from each domain's answer key, or check them for drift.",
    ),
    "guard": LazyCommand(
        "agentic_eval.cli.guard:guard",
        "Fail (exit 1) when the git index (what a commit takes) holds real data.",
    ),
    "mutants": LazyCommand(
        "agentic_eval.cli.mutants:mutants",
        "Run the unsafe mutants of DOMAINS (default: all) and print the kill matrix.",
    ),
    "scenarios": LazyCommand(
        "agentic_eval.cli.scenarios:scenarios_cmd",
        "Replay every recorded workflow scenario of every agent, keyless",
    ),
    "step": LazyCommand(
        "agentic_eval.cli.step:step", "Run one workflow step once, verbosely, inside a real job."
    ),
    "workflow": LazyCommand(
        "agentic_eval.cli.workflow:workflow", "Operate the governed workflow's store"
    ),
    "corpus": LazyCommand(
        "agentic_eval.cli.corpus:corpus",
        "The corpus: every workflow step an operator decided, on jobs a human worked",
    ),
    "view": LazyCommand(
        "agentic_eval.cli.view:view",
        "Look at the store's runs in a browser: serve pages on a loopback address until Ctrl-C.",
    ),
    "export": LazyCommand(
        "agentic_eval.cli.export:export",
        "Write a stored run in another tool's format (Inspect eval logs).",
    ),
    "worker": LazyCommand(
        "agentic_eval.cli.worker:worker",
        "Run batch samples sent by `batch --executor celery`, until stopped.",
    ),
    "model": LazyCommand(
        "agentic_eval.cli.model:model",
        "Serve a pinned local LLM (llama.cpp, CPU) for live runs with no key and no internet.",
    ),
    "import": LazyCommand(
        "agentic_eval.cli.importer:import_",
        "Import another benchmark as domains, read from its checkout (tau-bench).",
    ),
    "fake-provider": LazyCommand(
        "agentic_eval.cli.fake_provider:fake_provider",
        "Serve a fake model provider (Anthropic and OpenAI wire formats) until Ctrl-C or SIGTERM.",
    ),
}
"""Every sub-command: where it lives, and the start of its help (a test holds them equal)."""


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="agentic-eval", message="%(prog)s %(version)s")
def cli() -> None:
    """Evaluate LLM agents on governed workflows: fixed fixtures, deterministic tools, computed
    goldens, hard gates, and keyless record/replay that reproduces scorecards byte for byte.

    \b
    Exit codes: 0 pass / reproduced, 1 gate failed / not reproduced, 2 usage error,
    inconclusive batch, a run that cannot start (missing or refused key, missing SDK),
    130/143 interrupted (SIGINT/SIGTERM).
    """
