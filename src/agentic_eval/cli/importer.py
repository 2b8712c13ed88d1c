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
    help="Folder to write tau_bench_eval.py into (created).",
)
def tau_bench(path: Path, into: Path) -> int:
    """Write DIR/tau_bench_eval.py, an eval file whose domain is tau-bench's retail environment
    read from the checkout at PATH (its database, policy and test tasks; nothing is copied).
    Every task is checked and its answer computed first.

    \b
    Then:  agentic-eval run DIR/tau_bench_eval.py --backend scripted --agent gold
           agentic-eval batch DIR/tau_bench_eval.py --samples 3      # pass^k per task
    """
    from agentic_eval.domains.taubench import TauBenchError, write_eval_file

    try:
        written, domain = write_eval_file(path, into)
    except TauBenchError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    n = len(domain.build_cases())
    click.echo(f"{domain.name}: {n} tasks from {domain.root}")
    click.echo(f"wrote {written}")
    return 0
