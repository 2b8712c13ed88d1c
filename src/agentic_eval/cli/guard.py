"""``agentic-eval guard``: fail when what git would commit holds real data (the CI check of the
design, and the pre-commit hook of ``.pre-commit-hooks.yaml``)."""

from __future__ import annotations

from pathlib import Path

import click

from agentic_eval.core.realdata import (
    INFLATE_LIMIT,
    MARK,
    PARSE_LIMIT,
    REAL_DATA_KEY,
    GitIndexError,
    fixture_dir_env,
    staged_marked_files,
)
from agentic_eval.core.text import printable

_HELP = f"""Fail (exit 1) when the git index (what a commit takes) holds real data.

\b
It reads the staged copy of every path in the index, not the work tree:
a file staged with its mark and edited afterwards fails, a marked file
not yet staged does not. In CI the index is the checked-out commit; in
a pre-commit hook (see .pre-commit-hooks.yaml) it is what is being
committed, `git commit -a` included. Exit 2: not in a git work tree.

\b
Real fixtures live under EVAL_FIXTURE_DIR, outside the repository. A path
fails when it lies under EVAL_FIXTURE_DIR, or when its staged copy, whatever
its name, carries the key "{MARK}" (every transcript, scorecard,
case file or history entry derived from real fixtures has it) or declares
"{REAL_DATA_KEY}" true (true, 1, or the string true, yes, on or 1):

\b
- read as JSON, JSON lines, YAML, TOML or JSON5, in any mapping, and again
  in any string of it that holds such text (a JSON log line, a notebook cell);
- scanned as text (all that a copy over {PARSE_LIMIT >> 20} MiB or one that does not parse
  gets), after undoing HTML, %XX and backslash escapes, with any spacing: the
  mark's key in any case with a sha256 value, in any key-value form (JSON,
  YAML, TOML, INI, .env, XML, HTML or Markdown tables, CSV columns), or with
  any value inside an object; the declaration inside an object, on a line of
  its own, as an XML element or attribute, or in a table;
- gzip, bzip2 and xz content, UTF-16/32 text and runs of base64 are decoded
  and judged the same way (content past {INFLATE_LIMIT >> 20} MiB cannot be checked: it fails).

\b
Prose and code that only name the keys pass. `make test` (and so CI) runs it.
"""


class _CannotCheck(click.ClickException):
    """The index cannot be read: a usage error (exit 2), not a verdict."""

    exit_code = 2


@click.command(help=_HELP)
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path(),
    show_default=True,
    help="A folder inside the git work tree to check.",
)
def guard(repo: Path) -> int:
    """The ``guard`` command (its help is ``_HELP``)."""
    try:
        scan = staged_marked_files(repo, fixture_dir_env())
    except GitIndexError as exc:
        raise _CannotCheck(str(exc)) from None
    for line in scan.findings:
        click.echo(f"agentic-eval: real data staged in git: {printable(line)}", err=True)
    if scan.findings:
        click.echo(
            f"agentic-eval: error: {len(scan.findings)} staged file(s) hold real data; take them "
            "out of the index (`git rm --cached PATH`, or `git restore --staged PATH` for the "
            f"committed copy); files marked {MARK!r} come from EVAL_FIXTURE_DIR",
            err=True,
        )
        return 1
    click.echo(f"guard: none of {scan.files} files in the git index holds real data")
    return 0
