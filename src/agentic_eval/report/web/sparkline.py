"""A series' pass rate over its runs as a small inline SVG (no script needed to see it).

One point per run, oldest on the left, evenly spaced; a run whose gate did not pass is a red
point. Each point has a tooltip (``<title>``) naming the run; text goes through
:func:`agentic_eval.report.escape.html_text`.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentic_eval.report.escape import html_text
from agentic_eval.report.text import short_id
from agentic_eval.report.web.queries import RunRow

WIDTH, HEIGHT, PAD = 160, 32, 4
LINE, GOOD, BAD = "#57606a", "#1a7f37", "#cf222e"


def sparkline_svg(runs: Sequence[RunRow]) -> str:
    """Pass rate (0-100%) of ``runs`` (oldest first) as a small line."""
    n = len(runs)

    def x(i: int) -> float:
        return WIDTH / 2 if n == 1 else PAD + i * (WIDTH - 2 * PAD) / (n - 1)

    def y(rate: float) -> float:
        return PAD + (1 - rate) * (HEIGHT - 2 * PAD)

    label = f"pass rate of the last {n} run(s)"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sparkline" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'aria-label="{html_text(label)}" data-points="{n}">'
    ]
    coords = [(x(i), y(r.pass_rate)) for i, r in enumerate(runs)]
    if n > 1:
        line = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{LINE}" stroke-width="1.5"/>')
    for r, (cx, cy) in zip(runs, coords, strict=True):
        colour = GOOD if r.gate == "PASS" else BAD
        tip = f"{short_id(r.id)}: {r.passed}/{r.samples} passed, gate {r.gate or r.status}"
        parts.append(
            f'<circle class="point" data-run-id="{html_text(r.id)}" cx="{cx:.1f}" '
            f'cy="{cy:.1f}" r="2.5" fill="{colour}"><title>{html_text(tip)}</title></circle>'
        )
    parts.append("</svg>")
    return "".join(parts)
