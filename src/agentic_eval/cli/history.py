"""``agentic-eval history`` (the runs of a suite, newest first) and ``agentic-eval baseline``
(promote a known-good run, show the baselines)."""

from __future__ import annotations

from collections.abc import Sequence

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_eval.core.text import printable
from agentic_eval.history import (
    HistoryError,
    StoredEntry,
    baseline_ids,
    describe_producer,
    find_run,
    group_series,
    history_dir,
    history_suites,
    load_history,
    promote,
    read_baselines,
    series_label,
)
from agentic_eval.history.entry import series_key
from agentic_eval.report import PointView, history_json, history_markdown, open_store, point_view
from agentic_eval.report.escape import terminal_text
from agentic_eval.report.text import rate, short_id, when
from agentic_eval.store.db import Store

HISTORY_FORMATS = ("table", "json", "markdown")


class HistoryProblem(click.ClickException):
    """An unreadable history file or a run that cannot be found: exit 2 (nothing compared)."""

    exit_code = 2


def _suites(domains: tuple[str, ...]) -> list[str]:
    have = history_suites()
    for name in domains:
        if name not in have:
            listed = ", ".join(have) or "none"
            raise click.UsageError(
                f"no history for {name!r} under {history_dir()} (suites with history: {listed})"
            )
    return list(dict.fromkeys(domains)) or have


def _points(suite: str, limit: int, store: Store | None) -> list[PointView]:
    stored = load_history(suite)
    _warn_doubts(suite, stored, stored[-limit:] if limit else stored, store)
    marked: set[str] = baseline_ids(suite, stored) if stored else set()
    newest = list(reversed(stored))
    if limit:
        newest = newest[:limit]
    return [point_view(s, marked) for s in newest]


def _notes(p: PointView) -> str:
    notes: list[str] = []
    if p.baseline:
        notes.append("baseline")
    if p.reproduced is not None:
        notes.append("reproduced" if p.reproduced else "NOT reproduced")
    if p.status != "finished":
        notes.append(p.status)
    return ", ".join(notes)


def _table(suite: str, points: Sequence[PointView]) -> Table:
    title = Text(terminal_text(f"{suite}: {len(points)} run(s), newest first"))
    table = Table(title=title, title_justify="left")
    for head in ("started", "run", "produced by", "passed", "hard-gate failures", "gate", ""):
        table.add_column(head, overflow="fold")
    colours = {"PASS": "green", "FAIL": "red"}
    for p in points:
        table.add_row(
            Text(when(p.started_at)),
            Text(short_id(p.run_id)),
            Text(printable(p.producer)),
            Text(rate(p.passed, p.samples)),
            Text(str(p.hard_gate_failures), style="red" if p.hard_gate_failures else ""),
            Text(p.verdict, style=colours.get(p.verdict, "yellow")),
            Text(_notes(p)),
        )
    return table


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
    try:
        suites = _suites(domains)
        store = open_store() if suites else None  # opened once, for every suite's check
        listing = [(suite, _points(suite, limit, store)) for suite in suites]
    except HistoryError as exc:
        raise HistoryProblem(printable(str(exc))) from None
    if fmt == "json":
        click.echo(history_json(listing), nl=False)
        return 0
    if fmt == "markdown":
        click.echo(
            "\n".join(history_markdown(suite, points) for suite, points in listing), nl=False
        )
        return 0
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=200)
    if not listing:
        console.print(Text(f"no history under {history_dir()}"))
    for suite, points in listing:
        console.print(_table(suite, points))
    return 0


def _warn_doubts(
    suite: str, stored: list[StoredEntry], listed: list[StoredEntry], store: Store | None
) -> None:
    """One warning line per broken chain link and per listed entry the store contradicts."""
    from agentic_eval.history.verify import evidence_problems

    chain, against = evidence_problems(stored, store, listed, suite=suite, root=history_dir())
    for line in chain:
        click.echo(f"agentic-eval: warning: history chain: {suite}: {printable(line)}", err=True)
    for line in against:
        click.echo(
            f"agentic-eval: warning: {suite}: {printable(line)}: the history disagrees with the "
            "store that recorded it",
            err=True,
        )


@click.group("baseline")
def baseline() -> None:
    """Mark known-good runs; ``report --base baseline`` diffs against them."""


@baseline.command("promote")
@click.argument("run")
def baseline_promote(run: str) -> int:
    """Make RUN (a run id, a unique prefix of one, or a history entry file) the baseline of its
    series (its suite, agent, approval mode and producer kind), written to
    <history>/<suite>/baselines/<agent>.<mode>.<kind>.json (commit it with the history)."""
    try:
        stored: StoredEntry = find_run(run)
        path, marker = promote(stored)
    except HistoryError as exc:
        raise HistoryProblem(printable(str(exc))) from None
    e = stored.entry
    click.echo(
        printable(
            f"{e.suite} / {series_label(series_key(e))}: baseline is now run {marker.run_id} "
            f"({when(e.started_at.isoformat())}, {describe_producer(e.producer)}, "
            f"{rate(e.passed, e.samples)} passed, {e.gate.verdict}); written to {path}"
        )
    )
    return 0


@baseline.command("show")
@click.argument("domains", nargs=-1)
def baseline_show(domains: tuple[str, ...]) -> int:
    """The baseline of each series of DOMAINS (default: every suite with a history); a series
    without one says so."""
    try:
        for suite in _suites(domains):
            history = load_history(suite)
            marked = read_baselines(suite, history)
            for key in group_series(history):
                title = f"{suite} / {series_label(key)}"
                found = marked.get(key)
                if found is None:
                    click.echo(printable(f"{title}: no baseline"))
                    continue
                e = found.entry
                click.echo(
                    printable(
                        f"{title}: run {e.run_id} ({when(e.started_at.isoformat())}, "
                        f"{describe_producer(e.producer)}, {rate(e.passed, e.samples)} passed, "
                        f"{e.gate.verdict})"
                    )
                )
    except HistoryError as exc:
        raise HistoryProblem(printable(str(exc))) from None
    return 0
