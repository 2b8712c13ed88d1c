"""The HTML report's stylesheet and script (inline, so the report is one self-contained file).

The page's Content-Security-Policy allows exactly these two by hash: nothing else on the page
can run a script or load anything, even if some text were to slip past the escaping.
"""

from __future__ import annotations

CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bad: #cf222e; --good: #1a7f37;
  --warn: #9a6700; --bg-soft: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  margin: 0 auto; max-width: 1100px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
.muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg-soft); font-weight: 600; }
td code { white-space: nowrap; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0; }
.kind { font-weight: 600; white-space: nowrap; }
tr[data-kind="regressed"] .kind { color: var(--bad); }
tr[data-kind="improved"] .kind { color: var(--good); }
tr[data-kind="inconclusive"] .kind, tr[data-kind="new"] .kind,
tr[data-kind="removed"] .kind { color: var(--warn); }
.verdict-FAIL { color: var(--bad); font-weight: 600; }
.verdict-PASS { color: var(--good); font-weight: 600; }
.verdict-INCONCLUSIVE { color: var(--warn); font-weight: 600; }
.note { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; margin: 8px 0; }
.causes li { margin: 2px 0; }
.filter { border: 1px solid var(--line); padding: 6px 10px; margin: 8px 0; }
.filter label { margin-right: 14px; white-space: nowrap; }
.legend { list-style: none; padding: 0; margin: 4px 0 0; display: flex; flex-wrap: wrap;
  gap: 4px 16px; }
.legend svg { vertical-align: middle; margin-right: 4px; }
figure { margin: 8px 0; }
figcaption { color: var(--muted); font-size: 12px; }
svg.history-plot { max-width: 100%; height: auto; }
details.failed { border: 1px solid var(--line); margin: 6px 0; padding: 4px 8px; }
details.failed > summary { cursor: pointer; }
.turn { border-left: 3px solid var(--line); margin: 6px 0; padding: 2px 8px; }
.block { margin: 2px 0; }
.role { font-weight: 600; color: var(--muted); font-size: 12px; }
.role-assistant, .role-tool-call { color: #0550ae; }
.role-tool-error { color: var(--bad); }
.hard { color: var(--bad); font-weight: 600; }
"""

JS = """
(function () {
  "use strict";
  var node = document.getElementById("report-data");
  var data = JSON.parse(node.textContent);
  document.querySelectorAll("section.suite").forEach(function (section) {
    var report = data.suites[Number(section.getAttribute("data-index"))];
    var counts = report && report.diff ? report.diff.counts : {};
    var boxes = section.querySelectorAll("input[data-kind]");
    var shown = section.querySelector(".shown-count");
    function apply() {
      var on = {};
      boxes.forEach(function (b) { on[b.getAttribute("data-kind")] = b.checked; });
      var visible = 0;
      section.querySelectorAll("tr[data-kind]").forEach(function (row) {
        row.hidden = !on[row.getAttribute("data-kind")];
        if (!row.hidden) { visible += 1; }
      });
      if (shown) { shown.textContent = visible + " shown"; }
    }
    boxes.forEach(function (b) {
      var count = b.parentNode.querySelector(".count");
      if (count) { count.textContent = "(" + (counts[b.getAttribute("data-kind")] || 0) + ")"; }
      b.addEventListener("change", apply);
    });
    var expand = section.querySelector("button.expand");
    if (expand) {
      expand.addEventListener("click", function () {
        var all = section.querySelectorAll("details.failed");
        var open = !Array.prototype.every.call(all, function (d) { return d.open; });
        all.forEach(function (d) { d.open = open; });
      });
    }
    apply();
  });
  document.body.setAttribute("data-ready", "true");
})();
"""
