"""Markdown (GitHub-flavoured) for pull-request comments: reports, run scorecards, history.

Every piece of text from data goes through :mod:`agentic_eval.report.escape`: table cells
(``|`` cannot split a row, newlines become ``<br>``), code cells, inline text and the HTML of
the ``<details>`` blocks, so text from a transcript or a check message cannot inject markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentic_eval.report.escape import (
    html_line,
    markdown_cell,
    markdown_code_cell,
    markdown_text,
)
from agentic_eval.report.text import (
    check_line,
    counts_line,
    flip_lines,
    headline,
    rate,
    short_id,
    when,
)
from agentic_eval.report.views import (
    ChangeView,
    DiffView,
    PointView,
    ReportView,
    RunSummaryView,
    RunsView,
    RunView,
    SuiteReport,
)

MAX_ROWS = 100
"""Rows per table; the rest are counted (a PR comment has a size limit)."""


def _runs_table(rows: Sequence[tuple[str, RunSummaryView]]) -> list[str]:
    lines = [
        "| | run | started | produced by | approval | passed | hard-gate failures | gate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, s in rows:
        gate = s.verdict
        if s.reproduced is not None:
            gate += " (reproduced)" if s.reproduced else " (NOT reproduced)"
        if s.status != "finished":
            gate += f" ({s.status})"
        lines.append(
            f"| {markdown_cell(label)} | {markdown_code_cell(short_id(s.run_id))} "
            f"| {markdown_cell(when(s.started_at))} | {markdown_cell(s.producer)} "
            f"| {markdown_cell(s.approval_mode)} | {rate(s.passed, s.samples)} "
            f"| {s.hard_gate_failures} | {markdown_cell(gate)} |"
        )
    return lines


def _changes_table(changes: Sequence[ChangeView]) -> list[str]:
    lines = ["| case | change | before → after | checks flipped (why) |", "|---|---|---|---|"]
    for c in changes[:MAX_ROWS]:
        kind = markdown_cell(c.kind.replace("_", " "))
        kind = f"**{kind}**" if c.kind == "regressed" else kind
        why = "\n".join(flip_lines(c)) or "-"
        lines.append(
            f"| {markdown_code_cell(c.name)} | {kind} "
            f"| {markdown_cell(c.before)} → {markdown_cell(c.after)} | {markdown_cell(why)} |"
        )
    if len(changes) > MAX_ROWS:
        lines.append(f"\n... and {len(changes) - MAX_ROWS} more (see `--format json`)")
    return lines


def diff_markdown(d: DiffView, title: str | None = None) -> list[str]:
    """One series' diff (``title``: the heading, default the suite)."""
    lines = [f"### {markdown_text(title or d.suite)}: {headline(d.counts)}", ""]
    lines += _runs_table([("base", d.base), ("head", d.head)])
    lines.append("")
    if d.replay:
        lines += [f"> {markdown_text(d.replay)}", ""]
    if d.causes:
        lines += ["**What else changed:** " + markdown_text("; ".join(d.causes)), ""]
    else:
        lines += ["**What else changed:** nothing (same configuration and fingerprints)", ""]
    lines += [counts_line(d.counts), ""]
    changed = [c for c in d.changes if c.kind != "still_failing"]
    failing = [c for c in d.changes if c.kind == "still_failing"]
    if changed:
        lines += _changes_table(changed)
    else:
        lines.append("No case changed its verdict.")
    if failing:
        lines += ["", f"<details><summary>Still failing ({len(failing)})</summary>", ""]
        lines += _changes_table(failing)
        lines += ["", "</details>"]
    return lines


def _suite(s: SuiteReport) -> list[str]:
    if s.diff is not None:
        return diff_markdown(s.diff, s.title)
    lines = [
        f"### {markdown_text(s.title)}",
        "",
        markdown_text(s.note or "Nothing to compare."),
        "",
    ]
    if s.head is not None:
        lines += _runs_table([("latest", s.head.summary)])
    return lines


def report_markdown(view: ReportView) -> str:
    """A report for a pull-request comment."""
    lines = ["## agentic-eval report", ""]
    if not view.suites:
        lines.append("No suite has any history.")
    for s in view.suites:
        lines += [*_suite(s), ""]
    return "\n".join(lines).rstrip() + "\n"


def _failing_cases(run: RunView) -> list[str]:
    failing = [c for c in run.cases if c.outcome != "passed" or c.hard_gate_failed]
    if not failing:
        return []
    lines = [
        f"<details><summary>{html_line(run.summary.suite)}: {len(failing)} failing</summary>",
        "",
        "| case | outcome | failed checks |",
        "|---|---|---|",
    ]
    for c in failing[:MAX_ROWS]:
        checks = "\n".join(check_line(k.name, k.hard_gate, k.message) for k in c.failed_checks)
        lines.append(
            f"| {markdown_code_cell(c.name)} | {markdown_cell(c.outcome)} "
            f"| {markdown_cell(checks or c.reason)} |"
        )
    if len(failing) > MAX_ROWS:
        lines.append(f"\n... and {len(failing) - MAX_ROWS} more")
    return [*lines, "", "</details>"]


def runs_markdown(view: RunsView) -> str:
    """The scorecards of a ``run``: one table, then each run's failing cases."""
    lines = _runs_table([(r.summary.suite, r.summary) for r in view.runs])
    for r in view.runs:
        extra = _failing_cases(r)
        if extra:
            lines += ["", *extra]
    return "\n".join(lines) + "\n"


def history_markdown(suite: str, points: Sequence[PointView]) -> str:
    """A suite's history, newest first."""
    lines = [
        f"### {markdown_text(suite)}",
        "",
        "| started | run | produced by | passed | hard-gate failures | gate | |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in points:
        mark = "baseline" if p.baseline else ""
        lines.append(
            f"| {markdown_cell(when(p.started_at))} | {markdown_code_cell(short_id(p.run_id))} "
            f"| {markdown_cell(p.producer)} | {rate(p.passed, p.samples)} "
            f"| {p.hard_gate_failures} | {markdown_cell(p.verdict)} | {mark} |"
        )
    return "\n".join(lines) + "\n"
