"""What ``agentic-eval batch`` shows: the live progress, and the summary in the seed's shape."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentic_eval.core.text import one_line

if TYPE_CHECKING:
    from agentic_eval.evaluation.runner import CaseRun


class BatchProgress:
    """done / passed / failed / transient and the rate so far, on stderr: a bar on a terminal,
    a line every twentieth of the batch in a log."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.counts = {"passed": 0, "failed": 0, "transient": 0}
        self.console = Console(stderr=True, highlight=False, emoji=False)
        self.bar: Progress | None = None
        self.every = max(1, total // 20)
        if self.console.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
            )
            self.task = self.bar.add_task(self.line(), total=total)
            self.bar.start()

    def line(self) -> str:
        c = self.counts
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        return (
            f"{self.done}/{self.total} done, {c['passed']} passed, {c['failed']} failed, "
            f"{c['transient']} transient, {rate:.1f} samples/s"
        )

    def advance(self, run: CaseRun) -> None:
        kind = run.result.outcome.kind
        self.counts[kind if kind in ("passed", "transient") else "failed"] += 1
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=self.line())
        elif self.done % self.every == 0 or self.done == self.total:
            self.console.print(f"batch: {self.line()}", markup=False)

    def add(self, new: Mapping[str, int]) -> None:
        """Samples newly stored by other processes, by outcome (child processes, celery)."""
        before = self.done
        for kind, n in new.items():
            self.counts[kind if kind in ("passed", "transient") else "failed"] += n
            self.done += n
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, description=self.line())
        elif self.done // self.every > before // self.every or self.done == self.total > before:
            self.console.print(f"batch: {self.line()}", markup=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def summary_lines(s: Any) -> list[str]:
    """The summary in the seed's shape, then the confidence bound and pass^k."""
    from agentic_eval.evaluation.confidence import bound_lines, pass_hat_lines
    from agentic_eval.evaluation.gate import format_rate, percent

    g, c = s.gate, s.counts
    lines = [
        f"run: {s.run_id} ({s.status})",
        *corpus_lines(s),
        *step_lines(s),
        f"samples: {s.samples}" + (f" of {len(s.plan.keys)} planned" if s.missing else ""),
        f"passed: {c['passed']}",
        f"check_failed: {c['check_failed']}",
    ]
    if c["error"]:
        lines.append(f"error: {c['error']}")
    lines += [
        f"transient: {c['transient']} (excluded from the rate)",
        f"failure rate: {format_rate(g.failures, g.judged, g.max_failure_rate)} "
        f"(threshold {percent(g.max_failure_rate)})",
        *bound_lines(g),
        *pass_hat_lines(s.epochs),
        f"gate: {g.verdict}" + (f" ({one_line(g.reason)})" if g.verdict != "PASS" else ""),
    ]
    session = s.session
    if session is not None and session.fidelity is not None:  # a replay: was it reproduced?
        ok, n = session.fidelity
        why = "" if session.reproduced else f"; NOT reproduced: {'; '.join(session.problems[:3])}"
        lines.append(one_line(f"replay: {ok}/{n} samples reproduced{why}", 400))
    if s.missing:
        lines.append(f"resume: agentic-eval batch --resume {s.run_id}")
    return lines


def corpus_lines(s: Any) -> list[str]:
    """A corpus batch: how many cases of each human verdict ran, and how many are judged."""
    corpus = s.plan.corpus
    if corpus is None:
        return []
    approved = sum(1 for e in corpus.entries if e.verdict == "approved")
    rejected = len(corpus.entries) - approved
    runs = s.verdicts
    return [
        f"corpus: {len(corpus.entries)} case(s) run: {approved} approved (judged, "
        f"{runs.get('approved', 0)} samples), {rejected} rejected (run, not judged, "
        f"{runs.get('rejected', 0)} samples); the decisions: agentic-eval corpus samples "
        f"{s.run_id}"
    ]


def step_lines(s: Any) -> list[str]:
    """A workflow batch: per step, attempts, approvals, rejections (each reason with its count)
    and attempts that broke, read from the jobs it drove."""
    if not s.steps:
        return []
    drive = s.plan.drive
    lines = [
        f"jobs: {len(s.plan.keys)} from fixture {drive.fixture}, the operator "
        f"{drive.operator} deciding every step (at most {drive.max_attempts} attempts a step)",
        f"{'step':16} {'attempts':>8} {'approved':>8} {'rejected':>8} {'broke':>6}",
    ]
    for t in s.steps:
        lines.append(f"{t.step:16} {t.attempts:>8} {t.approvals:>8} {t.rejections:>8} {t.broke:>6}")
        for reason, n in t.reasons.most_common(5):
            lines.append(f"  rejected {n}x: {one_line(reason, 300)}")
        if len(t.reasons) > 5:
            lines.append(f"  ... and {len(t.reasons) - 5} other reason(s)")
    return lines
