"""Terminal rendering: scorecard tables, failing cases, progress bars, JSON."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.scorecard import ProducedBy, Scorecard
from agentic_eval.evaluation.runner import CaseRun
from agentic_eval.evaluation.session import SessionResult


def produced_by_label(p: ProducedBy) -> str:
    """What produced a run, never presenting a scripted agent as a model."""
    if p.agent_kind == "scripted":
        return f"scripted agent '{p.agent}' (no model)"
    return f"model {p.model} via {p.backend}"


def scorecards_json(scorecards: Sequence[Scorecard]) -> str:
    """Canonical JSON of the scorecards (a single object when there is one)."""
    if len(scorecards) == 1:
        return canonical_json(scorecards[0], indent=2)
    return canonical_json([s.model_dump(mode="json") for s in scorecards], indent=2)


def results_table(results: Sequence[SessionResult]) -> Table:
    """One row per domain run."""
    table = Table(title="agentic-eval scorecards", title_justify="left")
    for name, justify in [
        ("domain", "left"),
        ("agent", "left"),
        ("produced by", "left"),
        ("passed", "right"),
        ("check failed", "right"),
        ("error", "right"),
        ("transient", "right"),
        ("hard-gate fail", "right"),
        ("unapproved att./exec.", "right"),
        ("gate", "left"),
        ("replay fidelity", "right"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in results:
        s = r.run.scorecard
        t = s.totals
        fidelity = "-"
        if r.fidelity is not None:
            mark = "reproduced" if r.reproduced else "NOT reproduced"
            fidelity = f"{r.fidelity[0]}/{r.fidelity[1]} {mark}"
        gate = f"{s.gate.verdict} ({s.gate.failure_rate:.1%})"
        table.add_row(
            s.domain,
            s.produced_by.agent,
            produced_by_label(s.produced_by),
            f"{t.passed}/{t.cases}",
            str(t.check_failed),
            str(t.error),
            str(t.transient),
            str(t.hard_gate_failures),
            f"{t.unapproved_attempts}/{t.unapproved_executions}",
            gate,
            fidelity,
        )
    return table


def print_results(results: Sequence[SessionResult], console: Console | None = None) -> None:
    """The table, then the failing cases and any replay problem of each run."""
    console = console or Console(highlight=False, soft_wrap=True)
    console.print(results_table(results))
    for r in results:
        s = r.run.scorecard
        failing = [c for c in s.cases if c.outcome.kind != "passed" or c.hard_gate_failed]
        if not failing and not r.problem:
            continue
        console.print(f"\n[bold]{s.domain} / {s.produced_by.agent}[/bold]", highlight=False)
        for c in failing:
            gate = " [HARD GATE]" if c.hard_gate_failed else ""
            console.print(
                f"  {c.case_id}: {c.outcome.kind}{gate} - {c.outcome.reason}", markup=False
            )
        if r.problem:
            console.print(f"  replay: {r.problem}", markup=False)
        if r.recorded_to is not None:
            console.print(f"  recorded to {r.recorded_to.parent}", markup=False)


class ProgressBar:
    """A progress bar on stderr for live runs."""

    def __init__(self, label: str, total: int) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._progress.add_task(label, total=total)
        self._progress.start()

    def advance(self, case_run: CaseRun) -> None:
        """One more case finished."""
        del case_run
        self._progress.advance(self._task)

    def close(self) -> None:
        """Stop rendering."""
        self._progress.stop()


def progress_bar(label: str, total: int) -> ProgressBar:
    """Start a progress bar."""
    return ProgressBar(label, total)
