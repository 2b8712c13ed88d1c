"""``agentic-eval export``: a stored run in another tool's format."""

from __future__ import annotations

from pathlib import Path

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.core.text import one_line, printable


@click.group("export")
def export() -> None:
    """Write a stored run in another tool's format (Inspect eval logs)."""


@export.command("inspect")
@click.option("--run", "run_id", default=None, metavar="ID", help="The run to export.")
@click.option("--latest", is_flag=True, help="Export the store's latest run.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["eval", "json"]),
    default="eval",
    show_default=True,
    help="Inspect's zip log (.eval) or one JSON document (.json).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the log into (created).",
)
def inspect_cmd(run_id: str | None, latest: bool, fmt: str, out_dir: Path) -> int:
    """Write one run as an Inspect eval log: a sample per case and epoch with its messages,
    tool calls, results and approval events, our checks as scores, the gate as metadata.
    Prints the file written; open it with `inspect view --log-dir DIR`.

    \b
    Example: agentic-eval export inspect --latest --out logs/
    """
    from agentic_eval.exports.inspect import ExportError, UnknownRunError, export_run, open_store
    from agentic_eval.store.db import StoreError

    if (run_id is None) == (not latest):
        raise click.UsageError("give exactly one of --run ID and --latest")
    try:
        store = open_store()
    except UnknownRunError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    try:
        path = export_run(store, run_id, out_dir, "json" if fmt == "json" else "eval")
    except UnknownRunError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except (ExportError, StoreError, OSError) as exc:
        raise CannotRun(one_line(str(exc))) from None
    finally:
        store.close()
    click.echo(printable(str(path)))
    return 0
