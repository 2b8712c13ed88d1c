"""``agentic-eval guard``: fail when git tracks real data (the CI check of the design)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import click

from agentic_eval.core.realdata import MARK, fixture_dir_env, marked_files
from agentic_eval.core.text import printable


@click.command()
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path(),
    show_default=True,
    help="A folder inside the git repository to check.",
)
def guard(repo: Path) -> int:
    """Fail (exit 1) when git tracks real data.

    \b
    Real fixtures live under EVAL_FIXTURE_DIR, outside the repository. A tracked file fails the
    guard when it lies under EVAL_FIXTURE_DIR, carries the mark "external_fixtures" (every
    transcript, scorecard, case file or history entry derived from real fixtures does), or
    declares "real_data": true. `make test` (and so CI) runs it.
    """
    try:
        top = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
        listed = subprocess.run(
            ["git", "-C", top, "ls-files", "-z", "--cached"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise click.ClickException(f"cannot list the files git tracks in {repo}: {exc}") from None
    tracked = [p for p in listed.decode("utf-8", "replace").split("\0") if p]
    found = marked_files(Path(top), tracked, fixture_dir_env())
    for line in found:
        click.echo(f"agentic-eval: real data tracked by git: {printable(line)}", err=True)
    if found:
        click.echo(
            f"agentic-eval: error: {len(found)} tracked file(s) hold real data; remove them "
            f"from git (files marked {MARK!r} come from EVAL_FIXTURE_DIR)",
            err=True,
        )
        return 1
    click.echo(f"guard: none of {len(tracked)} tracked files holds real data")
    return 0
