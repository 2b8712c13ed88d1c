"""JUnit XML, as CI viewers read it (the Jenkins xUnit ``junit-10`` dialect that GitLab, GitHub
test-report actions and Azure DevOps also accept).

One ``<testsuite>`` per run, one ``<testcase>`` per case and sample: ``check_failed`` is a
``<failure>`` whose message names the failed checks and whose text gives each check's message;
``error`` is an ``<error>``; ``transient`` is ``<skipped>`` (it says nothing about the agent). A
replay adds one testcase saying whether the recording was reproduced. Every text and attribute
value goes through :func:`agentic_eval.report.escape.xml_text` (control characters shown as
``\\xNN``, what XML 1.0 cannot hold replaced) before the serializer adds the entities, so any
transcript or message text yields a well-formed document.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

from agentic_eval.report.escape import xml_text
from agentic_eval.report.text import check_line, short_id
from agentic_eval.report.views import CaseView, ReportView, RunsView, RunView

REPLAY_CASE = "replay reproduces the recording"


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        node.text = xml_text(text)
    return node


def _failure_text(c: CaseView) -> str:
    lines = [check_line(k.name, k.hard_gate, k.message) for k in c.failed_checks]
    return "\n".join(lines) or c.reason


def _testcase(suite: ET.Element, classname: str, c: CaseView, change: str | None) -> None:
    case = _el(suite, "testcase", name=c.name, classname=classname)
    prefix = f"{change.replace('_', ' ')}: " if change else ""
    if c.outcome == "check_failed":
        _el(case, "failure", _failure_text(c), type="check_failed", message=prefix + c.reason)
    elif c.outcome == "error":
        _el(case, "error", c.reason, type="error", message=prefix + c.reason)
    elif c.outcome == "transient":
        _el(case, "skipped", type="transient", message=f"transient: {c.reason}")


def _testsuite(
    root: ET.Element, run: RunView, changes: Mapping[str, str], base: str | None
) -> tuple[int, int, int]:
    s = run.summary
    failures = sum(1 for c in run.cases if c.outcome == "check_failed")
    errors = sum(1 for c in run.cases if c.outcome == "error")
    skipped = sum(1 for c in run.cases if c.outcome == "transient")
    tests = len(run.cases)
    replay_failed = s.reproduced is False
    if s.reproduced is not None:
        tests += 1
        failures += int(replay_failed)
    suite = _el(
        root,
        "testsuite",
        name=f"{s.suite} / {s.agent}",
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{s.duration_seconds:.3f}",
        timestamp=s.started_at.removesuffix("Z")[:19],
    )
    props = _el(suite, "properties")
    facts = {
        "run_id": s.run_id,
        "produced_by": s.producer,
        "approval_mode": s.approval_mode,
        "gate": f"{s.verdict}: {s.gate_reason}",
        "history_file": s.file,
    }
    if base is not None:
        facts["base_run_id"] = base
    for name, value in facts.items():
        _el(props, "property", name=name, value=value)
    for c in run.cases:
        _testcase(suite, s.suite, c, changes.get(c.name))
    if s.reproduced is not None:
        case = _el(suite, "testcase", name=REPLAY_CASE, classname=s.suite)
        if replay_failed:
            problems = "\n".join(s.replay_problems) or "not reproduced"
            _el(case, "failure", problems, type="not_reproduced", message=problems.splitlines()[0])
    return tests, failures, errors


def _document(name: str, runs: Sequence[tuple[RunView, Mapping[str, str], str | None]]) -> str:
    root = ET.Element("testsuites", {"name": name})
    totals = [0, 0, 0]
    seconds = 0.0
    for run, changes, base in runs:
        for i, n in enumerate(_testsuite(root, run, changes, base)):
            totals[i] += n
        seconds += run.summary.duration_seconds
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", str(totals[2]))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def report_junit(view: ReportView) -> str:
    """The head run of every suite in the report; a regressed case's message says so."""
    runs: list[tuple[RunView, Mapping[str, str], str | None]] = []
    for s in view.suites:
        if s.head is None:
            continue
        changes: dict[str, str] = {}
        base: str | None = None
        if s.diff is not None:
            changes = {c.name: c.kind for c in s.diff.changes if c.kind != "still_failing"}
            base = s.diff.base.run_id
            changes = {k: f"{v} since run {short_id(base)}" for k, v in changes.items()}
        runs.append((s.head, changes, base))
    return _document("agentic-eval report", runs)


def runs_junit(view: RunsView) -> str:
    """The runs of one ``run`` command."""
    return _document("agentic-eval run", [(r, {}, None) for r in view.runs])
