"""``agentic-eval import``: another benchmark's checkout as domains (tau-bench)."""

from __future__ import annotations

from pathlib import Path

import click

from agentic_eval.core.text import one_line


@click.group("import")
def import_() -> None:
    """Import another benchmark as domains, read from its checkout (tau-bench)."""


@import_.command("tau-bench")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--into",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Folder to write the eval file into (created).",
)
@click.option(
    "--env",
    type=click.Choice(["retail", "airline"]),
    default=None,
    help="One environment, written to DIR/tau_bench_<env>_eval.py  [default: every environment "
    "the checkout holds, in DIR/tau_bench_eval.py]",
)
def tau_bench(path: Path, into: Path, env: str | None) -> int:
    """Write DIR/tau_bench_eval.py, an eval file whose domains are tau-bench's retail and airline
    environments read from the checkout at PATH (their databases, policies and test tasks;
    nothing is copied); with --env, DIR/tau_bench_<env>_eval.py defining that one alone (batch
    and fake-provider --responder take an eval file defining one domain). Every task is checked
    and its answer computed first.

    \b
    Then:  agentic-eval run DIR/tau_bench_eval.py --backend scripted --agent gold
           agentic-eval import tau-bench PATH --into DIR --env airline
           agentic-eval batch DIR/tau_bench_airline_eval.py --samples 3   # pass^k per task
    """
    from agentic_eval.domains.taubench import TauBenchError, write_eval_file

    try:
        imported = write_eval_file(path, into, env)
    except TauBenchError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    for domain, fit in zip(imported.domains, imported.fits, strict=True):
        click.echo(f"{domain.name}: {fit.tasks} tasks from {domain.root}")
        for note in fit.notes():
            click.echo(f"  {note}")
    click.echo(f"{'replaced' if imported.replaced else 'wrote'} {imported.path}")
    return 0
