"""The HTML report: one self-contained file (inline CSS, inline SVG plot, inline script).

Per suite: the pass-rate history plotted over time, the diff table (filterable by change kind),
and for each failed case of the head run its failed checks and the transcript's turns. The
report's JSON (the same document as ``--format json``) is embedded in a
``<script type="application/json">`` element with ``<``, ``>``, ``&`` and the JavaScript line
separators escaped (:func:`agentic_eval.report.escape.script_json`), so no text (a ``</script>``
in a transcript, say) can end the element early. Every other piece of text goes through
:func:`agentic_eval.report.escape.html_text`, in element text and attribute values alike.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence

from agentic_eval.report.escape import html_text, script_json
from agentic_eval.report.html_assets import CSS, JS
from agentic_eval.report.jsonfmt import report_data
from agentic_eval.report.plot import history_svg, legend_items
from agentic_eval.report.text import KIND_LABELS, counts_line, flip_lines, rate, short_id, when
from agentic_eval.report.views import (
    CaseView,
    DiffView,
    ReportView,
    RunSummaryView,
    SuiteReport,
    TranscriptView,
    TurnView,
)

_HARD = " <span class='hard'>HARD GATE</span>"


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _verdict(v: str) -> str:
    return f'<span class="verdict-{html_text(v)}">{html_text(v)}</span>'


def _runs_table(rows: Sequence[tuple[str, RunSummaryView]]) -> str:
    out = [
        "<table class='runs'><tr><th></th><th>run</th><th>started</th><th>produced by</th>"
        "<th>approval</th><th>passed</th><th>hard-gate failures</th><th>gate</th></tr>"
    ]
    for label, s in rows:
        extra = ""
        if s.reproduced is not None:
            extra = " (reproduced)" if s.reproduced else " (NOT reproduced)"
        if s.status != "finished":
            extra += f" ({s.status})"
        out.append(
            f"<tr><th>{html_text(label)}</th><td><code title='{html_text(s.run_id)}'>"
            f"{html_text(short_id(s.run_id))}</code></td><td>{html_text(when(s.started_at))}</td>"
            f"<td>{html_text(s.producer)}</td><td>{html_text(s.approval_mode)}</td>"
            f"<td>{html_text(rate(s.passed, s.samples))}</td><td>{s.hard_gate_failures}</td>"
            f"<td>{_verdict(s.verdict)}{html_text(extra)}"
            f"<div class='muted'>{html_text(s.gate_reason)}</div></td></tr>"
        )
    out.append("</table>")
    return "".join(out)


def _diff(d: DiffView) -> str:
    out = [_runs_table([("base", d.base), ("head", d.head)])]
    if d.replay:
        out.append(f"<p class='note replay-note'>{html_text(d.replay)}</p>")
    if d.causes:
        items = "".join(f"<li>{html_text(c)}</li>" for c in d.causes)
        out.append(f"<h3>What else changed</h3><ul class='causes'>{items}</ul>")
    else:
        out.append("<p class='muted'>Same configuration and fingerprints in both runs.</p>")
    out.append(f"<p>{html_text(counts_line(d.counts))}</p>")
    boxes = "".join(
        f"<label><input type='checkbox' data-kind='{html_text(k)}' checked> {html_text(label)} "
        f"<span class='count'></span></label>"
        for k, label in KIND_LABELS.items()
        if k != "unchanged"
    )
    out.append(
        f"<fieldset class='filter'><legend>Show</legend>{boxes}"
        "<span class='shown-count muted'></span></fieldset>"
    )
    rows = [
        "<table class='changes'><tr><th>case</th><th>change</th><th>before → after</th>"
        "<th>checks flipped (why)</th></tr>"
    ]
    for c in d.changes:
        why = "".join(f"<div>{html_text(line)}</div>" for line in flip_lines(c)) or "-"
        rows.append(
            f"<tr data-kind='{html_text(c.kind)}' data-case='{html_text(c.name)}'>"
            f"<td><code>{html_text(c.name)}</code></td>"
            f"<td class='kind'>{html_text(KIND_LABELS.get(c.kind, c.kind))}</td>"
            f"<td>{html_text(c.before)} → {html_text(c.after)}</td><td>{why}</td></tr>"
        )
    rows.append("</table>")
    out.append("".join(rows) if d.changes else "<p>No case changed or failed in either run.</p>")
    return "".join(out)


def _role_class(role: str) -> str:
    return "role-" + role.split(" (")[0].replace(" ", "-")


def _turn(t: TurnView) -> str:
    blocks = [
        f"<div class='block'><span class='role {html_text(_role_class(b.role))}'>"
        f"{html_text(b.role)}</span><pre>{html_text(b.text)}</pre></div>"
        for b in (*t.sent, *t.reply)
    ]
    return f"<li class='turn' value='{t.index}'>{''.join(blocks)}</li>"


def _failed(c: CaseView, t: TranscriptView | None) -> str:
    checks = "".join(
        f"<li><code>{html_text(k.name)}</code>{_HARD if k.hard_gate else ''}: "
        f"{html_text(k.message.removeprefix(k.name + ': '))}</li>"
        for k in c.failed_checks
    )
    body = [f"<ul class='checks'>{checks}</ul>" if checks else f"<p>{html_text(c.reason)}</p>"]
    if t is None or not t.available:
        why = t.source if t is not None else "transcripts were not loaded"
        body.append(f"<p class='muted'>Transcript not shown: {html_text(why)}</p>")
    else:
        body.append(
            f"<p class='muted'>Transcript: {html_text(t.source)} ({len(t.turns)} turns)</p>"
        )
        body.append(f"<ol class='turns' start='0'>{''.join(_turn(x) for x in t.turns)}</ol>")
        if t.output:
            body.append(f"<h4>Submitted output</h4><pre class='output'>{html_text(t.output)}</pre>")
    gate = " [HARD GATE]" if c.hard_gate_failed else ""
    summary = f"{c.name}: {c.outcome}{gate} - {c.reason}"
    return (
        f"<details class='failed' data-case='{html_text(c.name)}'>"
        f"<summary>{html_text(summary)}</summary>"
        f"{''.join(body)}</details>"
    )


def _suite(index: int, s: SuiteReport) -> str:
    out = [
        f"<section class='suite' id='suite-{index}' data-index='{index}' "
        f"data-suite='{html_text(s.suite)}' data-series='{html_text(s.series)}'>",
        f"<h2>{html_text(s.title)}</h2>",
        "<figure class='plot'>",
        history_svg(s.title, s.history),
        "<figcaption>Pass rate per run over time, one line per producer; hollow points are "
        "replays, a red ring marks a failed gate, a dashed ring the baseline.</figcaption>",
        "<ul class='legend'>",
    ]
    for colour, producer in legend_items(s.history):
        out.append(
            f"<li><svg width='12' height='12' aria-hidden='true'><circle cx='6' cy='6' r='5' "
            f"fill='{html_text(colour)}'/></svg>{html_text(producer)}</li>"
        )
    out.append("</ul></figure>")
    if s.diff is not None:
        out.append(_diff(s.diff))
    else:
        out.append(f"<p class='muted'>{html_text(s.note or 'Nothing to compare.')}</p>")
        if s.head is not None:
            out.append(_runs_table([("latest", s.head.summary)]))
    if s.head is not None:
        failing = [c for c in s.head.cases if c.outcome != "passed" or c.hard_gate_failed]
        found = {(t.case_id, t.sample): t for t in s.transcripts}
        if failing:
            out.append(
                f"<h3>Failed cases of the head run ({len(failing)}) "
                "<button type='button' class='expand'>expand all</button></h3>"
            )
            out.extend(_failed(c, found.get((c.case_id, c.sample))) for c in failing)
    out.append("</section>")
    return "".join(out)


def report_html(view: ReportView, *, title: str = "agentic-eval report") -> str:
    """The whole report as one HTML document."""
    csp = (
        f"default-src 'none'; style-src {_csp_hash(CSS)}; script-src {_csp_hash(JS)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    nav = " · ".join(
        f"<a href='#suite-{i}'>{html_text(s.title)}</a>" for i, s in enumerate(view.suites)
    )
    regressions = view.regressions
    suites = len({s.suite for s in view.suites})
    summary = f"{suites} suite(s), {len(view.suites)} series, {regressions} regressed case(s)"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{html_text(csp)}\">",
        f"<title>{html_text(title)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{html_text(title)}</h1><p class='summary'>{html_text(summary)}</p>",
        f"<nav>{nav}</nav></header>" if nav else "</header>",
    ]
    if not view.suites:
        parts.append("<p>No suite has any history.</p>")
    parts.extend(_suite(i, s) for i, s in enumerate(view.suites))
    parts.append(
        f"<script type='application/json' id='report-data'>{script_json(report_data(view))}"
        "</script>"
    )
    parts.append(f"<script>{JS}</script></body></html>\n")
    return "".join(parts)
