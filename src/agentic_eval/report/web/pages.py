"""The viewer's pages as server-rendered HTML, styled with the report's stylesheet.

Each page is one document whose Content-Security-Policy allows its own inline stylesheet and,
on the diff page, the report's own script, by hash: nothing else can run or load. Every value
from the store goes through :func:`agentic_eval.report.escape.html_text` (links too: ids are
percent-encoded into the path, then escaped as attribute values).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from urllib.parse import quote, urlencode

from agentic_eval.report.escape import html_text, script_json
from agentic_eval.report.html import diff_section
from agentic_eval.report.html_assets import CSS, JS
from agentic_eval.report.text import rate, short_id
from agentic_eval.report.views import DiffView
from agentic_eval.report.web.queries import (
    RunPage,
    RunRow,
    SamplePage,
    SampleRow,
    Series,
    check_dicts,
)
from agentic_eval.report.web.sparkline import sparkline_svg
from agentic_eval.report.web.turns import pretty, transcript_html

WEB_CSS = """
header.site { display: flex; gap: 16px; align-items: baseline; border-bottom: 1px solid
  var(--line); padding-bottom: 6px; }
header.site a { font-weight: 600; }
a { color: #0550ae; text-decoration: none; }
a:hover { text-decoration: underline; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
tr.failed td.outcome, .bad { color: var(--bad); }
td.outcome { font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
.turn-head { font-size: 12px; }
.status { font-size: 12px; font-weight: 600; }
.status-tool-blocked, .role-tool-blocked { color: var(--bad); }
.status-tool-call { color: var(--good); }
table.checks-table pre { max-height: 320px; overflow: auto; }
table.checks-table td:nth-child(3), table.checks-table td:nth-child(4) { width: 30%; }
svg.sparkline { vertical-align: middle; }
ul.stats { margin: 4px 0; }
"""
STYLE = CSS + WEB_CSS


def _hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def run_href(run_id: str) -> str:
    """The path of a run's page."""
    return "/run/" + quote(run_id, safe="")


def sample_href(sample_id: int) -> str:
    """The path of a sample's page."""
    return f"/sample/{sample_id}"


def diff_href(base: str, head: str) -> str:
    """The path of the diff of two runs."""
    return "/diff?" + urlencode({"base": base, "head": head})


def _a(href: str, text: str) -> str:
    return f"<a href='{html_text(href)}'>{html_text(text)}</a>"


def layout(title: str, body: str, *, script: str = "") -> str:
    """A whole page: the report's stylesheet, a header linking home, ``body``; ``script`` (the
    report's own script, when the page needs it) is the one script the policy allows."""
    scripts = _hash(script) if script else "'none'"
    csp = (
        f"default-src 'none'; style-src {_hash(STYLE)}; script-src {scripts}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    return "".join(
        [
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            f"<meta http-equiv='Content-Security-Policy' content=\"{html_text(csp)}\">",
            "<link rel='icon' href='data:,'>",
            f"<title>{html_text(title)}</title><style>{STYLE}</style></head><body>",
            "<header class='site'><a href='/'>agentic-eval view</a>",
            f"<h1>{html_text(title)}</h1></header>",
            body,
            f"<script>{script}</script>" if script else "",
            "</body></html>\n",
        ]
    )


def _verdict(v: str | None) -> str:
    shown = v or "-"
    return f"<span class='verdict-{html_text(shown)}'>{html_text(shown)}</span>"


def _when(r: RunRow) -> str:
    return r.started_at.strftime("%Y-%m-%d %H:%M:%S UTC")


def _series_block(s: Series) -> str:
    rows = [
        "<table class='runs'><tr><th>run</th><th>started</th><th>status</th><th>passed</th>"
        "<th>hard-gate failures</th><th>gate</th><th>diff</th></tr>"
    ]
    for r in reversed(s.runs[-10:]):
        before = s.previous(r.id)
        diff = _a(diff_href(before.id, r.id), "vs previous") if before is not None else "-"
        rows.append(
            f"<tr data-run-id='{html_text(r.id)}'><td><code>{_a(run_href(r.id), short_id(r.id))}"
            f"</code></td><td>{html_text(_when(r))}</td><td>{html_text(r.status)}</td>"
            f"<td>{html_text(rate(r.passed, r.samples))}</td><td class='num'>"
            f"{r.hard_gate_failures}</td><td>{_verdict(r.gate)}</td><td>{diff}</td></tr>"
        )
    rows.append("</table>")
    more = len(s.runs) - 10
    older = f"<p class='muted'>and {more} older run(s)</p>" if more > 0 else ""
    latest = s.latest
    return (
        f"<section class='series' data-domain='{html_text(s.domain)}' "
        f"data-agent='{html_text(s.agent)}' data-series='{html_text(s.label)}'>"
        f"<h3>{html_text(s.label)} <span class='muted'>· latest by {html_text(latest.producer)}"
        f"</span></h3><p>latest gate {_verdict(latest.gate)} · {len(s.runs)} run(s) "
        f"{sparkline_svg(s.runs)}</p>{''.join(rows)}{older}</section>"
    )


def index_page(series: Sequence[Series]) -> str:
    """Every series, grouped by suite."""
    if not series:
        return layout("Runs", "<p>The store holds no run yet.</p>")
    out: list[str] = []
    domains = list(dict.fromkeys(s.domain for s in series))
    for domain in domains:
        out.append(f"<h2 id='suite-{html_text(domain)}'>{html_text(domain)}</h2>")
        out.extend(_series_block(s) for s in series if s.domain == domain)
    return layout("Runs", "".join(out))


def _facts(pairs: Sequence[tuple[str, str]]) -> str:
    """A definition list; the values are HTML already."""
    items = "".join(f"<dt>{html_text(k)}</dt><dd>{v}</dd>" for k, v in pairs)
    return f"<dl class='facts'>{items}</dl>"


def _sample_rows(samples: Sequence[SampleRow]) -> str:
    rows = [
        "<table class='samples'><tr><th>sample</th><th>outcome</th><th>why</th>"
        "<th>turns</th><th>tool calls</th><th>tokens in/out</th><th>time</th>"
        "<th>unapproved attempted/executed</th></tr>"
    ]
    for s in samples:
        gate = " <span class='hard'>HARD GATE</span>" if s.hard_gate_failed else ""
        why = s.failure_reason if s.outcome != "passed" else ""
        rows.append(
            f"<tr class='{'failed' if s.failed else 'passed'}' data-case='{html_text(s.case_id)}' "
            f"data-outcome='{html_text(s.outcome)}'><td><code>"
            f"{_a(sample_href(s.id), s.name)}</code></td><td class='outcome'>"
            f"{html_text(s.outcome)}{gate}</td><td>{html_text(why)}</td>"
            f"<td class='num'>{s.turns}</td><td class='num'>{s.tool_calls}</td>"
            f"<td class='num'>{s.input_tokens}/{s.output_tokens}</td>"
            f"<td class='num'>{s.duration_ms / 1000:.3f} s</td>"
            f"<td class='num'>{s.unapproved_attempts}/{s.unapproved_executions}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def run_page_html(p: RunPage) -> str:
    """A run: what produced it, its gate, the bound and pass^k, its samples (failed first)."""
    r = p.run
    before = p.series.previous(r.id)
    compare = (
        _a(diff_href(before.id, r.id), f"diff against {short_id(before.id)}") if before else "-"
    )
    facts = _facts(
        [
            ("run", f"<code>{html_text(r.id)}</code>"),
            ("suite", html_text(r.domain)),
            ("agent", html_text(r.agent)),
            ("produced by", html_text(r.producer)),
            ("approval", html_text(r.approval_mode)),
            ("started", html_text(_when(r))),
            ("status", html_text(r.status)),
            ("samples", f"{r.samples} of {r.planned_samples} planned"),
            ("passed", html_text(rate(r.passed, r.samples))),
            ("failed", f"{r.check_failed} check_failed, {r.error} error, {r.transient} transient"),
            ("hard-gate failures", str(r.hard_gate_failures)),
            ("gate", f"{_verdict(r.gate)} <span class='muted'>{html_text(p.gate_reason)}</span>"),
            ("previous run", compare),
        ]
    )
    out = [facts]
    if p.statistics:
        items = "".join(f"<li>{html_text(line)}</li>" for line in p.statistics)
        out.append(f"<h2>Confidence</h2><ul class='stats'>{items}</ul>")
        flaky = ", ".join(p.flaky) or "none"
        out.append(f"<p class='flaky'>flaky cases: {html_text(flaky)}</p>")
    elif p.plan_problem:
        out.append(f"<p class='muted'>No bound or pass^k: {html_text(p.plan_problem)}</p>")
    failed = sum(1 for s in p.samples if s.failed)
    out.append(f"<h2>Samples ({len(p.samples)}, {failed} failed, failed first)</h2>")
    out.append(_sample_rows(p.samples) if p.samples else "<p>No sample stored.</p>")
    return layout(f"Run {short_id(r.id)} of {r.domain}", "".join(out))


def _checks(checks: object) -> str:
    rows = [
        "<table class='checks-table'><tr><th>check</th><th>result</th><th>expected</th>"
        "<th>actual</th><th>message</th></tr>"
    ]
    items = sorted(check_dicts(checks), key=lambda c: bool(c.get("passed")))
    for c in items:
        passed = bool(c.get("passed"))
        hard = " <span class='hard'>HARD GATE</span>" if c.get("hard_gate") else ""
        rows.append(
            f"<tr class='{'passed' if passed else 'failed'}'>"
            f"<td><code>{html_text(str(c.get('name')))}</code>{hard}</td>"
            f"<td class='outcome'>{'held' if passed else 'failed'}</td>"
            f"<td><pre>{html_text(pretty(c.get('expected')))}</pre></td>"
            f"<td><pre>{html_text(pretty(c.get('actual')))}</pre></td>"
            f"<td>{html_text(str(c.get('message') or ''))}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows) if items else "<p class='muted'>No check ran.</p>"


def sample_page_html(p: SamplePage) -> str:
    """A sample: its outcome, checks (expected beside actual), tokens and time, transcript."""
    s, r = p.row, p.run
    name = s.case_id if s.sample == 0 else f"{s.case_id}@{s.sample}"
    facts = _facts(
        [
            ("run", f"<code>{_a(run_href(r.id), r.id)}</code> ({html_text(r.domain)}, "
             f"{html_text(r.agent)})"),
            ("case", f"<code>{html_text(s.case_id)}</code>"),
            ("epoch, attempt", f"{s.sample}, {s.attempt}"),
            ("outcome", f"<strong class='{'bad' if s.outcome != 'passed' else ''}'>"
             f"{html_text(s.outcome)}</strong>" + (" <span class='hard'>HARD GATE</span>"
             if s.hard_gate_failed else "")),
            ("why", html_text(s.failure_reason or "-")),
            ("where", html_text(s.failure_where or "-")),
            ("tokens", f"{s.input_tokens} input, {s.output_tokens} output"),
            ("time", f"{s.duration_ms / 1000:.3f} s"),
            ("turns, tool calls", f"{s.turns}, {s.tool_calls}"),
            ("unapproved", f"{s.unapproved_attempts} attempted, {s.unapproved_executions} "
             "executed"),
            ("worker", html_text(s.worker_id or "-")),
        ]
    )  # fmt: skip
    out = [facts, "<h2>Checks</h2>", _checks(s.checks), "<h2>Transcript</h2>"]
    if p.transcript is None:
        out.append(f"<p class='muted'>Transcript not shown: {html_text(p.source)}</p>")
    else:
        out.append(f"<p class='muted'>Read from {html_text(p.source)}</p>")
        out.append(transcript_html(p.transcript))
    return layout(f"Sample {name}", "".join(out))


def diff_page_html(d: DiffView, report_data: object) -> str:
    """Two runs compared as ``report`` compares them, in the report's own table and filter;
    ``report_data``: the report's JSON document for them (the filter's script reads it)."""
    body = (
        f"<section class='suite' data-index='0' data-suite='{html_text(d.suite)}'>"
        f"<h2>{html_text(d.suite)}: {_a(run_href(d.base.run_id), short_id(d.base.run_id))} → "
        f"{_a(run_href(d.head.run_id), short_id(d.head.run_id))}</h2>"
        f"{diff_section(d)}</section>"
        f"<script type='application/json' id='report-data'>{script_json(report_data)}</script>"
    )
    return layout(f"Diff of two {d.suite} runs", body, script=JS)


def error_page(status: int, message: str) -> str:
    """A 404 or 400 page: the message, and a link home."""
    title = {404: "Not found", 400: "Bad request"}.get(status, "Error")
    return layout(title, f"<p class='error'>{html_text(message)}</p>")
