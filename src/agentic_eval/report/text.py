"""Small formatting rules every renderer shares, so the formats never disagree.

They return plain text, escaped for no format: each renderer passes it through its function in
:mod:`agentic_eval.report.escape` (a terminal through ``terminal_text``, which shows control
characters as ``core.text.printable`` does).
"""

from __future__ import annotations

from datetime import datetime

from agentic_eval.report.views import ChangeView, RunSummaryView

SHORT_ID = 8

KIND_LABELS: dict[str, str] = {
    "regressed": "regressed",
    "improved": "improved",
    "still_failing": "still failing",
    "new": "new",
    "removed": "removed",
    "inconclusive": "inconclusive",
    "unchanged": "unchanged",
}


def short_id(run_id: str) -> str:
    """The first characters of a run id (enough to find it with ``--base``/``--head``)."""
    return run_id[:SHORT_ID]


def when(iso: str) -> str:
    """``2026-11-30 06:36:48 UTC`` from an ISO timestamp."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def rate(passed: int, samples: int) -> str:
    """``7/34 (20.6%)``."""
    pct = 100 * passed / samples if samples else 0.0
    return f"{passed}/{samples} ({pct:.1f}%)"


def run_line(s: RunSummaryView) -> str:
    """A run in one line: id, time, producer, passed, gate."""
    extra = ""
    if s.reproduced is not None:
        extra = ", reproduced" if s.reproduced else ", NOT reproduced"
    if s.status != "finished":
        extra += f", {s.status}"
    return (
        f"{short_id(s.run_id)} {when(s.started_at)}: {s.producer}, {s.approval_mode}, "
        f"{rate(s.passed, s.samples)} passed, {s.hard_gate_failures} hard-gate failures, "
        f"{s.verdict}{extra}"
    )


def counts_line(counts: dict[str, int]) -> str:
    """``27 regressed, 0 improved, ...``."""
    return ", ".join(f"{counts.get(k, 0)} {label}" for k, label in KIND_LABELS.items())


def headline(counts: dict[str, int]) -> str:
    """What matters first: regressions and improvements."""
    parts = [f"{counts.get(k, 0)} {KIND_LABELS[k]}" for k in ("regressed", "improved")]
    for k in ("new", "removed", "inconclusive"):
        if counts.get(k, 0):
            parts.append(f"{counts[k]} {KIND_LABELS[k]}")
    return ", ".join(parts)


def check_line(name: str, hard_gate: bool, message: str) -> str:
    """``name [HARD GATE]: message`` (a message that repeats the name is not doubled)."""
    gate = " [HARD GATE]" if hard_gate else ""
    return f"{name}{gate}: {message.removeprefix(f'{name}: ')}"


def flip_lines(c: ChangeView) -> list[str]:
    """One line per flipped check (``name [HARD GATE]: held -> failed: why``), then the note."""
    lines = [
        f"{f.name}{' [HARD GATE]' if f.hard_gate else ''}: {f.before} -> {f.after}"
        + (f": {f.why}" if f.why else "")
        for f in c.flips
    ]
    if c.note:
        lines.append(c.note)
    return lines
