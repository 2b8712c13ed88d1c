"""JUnit XML, as CI viewers read it (the Jenkins xUnit ``junit-10`` schema that GitLab, GitHub
test-report actions and Azure DevOps also accept).

One ``<testsuite>`` per run, one ``<testcase>`` per case and sample, ``classname`` the run's
``domain.agent`` and ``time`` the sample's wall time. What a testcase asserts depends on what the
run tested:

- **a replay tests the reproduction.** A case whose recording was reproduced passes, whatever the
  agent did then (its recorded verdict is in ``<system-out>``); one that was not is a
  ``<failure>`` naming the first differing field. One more testcase holds the committed scorecard
  to the replay's, byte for byte.
- **a scripted or live run tests the gate.** One testcase is the gate (``<failure>`` on FAIL,
  ``<error>`` on INCONCLUSIVE). A sample that failed its checks is a ``<failure>`` when the gate
  failed, and ``<skipped>`` (tolerated, the full text kept) when the gate passed with it;
  ``error`` samples likewise, as ``<error>``; a transient sample is ``<skipped>``.
- **an agent shipped to fail** (a mutant, a red-team demo: :meth:`Domain.failing_agents`) is an
  expected failure: its failed gate and failed samples are ``<skipped type="expected_failure">``,
  and a gate it passes is a ``<failure>`` (the checks did not catch it).

Every text and attribute value goes through :func:`agentic_eval.report.escape.xml_text` (control
characters shown as ``\\xNN``, what XML 1.0 cannot hold replaced) before the serializer adds the
entities, so any transcript or message text yields a well-formed document.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentic_eval.report.escape import xml_text
from agentic_eval.report.text import check_line, short_id
from agentic_eval.report.views import CaseView, ReportView, RunsView, RunView

REPLAY_CASE = "replay reproduces the committed scorecard"
GATE_CASE = "gate"


@dataclass
class _Counts:
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0

    def add(self, other: _Counts) -> None:
        self.tests += other.tests
        self.failures += other.failures
        self.errors += other.errors
        self.skipped += other.skipped


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        node.text = xml_text(text)
    return node


def _verdict_text(c: CaseView) -> str:
    """The sample's verdict in full: every failed check, or the outcome and its detail."""
    lines = [check_line(k.name, k.hard_gate, k.message) for k in c.failed_checks]
    if not lines:
        lines = [c.detail or c.reason]
    if c.outcome == "passed":
        return "passed"
    return f"{c.outcome}: {c.reason}\n" + "\n".join(lines)


class _Suite:
    """One run as a ``<testsuite>``, counting what it writes."""

    def __init__(self, root: ET.Element, run: RunView, base: str | None) -> None:
        s = self.summary = run.summary
        self.run = run
        self.classname = f"{s.suite}.{s.agent}"
        self.counts = _Counts()
        self.node = _el(
            root,
            "testsuite",
            name=f"{s.suite} / {s.agent}",
            tests="0",
            failures="0",
            errors="0",
            skipped="0",
            time=f"{s.duration_seconds:.3f}",
            timestamp=s.started_at.removesuffix("Z")[:19],
        )
        props = _el(self.node, "properties")
        facts = {
            "run_id": s.run_id,
            "produced_by": s.producer,
            "approval_mode": s.approval_mode,
            "gate": f"{s.verdict}: {s.gate_reason}",
            "tested": self.tested,
            "history_file": s.file,
        }
        if s.expected_to_fail:
            facts["expected_to_fail"] = "true (a mutant or red-team agent, shipped to fail)"
        if base is not None:
            facts["base_run_id"] = base
        for name, value in facts.items():
            _el(props, "property", name=name, value=value)

    @property
    def tested(self) -> str:
        """What this run's testcases assert."""
        if self.summary.reproduced is not None:
            return "the replay reproduces each recorded sample and the committed scorecard"
        if self.summary.expected_to_fail:
            return "the gate catches an agent shipped to fail"
        return "the gate"

    def case(self, name: str, seconds: float) -> ET.Element:
        self.counts.tests += 1
        return _el(
            self.node, "testcase", name=name, classname=self.classname, time=f"{seconds:.3f}"
        )

    def outcome(self, case: ET.Element, tag: str, text: str, type_: str, message: str) -> None:
        _el(case, tag, text, type=type_, message=message)
        if tag == "failure":
            self.counts.failures += 1
        elif tag == "error":
            self.counts.errors += 1
        else:
            self.counts.skipped += 1

    def close(self) -> _Counts:
        for attr in ("tests", "failures", "errors", "skipped"):
            self.node.set(attr, str(getattr(self.counts, attr)))
        return self.counts


def _replay(suite: _Suite, changes: Mapping[str, str]) -> None:
    s = suite.summary
    unreproduced = 0
    for c in suite.run.cases:
        case = suite.case(c.name, c.seconds)
        note = changes.get(c.name)
        if c.reproduced is False:
            unreproduced += 1
            problem = c.problem or "not reproduced"
            suite.outcome(case, "failure", problem, "not_reproduced", problem.splitlines()[0])
        elif note is not None:
            _el(case, "system-out", f"{note}\nrecorded and reproduced: {_verdict_text(c)}")
        else:
            _el(case, "system-out", f"recorded and reproduced: {_verdict_text(c)}")
    case = suite.case(REPLAY_CASE, s.duration_seconds)
    if s.reproduced is False and unreproduced == 0:
        problems = "\n".join(s.replay_problems) or "not reproduced"
        suite.outcome(case, "failure", problems, "not_reproduced", problems.splitlines()[0])
    elif s.reproduced is False:
        suite.outcome(
            case,
            "skipped",
            "\n".join(s.replay_problems),
            "not_judged_apart",
            f"{unreproduced} sample(s) not reproduced: see their testcases",
        )


def _gated(suite: _Suite, changes: Mapping[str, str]) -> None:
    s = suite.summary
    failed_gate = s.verdict != "PASS"
    for c in suite.run.cases:
        case = suite.case(c.name, c.seconds)
        prefix = f"{changes[c.name]}: " if c.name in changes else ""
        if c.outcome == "passed":
            continue
        text = _verdict_text(c)
        if c.outcome == "transient":
            suite.outcome(case, "skipped", text, "transient", f"transient: {c.reason}")
        elif s.expected_to_fail:
            suite.outcome(case, "skipped", text, "expected_failure", prefix + c.reason)
        elif not failed_gate:
            message = f"{c.outcome} within the gate's threshold ({s.gate_reason}): {c.reason}"
            suite.outcome(case, "skipped", text, "tolerated", prefix + message)
        elif c.outcome == "error":
            suite.outcome(case, "error", text, "error", prefix + c.reason)
        else:
            suite.outcome(case, "failure", text, "check_failed", prefix + c.reason)
    case = suite.case(GATE_CASE, s.duration_seconds)
    verdict = f"gate {s.verdict}: {s.gate_reason}"
    if s.expected_to_fail and failed_gate:
        suite.outcome(case, "skipped", verdict, "expected_failure", f"expected: {verdict}")
    elif s.expected_to_fail:
        message = f"{s.agent} is shipped to fail, but the gate passed: the checks did not catch it"
        suite.outcome(case, "failure", verdict, "unexpected_pass", message)
    elif s.verdict == "FAIL":
        suite.outcome(case, "failure", verdict, "gate_failed", verdict)
    elif s.verdict != "PASS":
        suite.outcome(case, "error", verdict, "inconclusive", verdict)


def _testsuite(
    root: ET.Element, run: RunView, changes: Mapping[str, str], base: str | None
) -> _Counts:
    suite = _Suite(root, run, base)
    if run.summary.reproduced is not None:
        _replay(suite, changes)
    else:
        _gated(suite, changes)
    return suite.close()


def _document(name: str, runs: Sequence[tuple[RunView, Mapping[str, str], str | None]]) -> str:
    root = ET.Element("testsuites", {"name": name})
    totals = _Counts()
    seconds = 0.0
    for run, changes, base in runs:
        totals.add(_testsuite(root, run, changes, base))
        seconds += run.summary.duration_seconds
    root.set("tests", str(totals.tests))
    root.set("failures", str(totals.failures))
    root.set("errors", str(totals.errors))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def report_junit(view: ReportView) -> str:
    """The head run of every series in the report; a changed case's message says how."""
    runs: list[tuple[RunView, Mapping[str, str], str | None]] = []
    for s in view.suites:
        if s.head is None:
            continue
        changes: dict[str, str] = {}
        base: str | None = None
        if s.diff is not None:
            base = s.diff.base.run_id
            changes = {
                c.name: f"{c.kind.replace('_', ' ')} since run {short_id(base)}"
                for c in s.diff.changes
                if c.kind != "still_failing"
            }
        runs.append((s.head, changes, base))
    return _document("agentic-eval report", runs)


def runs_junit(view: RunsView) -> str:
    """The runs of one ``run`` command."""
    return _document("agentic-eval run", [(r, {}, None) for r in view.runs])
