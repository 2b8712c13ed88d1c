"""``agentic-eval view``: a local web viewer over the store, on a loopback address only."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.core.text import one_line
from agentic_eval.store.home import URL_ENV

if TYPE_CHECKING:
    from agentic_eval.store.db import Store


def _store(url: str | None) -> Store:
    """The store at ``url`` (default: the configured one); an SQLite file is never created."""
    from agentic_eval.store.db import Store, StoreError, database_url

    url = url or database_url()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise CannotRun(
            f"no store at {url.removeprefix('sqlite:///')}: run something first, or pass "
            f"--database (or set {URL_ENV})"
        )
    try:
        store = Store(url)
        store.migrate()
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    return store


@click.command("view")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to listen on (127.0.0.1, ::1 or localhost); any other is refused.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on; 0 picks a free one.",
)
@click.option(
    "--database",
    "database",
    default=None,
    metavar="URL",
    help=f"The store's SQLAlchemy URL (default: ${URL_ENV}, else the SQLite file under "
    "$AGENTIC_EVAL_HOME).",
)
@click.option("--quiet", is_flag=True, help="Do not log each request on stderr.")
def view(host: str, port: int, database: str | None, quiet: bool) -> int:
    """Look at the store's runs in a browser: serve pages on a loopback address until Ctrl-C.

    \b
    /                    runs grouped by series (suite, agent, approval mode, replay/scripted/
                         model): the gate and a sparkline of the pass rate over its runs
    /run/ID              a run: gate, confidence bound and pass^k, samples failed first
    /sample/ID           a sample: checks (expected beside actual), tokens, time, and its
                         transcript turn by turn (tool calls, blocked attempts, what executed)
    /diff?base=A&head=B  two runs compared case by case, as `agentic-eval report` compares them
    \b
    Examples:
      agentic-eval view
      agentic-eval view --port 0 --database postgresql+psycopg://eval@db.local/evals
    """
    from agentic_eval.report.web import NotLoopback, ViewerServer
    from agentic_eval.store.db import safe_url

    if database is not None and not database.strip():
        raise click.UsageError("--database must not be empty")
    try:
        ViewerServer.check_host(host)
    except NotLoopback:
        raise click.UsageError(
            f"--host {host!r} is not a loopback address: the viewer serves this machine only "
            "(127.0.0.1, ::1 or localhost)"
        ) from None
    store = _store(database)

    def log(line: str) -> None:
        click.echo(f"agentic-eval view: {one_line(line)}", err=True)

    try:
        server = ViewerServer(store, host, port, log=None if quiet else log)
    except OSError as exc:
        store.close()
        raise CannotRun(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    shown = store.url.removeprefix("sqlite:///") if store.url.startswith("sqlite:///") else None
    click.echo(f"agentic-eval view: {shown or safe_url(store.url)} at {server.url} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("agentic-eval view: stopped", err=True)
    finally:
        server.server_close()
        store.close()
    return 0
