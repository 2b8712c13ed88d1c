"""Markdown (GitHub-flavoured) for pull-request comments: reports, run scorecards, history.

Every cell is escaped: ``|`` cannot split a row, newlines become ``<br>``, and ``<``, ``>``,
``&`` are entities, so text from a transcript or a check message cannot inject markup.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

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
MAX_CELL = 400


def cell(text: str) -> str:
    """Text made safe for one table cell."""
    text = text if len(text) <= MAX_CELL else text[: MAX_CELL - 3] + "..."
    text = html.escape(text, quote=False).replace("|", "\\|")
    return "<br>".join(line.strip() for line in text.splitlines()) or " "


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
            f"| {label} | `{cell(short_id(s.run_id))}` | {when(s.started_at)} | {cell(s.producer)} "
            f"| {s.approval_mode} | {rate(s.passed, s.samples)} | {s.hard_gate_failures} "
            f"| {cell(gate)} |"
        )
    return lines


def _changes_table(changes: Sequence[ChangeView]) -> list[str]:
    lines = ["| case | change | before → after | checks flipped (why) |", "|---|---|---|---|"]
    for c in changes[:MAX_ROWS]:
        kind = c.kind.replace("_", " ")
        kind = f"**{kind}**" if c.kind == "regressed" else kind
        why = "\n".join(flip_lines(c)) or "-"
        lines.append(f"| `{cell(c.name)}` | {kind} | {c.before} → {c.after} | {cell(why)} |")
    if len(changes) > MAX_ROWS:
        lines.append(f"\n... and {len(changes) - MAX_ROWS} more (see `--format json`)")
    return lines


def diff_markdown(d: DiffView) -> list[str]:
    """One suite's diff."""
    lines = [f"### {d.suite}: {headline(d.counts)}", ""]
    lines += _runs_table([("base", d.base), ("head", d.head)])
    lines.append("")
    if d.replay:
        lines += [f"> {cell(d.replay)}", ""]
    if d.causes:
        lines += ["**What else changed:** " + cell("; ".join(d.causes)), ""]
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
        return diff_markdown(s.diff)
    lines = [f"### {s.suite}", "", s.note or "Nothing to compare.", ""]
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
        f"<details><summary>{cell(run.summary.suite)}: {len(failing)} failing</summary>",
        "",
        "| case | outcome | failed checks |",
        "|---|---|---|",
    ]
    for c in failing[:MAX_ROWS]:
        checks = "\n".join(check_line(k.name, k.hard_gate, k.message) for k in c.failed_checks)
        lines.append(f"| `{cell(c.name)}` | {c.outcome} | {cell(checks or c.reason)} |")
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
        f"### {suite}",
        "",
        "| started | run | produced by | passed | hard-gate failures | gate | |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in points:
        mark = "baseline" if p.baseline else ""
        lines.append(
            f"| {when(p.started_at)} | `{cell(short_id(p.run_id))}` | {cell(p.producer)} "
            f"| {rate(p.passed, p.samples)} | {p.hard_gate_failures} | {p.verdict} | {mark} |"
        )
    return "\n".join(lines) + "\n"
