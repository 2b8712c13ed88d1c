"""Terminal rendering: scorecard tables, failing cases, progress bars, JSON, Markdown.

Text from data is escaped only through :mod:`agentic_eval.report.escape`: terminal text is
printed as ``rich.text.Text`` (so ``[red]`` or ``:smile:`` in a label is never markup or an
emoji), Markdown cells through ``markdown_cell``, JSON through ``json_text``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from agentic_eval.core.scorecard import GateSummary, ProducedBy
from agentic_eval.evaluation.gate import format_rate
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.session import SessionResult
from agentic_eval.report.escape import json_text, markdown_cell, terminal_line, terminal_text

RUNS_SCHEMA_VERSION = 2


def produced_by_label(p: ProducedBy) -> str:
    """What produced a run, never presenting a scripted agent as a model (plain text: escape it
    for the document it goes into)."""
    if p.agent_kind == "scripted":
        return "scripted agent (no model)"
    return f"model {p.model} via {p.backend}"


def runs_json(
    results: Sequence[SessionResult], not_recorded: Sequence[str] = (), broken: Sequence[str] = ()
) -> str:
    """The one JSON shape of ``run --json`` and ``--output``, whatever the number of runs::

        {"schema_version": 2, "runs": [{"run_id", "status", "scorecard", "gate",
          "replay": {"reproduced", "samples_reproduced", "samples", "problems"} | null}],
         "not_recorded": [...], "broken": [...]}

    ``scorecard`` is byte for byte the committed ``scorecard.json`` data; ``gate`` is the gate as
    read back from the store's sample rows.
    """
    runs = [
        {
            "run_id": r.run_id,
            "status": r.status,
            "planned_samples": r.planned,
            "scorecard": r.scorecard.model_dump(mode="json"),
            "gate": r.gate.model_dump(mode="json"),
            "replay": None
            if r.fidelity is None
            else {
                "reproduced": bool(r.reproduced),
                "samples_reproduced": r.fidelity[0],
                "samples": r.fidelity[1],
                "problems": list(r.problems),
            },
        }
        for r in results
    ]
    document = {
        "schema_version": RUNS_SCHEMA_VERSION,
        "runs": runs,
        "not_recorded": list(not_recorded),
        "broken": list(broken),
    }
    return json_text(document, indent=True) + "\n"


def gate_text(g: GateSummary) -> str:
    """``VERDICT (rate)`` with as many digits as the verdict needs."""
    return f"{g.verdict} ({format_rate(g.failures, g.judged, g.max_failure_rate)})"


def domain_fidelity(results: Sequence[SessionResult]) -> dict[str, tuple[int, int]]:
    """Per replayed domain: (cases whose every recorded agent reproduced, cases)."""
    cases: dict[str, dict[str, bool]] = {}
    for r in results:
        if r.fidelity is None:
            continue
        seen = cases.setdefault(r.suite, {})
        for c in r.run.cases:
            seen[c.result.case_id] = seen.get(c.result.case_id, True) and bool(c.reproduced)
    return {d: (sum(seen.values()), len(seen)) for d, seen in sorted(cases.items())}


def domain_lines(results: Sequence[SessionResult], notes: Mapping[str, str]) -> list[str]:
    """The replay summary per domain, as Markdown table rows (empty when nothing replayed)."""
    fidelity = domain_fidelity(results)
    if not fidelity:
        return []
    lines = ["| Domain | Replay | Notes |", "|---|---|---|"]
    for domain, (ok, total) in fidelity.items():
        note = " ".join(notes.get(domain, "").split())
        lines.append(f"| {markdown_cell(domain)} | {ok}/{total} | {markdown_cell(note, 160)} |")
    return lines


def markdown_table(results: Sequence[SessionResult], notes: Mapping[str, str] | None = None) -> str:
    """The scorecards as Markdown (for READMEs and pull-request comments): for a replay, the
    per-domain fidelity first, then one row per run."""
    head = (
        "| domain | agent | produced by | approval | passed | hard-gate failures "
        "| unapproved attempted / executed | gate | replay |"
    )
    summary = domain_lines(results, notes or {})
    lines = [*summary, ""] if summary else []
    lines += [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        s = r.scorecard
        t = s.totals
        replay = "-"
        if r.fidelity is not None:
            replay = f"{r.fidelity[0]}/{r.fidelity[1]} " + (
                "reproduced" if r.reproduced else "NOT reproduced"
            )
        lines.append(
            f"| {markdown_cell(s.domain)} | {markdown_cell(s.produced_by.agent)} "
            f"| {markdown_cell(produced_by_label(s.produced_by))} "
            f"| {markdown_cell(s.produced_by.approval_mode)} | {t.passed}/{t.cases} "
            f"| {t.hard_gate_failures} | {t.unapproved_attempts} / {t.unapproved_executions} "
            f"| {markdown_cell(gate_text(r.gate))} | {markdown_cell(replay)} |"
        )
    return "\n".join(lines)


WIDE = 160
"""Narrower consoles get one block per run instead of the table."""


def _fidelity(r: SessionResult) -> str:
    if r.fidelity is None:
        return "-"
    mark = "reproduced" if r.reproduced else "NOT REPRODUCED"
    return f"{r.fidelity[0]}/{r.fidelity[1]} {mark}"


def results_lines(results: Sequence[SessionResult]) -> list[str]:
    """The table's content as a few lines per run, for narrow terminals."""
    lines = ["agentic-eval scorecards"]
    for r in results:
        s, t = r.scorecard, r.scorecard.totals
        lines += [
            terminal_line(f"{s.domain} / {s.produced_by.agent}"),
            "  produced by "
            + terminal_line(
                f"{produced_by_label(s.produced_by)}, approval {s.produced_by.approval_mode}"
            ),
            f"  passed {t.passed}/{t.cases} | check failed {t.check_failed} | error {t.error} "
            f"| transient {t.transient}",
            f"  hard-gate fail {t.hard_gate_failures} | unapproved attempted/executed "
            f"{t.unapproved_attempts}/{t.unapproved_executions}",
            f"  gate {gate_text(r.gate)} | replay {_fidelity(r)}",
        ]
    return lines


def results_table(results: Sequence[SessionResult]) -> Table:
    """One row per domain run."""
    table = Table(title="agentic-eval scorecards", title_justify="left")
    table.add_column("domain", overflow="fold")
    table.add_column("agent", overflow="fold", max_width=32)
    table.add_column("produced by", overflow="fold", max_width=40)
    table.add_column("approval", no_wrap=True)
    for name in ("passed", "check failed", "error", "transient", "hard-gate fail"):
        table.add_column(name, justify="right", no_wrap=True, min_width=5)
    table.add_column("unapproved att./exec.", justify="right", no_wrap=True, min_width=5)
    table.add_column("gate", overflow="fold")
    table.add_column("replay fidelity", overflow="fold")
    for r in results:
        s = r.scorecard
        t = s.totals
        fidelity = _fidelity(r)
        cells = (
            s.domain,
            s.produced_by.agent,
            produced_by_label(s.produced_by),
            s.produced_by.approval_mode,
            f"{t.passed}/{t.cases}",
            str(t.check_failed),
            str(t.error),
            str(t.transient),
            str(t.hard_gate_failures),
            f"{t.unapproved_attempts}/{t.unapproved_executions}",
            gate_text(r.gate),
            fidelity,
        )
        table.add_row(*(Text(terminal_line(cell)) for cell in cells))
    return table


def print_results(
    results: Sequence[SessionResult],
    *,
    verbose: bool = False,
    console: Console | None = None,
    notes: Mapping[str, str] | None = None,
) -> None:
    """For a replay the per-domain fidelity, then the table, then per run: hard-gate failures,
    errors, replay problems (all failing cases with ``verbose``)."""
    console = console or _stdout()
    fidelity = domain_fidelity(results)
    if fidelity:
        table = Table(title="replay fidelity by domain", title_justify="left")
        for name in ("domain", "replay", "notes"):
            table.add_column(name, overflow="fold")
        for domain, (ok, total) in fidelity.items():
            note = (notes or {}).get(domain, "")
            table.add_row(
                Text(terminal_line(domain)), f"{ok}/{total}", Text(terminal_line(note, 160))
            )
        console.print(table)
    if console.width >= WIDE:
        console.print(results_table(results))
    else:
        for line in results_lines(results):
            _say(console, line)
    for r in results:
        s = r.scorecard
        failing = [c for c in s.cases if c.outcome.kind != "passed" or c.hard_gate_failed]
        shown = [
            c for c in failing if verbose or c.hard_gate_failed or c.outcome.kind != "check_failed"
        ]
        quiet = not failing and not r.problems and r.recorded_to is None
        if quiet and r.status == "finished" and r.gate.verdict == "PASS":
            continue
        _say(console, "\n" + terminal_line(f"{s.domain} / {s.produced_by.agent}"), "bold")
        _say(console, f"  gate: {r.gate.verdict}: {terminal_line(r.gate.reason)}")
        if r.status != "finished":
            done = len(r.run.cases)
            _say(console, f"  {r.status}: {done} of {r.planned} samples judged")
        for c in shown:
            gate = " [HARD GATE]" if c.hard_gate_failed else ""
            name = c.case_id if c.sample == 0 else f"{c.case_id}@{c.sample}"
            reason = terminal_line(c.outcome.reason, 300)
            _say(console, f"  {terminal_line(name)}: {c.outcome.kind}{gate} - {reason}")
        hidden = len(failing) - len(shown)
        if hidden:
            _say(console, f"  (+{hidden} check failures; --verbose lists them)")
        for problem in r.problems[:5]:
            _say(console, f"  replay: {terminal_line(problem, 300)}")
        if len(r.problems) > 5:
            _say(console, f"  replay: (+{len(r.problems) - 5} more)")
        if r.recorded_to is not None:
            _say(console, f"  recorded to {terminal_text(_shown_path(r.recorded_to.parent))}")
        for path in r.left_alone:
            where = terminal_text(str(path))
            _say(console, f"  left alone: {where} (not a transcript of this agent)")


def _say(console: Console, text: str, style: str = "") -> None:
    """Print already escaped text as it is: no markup, no emoji codes, no highlighting."""
    console.print(Text(text, style=style))


def _stdout() -> Console:
    console = Console(highlight=False, emoji=False)
    if not console.is_terminal:
        console = Console(highlight=False, emoji=False, width=200)
    return console


class ProgressBar:
    """Progress of a live run on stderr: a bar on a terminal, one line per case in a log."""

    def __init__(self, label: str, total: int) -> None:
        self._console = Console(stderr=True, highlight=False, emoji=False)
        self._label, self._total, self._done = label, total, 0
        self._progress: Progress | None = None
        if self._console.is_terminal:
            self._progress = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._console,
            )
            self._task = self._progress.add_task(terminal_line(label), total=total)
            self._progress.start()

    def advance(self, case_run: CaseRun) -> None:
        """One more case finished."""
        self._done += 1
        if self._progress is not None:
            self._progress.advance(self._task)
            return
        r = case_run.result
        line = (
            f"[{self._done}/{self._total}] {terminal_line(self._label)} "
            f"{terminal_line(r.case_id)}: {r.outcome.kind} "
            f"({r.turns} turns, {case_run.duration_ms / 1000:.1f} s)"
        )
        _say(self._console, line)

    def close(self) -> None:
        """Stop rendering."""
        if self._progress is not None:
            self._progress.stop()


def progress_bar(label: str, total: int) -> ProgressBar:
    """Start a progress bar."""
    return ProgressBar(label, total)


def _shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it, else as it is."""
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
