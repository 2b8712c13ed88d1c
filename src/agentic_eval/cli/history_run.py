"""What ``agentic-eval history`` and ``agentic-eval baseline`` do once their flags are parsed
(imported when a command runs, not for its ``--help``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_eval.cli.common import HistoryProblem
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
from agentic_eval.report import PointView, history_json, history_markdown, point_view
from agentic_eval.report.escape import terminal_text
from agentic_eval.report.text import rate, short_id, when

if TYPE_CHECKING:
    from agentic_eval.store.db import Store


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


def run_history(domains: tuple[str, ...], limit: int, fmt: str) -> int:
    """See :func:`agentic_eval.cli.history.history`."""
    try:
        from agentic_eval.report import open_store

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


def run_promote(run: str) -> int:
    """See :func:`agentic_eval.cli.history.baseline_promote`."""
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


def run_show(domains: tuple[str, ...]) -> int:
    """See :func:`agentic_eval.cli.history.baseline_show`."""
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
