"""The pass-rate history of a suite as an inline SVG line chart (no script needed to see it).

One line per producer (an agent, a model, or the replay of one recording), so runs of different
agents never zigzag on one line. Points sit at their start time; a run that did not pass its
gate has a red ring, a replay is hollow (it is not new agent behaviour), the baseline is ringed.
Every point has a tooltip (``<title>``) naming the run. Text goes through
:func:`agentic_eval.report.escape.html_text` (the SVG is parsed as part of the HTML page).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agentic_eval.report.escape import html_text
from agentic_eval.report.text import short_id, when
from agentic_eval.report.views import PointView

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 40
PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f")
FAIL = "#d62728"


def _seconds(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def series_of(points: Sequence[PointView]) -> dict[str, list[PointView]]:
    """Points grouped by producer, in order of first appearance."""
    groups: dict[str, list[PointView]] = {}
    for p in points:
        groups.setdefault(p.producer, []).append(p)
    return groups


def history_svg(suite: str, points: Sequence[PointView]) -> str:
    """An SVG chart of pass rate (0-100%) over time; one series per producer."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    times = [_seconds(p.started_at) for p in points]
    t0, t1 = (min(times), max(times)) if times else (0.0, 0.0)

    def x(t: float) -> float:
        return LEFT + (plot_w / 2 if t1 == t0 else (t - t0) / (t1 - t0) * plot_w)

    def y(rate: float) -> float:
        return TOP + (1 - rate) * plot_h

    label = f"Pass rate of {len(points)} run(s) of {suite} over time"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="history-plot" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'aria-label="{html_text(label)}" data-points="{len(points)}">',
        f"<title>{html_text(label)}</title>",
    ]
    for pct in (0, 25, 50, 75, 100):
        gy = y(pct / 100)
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{gy:.1f}" y2="{gy:.1f}" '
            f'stroke="#ddd" stroke-width="1"/>'
            f'<text x="{LEFT - 6}" y="{gy + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#555">{pct}%</text>'
        )
    if points:
        first, last = when(points[0].started_at), when(points[-1].started_at)
        base_y = HEIGHT - BOTTOM + 16
        parts.append(
            f'<text x="{LEFT}" y="{base_y}" font-size="11" fill="#555">{html_text(first)}</text>'
        )
        if t1 != t0:
            parts.append(
                f'<text x="{WIDTH - RIGHT}" y="{base_y}" font-size="11" fill="#555" '
                f'text-anchor="end">{html_text(last)}</text>'
            )
    for i, (producer, group) in enumerate(series_of(points).items()):
        colour = PALETTE[i % len(PALETTE)]
        coords = [(x(_seconds(p.started_at)), y(p.pass_rate)) for p in group]
        parts.append(f'<g class="series" data-producer="{html_text(producer)}">')
        if len(coords) > 1:
            line = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords)
            parts.append(
                f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        for p, (cx, cy) in zip(group, coords, strict=True):
            fill = "#fff" if p.producer_kind == "replay" else colour
            tip = (
                f"{short_id(p.run_id)} {when(p.started_at)}\n{p.producer}\n"
                f"{p.passed}/{p.samples} passed, {p.hard_gate_failures} hard-gate failures, "
                f"{p.verdict}{' (baseline)' if p.baseline else ''}"
            )
            if p.baseline:
                parts.append(
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="10" fill="none" stroke="#333" '
                    f'stroke-dasharray="3 2"/>'
                )
            if p.verdict != "PASS":
                parts.append(
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="7" fill="none" stroke="{FAIL}" '
                    f'stroke-width="2"/>'
                )
            parts.append(
                f'<circle class="point" data-run-id="{html_text(p.run_id)}" cx="{cx:.1f}" '
                f'cy="{cy:.1f}" r="4.5" fill="{fill}" stroke="{colour}" stroke-width="2">'
                f"<title>{html_text(tip)}</title></circle>"
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def legend_items(points: Sequence[PointView]) -> list[tuple[str, str]]:
    """(colour, producer) per series, in the chart's order."""
    return [(PALETTE[i % len(PALETTE)], name) for i, name in enumerate(series_of(points))]
