"""What ``agentic-eval report`` does once its flags are parsed: pick each series' runs from the
history, check them against the store, and render (imported when the command runs, not for its
``--help``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_eval.cli.common import CannotRun, HistoryProblem
from agentic_eval.core.realdata import inside_git_work_tree
from agentic_eval.core.text import printable
from agentic_eval.history import (
    BASELINE_REF,
    HistoryError,
    StoredEntry,
    check_agents,
    diff_runs,
    find_run,
    history_dir,
    history_suites,
    load_history,
    pick_series,
    read_baselines,
)
from agentic_eval.recordings.files import write_atomic
from agentic_eval.report import (
    ChangeView,
    ReportView,
    SuiteReport,
    counts_line,
    flip_lines,
    headline,
    report_html,
    report_json,
    report_junit,
    report_markdown,
    run_line,
    suite_report,
)


def _known_domains() -> set[str]:
    from agentic_eval.domains.registry import all_domains

    try:
        return set(all_domains())
    except Exception:  # a broken plugin must not stop a report over files
        return set()


def _suites(domains: tuple[str, ...]) -> list[str]:
    have = history_suites()
    if not domains:
        return have
    known = _known_domains()
    for name in domains:
        if name not in have and name not in known:
            listed = ", ".join(have) or "none"
            raise click.UsageError(
                f"no history for {name!r} under {history_dir()} (suites with history: {listed})"
            )
    return list(dict.fromkeys(domains))


def _named(ref: str | None, suites: list[str] | None) -> StoredEntry | None:
    if ref is None or ref == BASELINE_REF:
        return None
    return find_run(ref, suites if suites else None)


@dataclass(frozen=True)
class Doubts:
    """What makes the history read doubtful: broken chains, entries the store contradicts."""

    chain: tuple[str, ...] = ()
    store: tuple[str, ...] = ()
    real_fixtures: bool = False
    """A run compared used real fixtures (EVAL_FIXTURE_DIR): its documents hold their values."""


def build_report(
    domains: tuple[str, ...],
    base_ref: str | None,
    head_ref: str | None,
    transcripts: bool,
    agents: tuple[str, ...] = (),
) -> ReportView:
    """Resolve the runs and build the report.

    Raises:
        click.UsageError: For runs of different suites, or a suite outside DOMAINS.
        HistoryError: For unreadable history files and runs that cannot be found.
    """
    return checked_report(domains, base_ref, head_ref, transcripts, agents)[0]


def checked_report(
    domains: tuple[str, ...],
    base_ref: str | None,
    head_ref: str | None,
    transcripts: bool,
    agents: tuple[str, ...] = (),
) -> tuple[ReportView, Doubts]:
    """:func:`build_report`, and what the history's chains and the store say against it (the
    runs compared are checked against the store's sample rows and its copy of their entries)."""
    suites = _suites(domains)
    named: dict[str, StoredEntry] = {}
    for side, ref in (("base", base_ref), ("head", head_ref)):
        found = _named(ref, list(domains) or None)
        if found is not None:
            named[side] = found
    picked = {s.entry.suite for s in named.values()}
    if len(picked) > 1:
        raise click.UsageError(f"--base and --head are runs of different suites: {sorted(picked)}")
    if picked:
        (only,) = picked
        if domains and only not in domains:
            raise click.UsageError(f"the run given is a run of {only}, not of {', '.join(domains)}")
        suites = [only]
    from agentic_eval.history.verify import evidence_problems
    from agentic_eval.report import TranscriptFinder, open_store

    store = open_store()
    finder = TranscriptFinder(store) if transcripts else None
    reports: list[SuiteReport] = []
    chain: list[str] = []
    contradicted: list[str] = []
    real = False
    histories = {suite: load_history(suite) for suite in suites}
    if agents:
        check_agents(agents, histories)
    for suite in suites:
        history = histories[suite]
        baselines = read_baselines(suite, history) if history else {}
        picks = pick_series(
            suite, history, baselines, base_ref=base_ref, head_ref=head_ref, named=named,
            agents=agents,
        )  # fmt: skip
        if not picks and not agents:
            reports.append(
                suite_report(
                    suite, [], head=None, note=f"no runs in the history under {history_dir()}"
                )
            )
        compared = [s for p in picks for s in (p.head, p.base) if s is not None]
        real = real or any(s.entry.scorecard.external_fixtures for s in compared)
        broken, against = evidence_problems(
            history, store, compared, suite=suite, root=history_dir()
        )
        chain.extend(f"{suite}: {line}" for line in broken)
        contradicted.extend(f"{suite}: {line}" for line in against)
        for p in picks:
            diff = None
            if p.head is not None and p.base is not None:
                diff = (diff_runs(p.base.entry, p.head.entry), p.base)
            reports.append(
                suite_report(
                    suite,
                    p.history,
                    head=p.head,
                    diff=diff,
                    note=p.note,
                    baseline=p.baseline,
                    transcripts=finder,
                    series=p.label,
                )
            )
    return ReportView(suites=tuple(reports)), Doubts(tuple(chain), tuple(contradicted), real)


def _console() -> Console:
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=200)


def _say(console: Console, text: str, style: str = "") -> None:
    console.print(Text(printable(text), style=style))


def print_report(view: ReportView, console: Console | None = None) -> None:
    """The report as terminal text and tables."""
    console = console or _console()
    if not view.suites:
        _say(console, f"no suite has any history under {history_dir()}")
    for s in view.suites:
        d = s.diff
        if d is None:
            _say(console, f"{s.title}: {s.note}", "bold")
            if s.head is not None:
                _say(console, f"  latest {run_line(s.head.summary)}")
            continue
        _say(console, f"{s.title}: {headline(d.counts)}", "bold")
        _say(console, f"  base {run_line(d.base)}")
        _say(console, f"  head {run_line(d.head)}")
        if d.replay:
            _say(console, f"  note: {d.replay}", "yellow")
        causes = "; ".join(d.causes) or "nothing (same configuration and fingerprints)"
        _say(console, f"  what else changed: {causes}")
        _say(console, f"  {counts_line(d.counts)}")
        _changes(console, [c for c in d.changes if c.kind != "still_failing"])
        failing = [c for c in d.changes if c.kind == "still_failing"]
        if failing:
            moved = [c for c in failing if c.flips or c.note]
            _say(console, f"  still failing ({len(failing)}): {', '.join(c.name for c in failing)}")
            if moved:
                _say(console, "  still failing, but failing differently:")
                _changes(console, moved)
        console.print()


def _changes(console: Console, rows: Sequence[ChangeView]) -> None:
    if not rows:
        return
    table = Table(show_lines=False, pad_edge=False)
    for head in ("case", "change", "before -> after", "checks flipped (why)"):
        table.add_column(head, overflow="fold")
    styles = {"regressed": "red", "improved": "green"}
    for c in rows:
        table.add_row(
            Text(printable(c.name)),
            Text(c.kind.replace("_", " "), style=styles.get(c.kind, "yellow")),
            Text(f"{c.before} -> {c.after}"),
            Text(printable("\n".join(flip_lines(c)) or "-")),
        )
    console.print(table)


def _write(path: Path, text: str) -> None:
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise CannotRun(f"cannot write {path}: {exc.strerror or exc}") from None


def run_report(
    domains: tuple[str, ...],
    base_ref: str | None,
    head_ref: str | None,
    agents: tuple[str, ...],
    fail_on_regression: bool,
    fmt: str,
    output: Path | None,
    html_path: Path | None,
) -> int:
    """The command's work: see :func:`agentic_eval.cli.report.report`."""
    for ref in (base_ref, head_ref):
        if ref is not None and not ref.strip():
            raise click.UsageError("--base/--head must not be empty")
    try:
        view, doubts = checked_report(domains, base_ref, head_ref, html_path is not None, agents)
    except HistoryError as exc:
        raise HistoryProblem(printable(str(exc))) from None
    for path in (output, html_path) if doubts.real_fixtures else ():
        if path is not None and inside_git_work_tree(path):
            raise click.UsageError(
                f"a run reported on used real fixtures from EVAL_FIXTURE_DIR: refusing to write "
                f"{path} inside a git repository (the document holds their values); write it "
                "outside any repository"
            )
    for line in doubts.chain:
        click.echo(f"agentic-eval: warning: history chain: {printable(line)}", err=True)
    if doubts.store:
        for line in doubts.store[1:]:
            click.echo(f"agentic-eval: error: {printable(line)}", err=True)
        raise HistoryProblem(
            f"{printable(doubts.store[0])}: the history disagrees with the store that recorded "
            "it (edited or deleted after the run); refusing to report on it"
        )
    renderers = {"json": report_json, "markdown": report_markdown, "junit": report_junit}
    if output is not None:
        _write(output, renderers["json" if fmt == "table" else fmt](view))
    elif fmt != "table":
        click.echo(renderers[fmt](view), nl=False)
    if fmt == "table" or output is not None:
        print_report(view)
    if html_path is not None:
        _write(html_path, report_html(view))
    if fail_on_regression:
        if doubts.chain:
            click.echo(
                "agentic-eval: error: --fail-on-regression: the history chain is broken (see "
                "above): an entry was deleted, reordered or edited; not gating on it",
                err=True,
            )
            return 2
        return _gate(view, domains)
    return 0


def _gate(view: ReportView, domains: tuple[str, ...]) -> int:
    """--fail-on-regression: 1 when a case regressed; 2 when nothing was compared (no history,
    no series with two runs or a baseline, or a named suite none of whose series was compared):
    a regression gate never passes on nothing. A series with nothing to compare beside series
    that were compared is a warning."""
    missing = [s for s in view.suites if s.diff is None]
    compared = {s.suite for s in view.suites if s.diff is not None}
    for s in missing:
        level = "error" if s.suite not in compared and (domains or not compared) else "warning"
        click.echo(
            f"agentic-eval: {level}: --fail-on-regression: {s.title}: nothing compared "
            f"({printable(s.note)})",
            err=True,
        )
    if not view.suites:
        click.echo(
            f"agentic-eval: error: --fail-on-regression: no runs in the history under "
            f"{history_dir()}: nothing to compare",
            err=True,
        )
        return 2
    if view.regressions:
        click.echo(f"agentic-eval: {view.regressions} case(s) regressed", err=True)
        return 1
    if not compared or any(d not in compared for d in domains):
        return 2
    return 0
