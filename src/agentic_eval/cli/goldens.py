"""``agentic-eval goldens write|check``: the committed case files and their drift guard."""

from __future__ import annotations

from pathlib import Path

import click

from agentic_eval.cli.common import InputError, case_errors, resolve_domains
from agentic_eval.core.text import one_line


@click.group()
def goldens() -> None:
    """Generate case files from each domain's answer key, or check them for drift."""


@goldens.command("write")
@click.argument("domains", nargs=-1)
@click.option(
    "--output",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Write <DIR>/<domain>/cases.json instead of the committed case file. Required while "
    "EVAL_FIXTURE_DIR supplies real fixtures, and then it must lie outside any git repository.",
)
def write(domains: tuple[str, ...], output: Path | None) -> int:
    """Recompute every case of DOMAINS (default: all) and write the committed case files."""
    from agentic_eval.core.realdata import inside_git_work_tree
    from agentic_eval.evaluation.goldens import write_goldens

    for domain in resolve_domains(domains):
        if domain.case_file_path() is None:
            click.echo(f"{domain.name}: builds its cases in memory (no case file to write)")
            continue
        if domain.external_fixtures() and (output is None or inside_git_work_tree(output)):
            raise click.UsageError(
                f"{domain.name} is using real fixtures from EVAL_FIXTURE_DIR: refusing to write "
                "its cases into a repository; pass --output DIR outside any git repository"
            )
        try:
            path = write_goldens(domain, output)
            n = len(domain.build_cases())
        except case_errors() as exc:
            raise InputError(one_line(str(exc))) from None
        click.echo(f"{domain.name}: wrote {n} cases to {path}")
    return 0


@goldens.command("check")
@click.argument("domains", nargs=-1)
def check(domains: tuple[str, ...]) -> int:
    """Recompute every expectation of DOMAINS (default: all); exit 1 on any difference."""
    from agentic_eval.evaluation.goldens import check_goldens

    failed = False
    for domain in resolve_domains(domains):
        try:
            problems = check_goldens(domain)
        except case_errors() as exc:
            problems = [one_line(str(exc))]
        for line in problems:
            click.echo(line, err=True)
        if problems:
            failed = True
        else:
            click.echo(f"{domain.name}: goldens match the answer key")
    return 1 if failed else 0
