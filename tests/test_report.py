"""``agentic-eval report``: the diff on the command line, exit codes, and the JSON, Markdown and
JUnit XML renderers (the JUnit document is read with junitparser and checked against the rules
of the Jenkins xUnit ``junit-10`` schema that CI viewers follow).

History entries come from real scripted and replayed retail_ops sessions.
"""

from __future__ import annotations

import asyncio
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite
from markdown_it import MarkdownIt

from agentic_eval.backends import ScriptedBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.cli.main import main
from agentic_eval.cli.report_run import build_report
from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.core.scorecard import CaseResult
from agentic_eval.domains import get_domain
from agentic_eval.evaluation import RunSettings, run_session
from agentic_eval.history import (
    HISTORY_DIR_ENV,
    HistoryEntry,
    StoredEntry,
    entry_from_session,
    load_history,
    read_entry,
    write_entry,
)
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.report import (
    ReportFormatError,
    ReportView,
    report_from_json,
    report_json,
    report_junit,
    report_markdown,
    runs_from_json,
    runs_json,
    runs_junit,
    runs_markdown,
    runs_view,
)
from agentic_eval.store.db import Store

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"
DOMAIN = get_domain("retail_ops")


@dataclass(frozen=True)
class Runs:
    reference: HistoryEntry
    naive: HistoryEntry
    """The naive agent's behaviour filed as the reference agent: a regression of its series."""
    replay_a: HistoryEntry
    replay_b: HistoryEntry
    other_agent: HistoryEntry
    """The naive agent under its own name: another series."""


def _session(agent: str, store: Store, replay: bool, label: str | None = None) -> HistoryEntry:
    """A real session; ``label`` files a scripted agent's run under another agent's name (the
    same series: as when that agent's code changes between two runs)."""
    if replay:
        backend: Any = ReplayBackend(agent_dir(RECORDINGS, DOMAIN.name, agent))
        settings = RunSettings.from_parameters(backend.info().model, backend.parameters())
        spec = BackendSpec(kind="replay", agent=agent, recordings=str(RECORDINGS))
    else:
        name = label or agent
        backend = ScriptedBackend(name, DOMAIN.agents()[agent])
        settings = RunSettings(model=f"scripted:{name}")
        spec = BackendSpec(kind="scripted", agent=name)
    specs = DOMAIN.task_specs(DOMAIN.load_cases(), settings.limits)
    mode = "replay" if replay else "scripted"
    result = asyncio.run(
        run_session(DOMAIN.name, specs, backend, settings, mode, store=store, backend_spec=spec)
    )
    return entry_from_session(result, DOMAIN, specs, settings, spec)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('store') / 'runs.db'}")
    try:
        return Runs(
            reference=_session("reference", store, replay=False),
            naive=_session("naive", store, replay=False, label="reference"),
            replay_a=_session("reference", store, replay=True),
            replay_b=_session("reference", store, replay=True),
            other_agent=_session("naive", store, replay=False),
        )
    finally:
        store.close()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "history"
    monkeypatch.setenv(HISTORY_DIR_ENV, str(folder))
    return folder


def _at(e: HistoryEntry, minutes: int) -> HistoryEntry:
    delta = timedelta(minutes=minutes)
    return e.model_copy(
        update={"started_at": e.started_at + delta, "finished_at": e.finished_at + delta}
    )


def _consistent(e: HistoryEntry) -> HistoryEntry:
    """``e`` with its per-case hard-gate flags, totals and gates recomputed from its cases, as a
    run would have written it (an entry that disagrees with itself is refused on read)."""
    from agentic_eval.evaluation.gate import build_scorecard

    cases = [
        c.model_copy(
            update={"hard_gate_failed": any(k.hard_gate and not k.passed for k in c.checks)}
        )
        for c in e.scorecard.cases
    ]
    gate = e.scorecard.gate
    card = build_scorecard(
        e.suite,
        e.scorecard.produced_by,
        cases,
        max_failure_rate=gate.max_failure_rate,
        max_transient=gate.max_transient,
        external_fixtures=e.scorecard.external_fixtures,
    )
    ran = {c.case_id for c in cases}
    prints = e.fingerprints.model_copy(
        update={"case_sha256": {k: v for k, v in e.fingerprints.case_sha256.items() if k in ran}}
    )
    config = e.config.model_copy(update={"planned_samples": len(cases)})
    return e.model_copy(
        update={"scorecard": card, "gate": card.gate, "fingerprints": prints, "config": config}
    )


def _history(*entries: HistoryEntry) -> list[Path]:
    """Write entries one minute apart, in the order given."""
    return [write_entry(_consistent(_at(e, i))) for i, e in enumerate(entries)]


def _only(e: HistoryEntry, run_id: str, *cases: CaseResult) -> HistoryEntry:
    """``e`` as another run holding only ``cases``."""
    card = e.scorecard.model_copy(update={"cases": cases})
    return e.model_copy(update={"run_id": run_id, "scorecard": card})


def _failing(e: HistoryEntry) -> dict[str, set[str]]:
    return {
        c.case_id: {k.name for k in c.checks if not k.passed}
        for c in e.scorecard.cases
        if c.outcome.kind != "passed"
    }


# --- acceptance 1: the diff and its exit codes -------------------------------------------


def test_report_lists_exactly_the_cases_whose_verdict_changed_with_flipped_checks(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(runs.reference, runs.naive)
    failing = _failing(runs.naive)
    assert main(["report", "retail_ops"]) == 0
    out = capsys.readouterr().out
    assert (
        f"retail_ops / reference (enforce, scripted): {len(failing)} regressed, 0 improved" in out
    )
    for case_id, checks in failing.items():
        assert case_id in out
        for name in checks:
            assert f"{name}: held -> failed" in out or f"{name} [HARD GATE]: held -> failed" in out
    unchanged = {c.case_id for c in runs.naive.scorecard.cases} - set(failing)
    assert unchanged and not any(re.search(rf"\b{re.escape(c)}\b", out) for c in unchanged)

    assert main(["report", "retail_ops", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (suite,) = data["suites"]
    changes = suite["diff"]["changes"]
    assert {c["case_id"] for c in changes} == set(failing)
    assert {c["kind"] for c in changes} == {"regressed"}
    for c in changes:
        assert {f["name"] for f in c["flips"]} == failing[c["case_id"]]


def test_fail_on_regression_exits_1(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(runs.reference, runs.naive)
    assert main(["report", "retail_ops", "--fail-on-regression"]) == 1
    err = capsys.readouterr().err
    assert f"agentic-eval: {len(_failing(runs.naive))} case(s) regressed" in err


def test_the_way_back_is_improvements_and_passes_the_regression_gate(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(runs.naive, runs.reference)
    assert main(["report", "--fail-on-regression"]) == 0
    assert f"0 regressed, {len(_failing(runs.naive))} improved" in capsys.readouterr().out


def test_each_agent_is_compared_with_its_own_previous_run(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # reference, then another agent, then a replay of reference, then the reference again, worse
    _history(runs.reference, runs.other_agent, runs.replay_a, runs.naive, runs.replay_b)
    assert main(["report", "retail_ops", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_series = {s["series"]: s for s in data["suites"]}
    assert set(by_series) == {
        "reference (enforce, scripted)",
        "naive (enforce, scripted)",
        "reference (enforce, replay)",
    }
    scripted = by_series["reference (enforce, scripted)"]["diff"]
    assert scripted["base"]["run_id"] == runs.reference.run_id
    assert scripted["head"]["run_id"] == runs.naive.run_id
    assert scripted["counts"]["regressed"] == len(_failing(runs.naive))
    replay = by_series["reference (enforce, replay)"]["diff"]
    assert (replay["base"]["run_id"], replay["head"]["run_id"]) == (
        runs.replay_a.run_id,
        runs.replay_b.run_id,
    )
    other = by_series["naive (enforce, scripted)"]
    assert other["diff"] is None and "only one run in this series" in other["note"]

    assert main(["report", "retail_ops", "--agent", "naive", "--fail-on-regression"]) == 2
    captured = capsys.readouterr()
    assert "naive (enforce, scripted): only one run in this series" in captured.out
    assert "reference" not in captured.out
    assert main(["report", "--agent", "reference", "--fail-on-regression"]) == 1
    assert f"{len(_failing(runs.naive))} case(s) regressed" in capsys.readouterr().err
    assert main(["report", "--agent", "nobody"]) == 2
    assert "no run of agent 'nobody'" in capsys.readouterr().err


def test_two_identical_replays_report_no_change_and_exit_0(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(runs.replay_a, runs.replay_b)
    assert main(["report", "retail_ops", "--fail-on-regression"]) == 0
    out = capsys.readouterr().out
    assert "retail_ops / reference (enforce, replay): 0 regressed, 0 improved" in out
    assert "Both runs replay the same recording" in out
    assert "what else changed: nothing" in out


def test_base_baseline_and_explicit_runs(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(runs.reference, runs.naive, runs.replay_a, runs.replay_b)
    assert main(["report", "--base", "baseline", "--fail-on-regression"]) == 2
    err = capsys.readouterr().err
    assert err.count("no baseline for this series") == 2  # the scripted and the replay series
    assert main(["baseline", "promote", runs.replay_a.run_id]) == 0
    capsys.readouterr()
    # the replay series against its baseline: nothing regressed; the scripted series has no
    # baseline, which is said, and does not stop the others being compared
    assert main(["report", "--base", "baseline", "--fail-on-regression"]) == 0
    captured = capsys.readouterr()
    assert "Both runs replay the same recording" in captured.out
    assert "warning: --fail-on-regression: retail_ops / reference (enforce, scripted)" in (
        captured.err
    )
    # the scripted series against its own baseline: the reference run that got worse regresses
    assert main(["baseline", "promote", runs.reference.run_id]) == 0
    assert main(["report", "--base", "baseline", "--fail-on-regression"]) == 1
    head = runs.naive.run_id[:8]
    assert main(["report", "--base", "baseline", "--head", head, "--fail-on-regression"]) == 1
    capsys.readouterr()
    # a head given as a file outside the history is compared with the run before it
    outside = root.parent / "artifact.json"
    stored = load_history("retail_ops")
    outside.write_bytes(stored[1].path.read_bytes())
    assert main(["report", "--head", str(outside), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    diff = data["suites"][0]["diff"]
    assert diff["base"]["run_id"] == runs.reference.run_id
    assert diff["head"]["file"] == outside.as_posix()


# --- acceptance 4: an unreadable history is loud --------------------------------------------


@pytest.mark.parametrize("which", [0, 2], ids=["oldest", "newest"])
def test_a_truncated_scorecard_file_makes_report_exit_nonzero_naming_it(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str], which: int
) -> None:
    paths = _history(runs.reference, runs.naive, runs.replay_a)
    text = paths[which].read_text(encoding="utf-8")
    paths[which].write_text(text[: len(text) // 3], encoding="utf-8")
    assert main(["report", "retail_ops"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and str(paths[which]) in lines[0]
    assert "truncated or not JSON" in lines[0]
    assert captured.out == ""


# --- usage -----------------------------------------------------------------------------------


def test_usage_errors_and_empty_histories(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report"]) == 0
    assert "no suite has any history" in capsys.readouterr().out
    assert main(["report", "no_such_suite"]) == 2
    assert "no history for 'no_such_suite'" in capsys.readouterr().err
    _history(runs.reference)
    assert main(["report", "retail_ops"]) == 0
    assert "only one run in this series" in capsys.readouterr().out
    assert main(["report", "--output", str(root / "x.json")]) == 0  # json, as run writes it
    assert json.loads((root / "x.json").read_text())["suites"][0]["suite"] == "retail_ops"
    assert "only one run in this series" in capsys.readouterr().out
    card = runs.naive.scorecard.model_copy(update={"domain": "other_suite"})
    other = runs.naive.model_copy(update={"suite": "other_suite", "scorecard": card})
    other_path = write_entry(other)
    assert main(["report", "retail_ops", "--head", other.run_id]) == 2
    assert f"no run '{other.run_id}' in the history" in capsys.readouterr().err
    assert main(["report", "retail_ops", "--head", str(other_path)]) == 2
    assert "is a run of other_suite, not of retail_ops" in capsys.readouterr().err
    args = ["report", "--base", runs.reference.run_id, "--head", other.run_id]
    assert main(args) == 2
    assert "different suites" in capsys.readouterr().err


# --- acceptance 2: JSON round-trips ----------------------------------------------------------


def _view(runs: Runs, root: Path) -> ReportView:
    _history(runs.reference, runs.naive)
    return build_report(("retail_ops",), None, None, transcripts=False)


def test_json_round_trips(runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    view = _view(runs, root)
    text = report_json(view)
    assert report_from_json(text) == view
    assert report_json(report_from_json(text)) == text
    out = root.parent / "report.json"
    assert main(["report", "retail_ops", "--format", "json", "--output", str(out)]) == 0
    assert "regressed" in capsys.readouterr().out  # the table still prints
    assert report_from_json(out.read_bytes()) == view


def test_json_of_another_version_or_shape_is_refused(runs: Runs, root: Path) -> None:
    data = json.loads(report_json(_view(runs, root)))
    with pytest.raises(ReportFormatError, match="version 3"):
        report_from_json(json.dumps({**data, "schema_version": 3}))
    data["suites"][0]["surprise"] = True
    with pytest.raises(ReportFormatError, match=r"suites\.0\.surprise"):
        report_from_json(json.dumps(data))


def test_run_formats_round_trip_and_render(runs: Runs, root: Path) -> None:
    paths = _history(runs.reference, runs.naive)
    view = runs_view([StoredEntry(p, read_entry(p)) for p in paths])
    assert runs_from_json(runs_json(view)) == view
    md = MarkdownIt("commonmark").enable("table").render(runs_markdown(view))
    assert md.count("<table>") == 2  # the scorecards, then the naive run's failing cases
    suites = list(JUnitXml.fromstring(runs_junit(view).encode()))
    assert [s.name for s in suites] == ["retail_ops / reference", "retail_ops / reference"]
    assert [s.failures for s in suites] == [0, len(_failing(runs.naive)) + 1]  # and the gate


# --- acceptance 2: Markdown renders a table ------------------------------------------------


def test_markdown_renders_a_table_of_the_changed_cases(runs: Runs, root: Path) -> None:
    view = _view(runs, root)
    html = MarkdownIt("commonmark").enable("table").render(report_markdown(view))
    tables = re.findall(r"<table>.*?</table>", html, flags=re.S)
    assert len(tables) == 2  # the two runs, then the changed cases
    rows = re.findall(r"<tr>\s*<td><code>([^<]+)</code></td>", tables[1])
    assert set(rows) == set(_failing(runs.naive))
    assert "<strong>regressed</strong>" in tables[1]


def test_markdown_cells_cannot_break_the_table_or_inject_markup(runs: Runs, root: Path) -> None:
    case = runs.naive.scorecard.cases[0]
    evil = CheckResult(
        name="evil", passed=False, message="a | b\nnext line <img src=x onerror=alert(1)>"
    )
    bad = case.model_copy(
        update={"checks": (evil,), "outcome": Outcome(kind="check_failed", reason="failed: evil")}
    )
    held = CheckResult(name="evil", passed=True)
    good = case.model_copy(update={"checks": (held,), "outcome": Outcome(kind="passed")})
    _history(_only(runs.reference, "base-run", good), _only(runs.reference, "evil-run", bad))
    view = build_report(("retail_ops",), None, None, transcripts=False)
    html = MarkdownIt("commonmark").enable("table").render(report_markdown(view))
    assert "<img" not in html
    changes = html.split("</table>", 1)[1]
    row = re.search(r"<tr>\s*<td><code>[^<]+</code></td>.*?</tr>", changes, re.S)
    assert row is not None
    assert row.group(0).count("<td>") == 4
    assert "a | b" in row.group(0) and "&lt;img" in row.group(0)


# --- acceptance 2: JUnit XML -----------------------------------------------------------------

SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")
RESULT = ({"type", "message"}, set(), set())
# element: (allowed attributes, required attributes, allowed children), per junit-10
JUNIT10: dict[str, tuple[set[str], set[str], set[str]]] = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {
            "name",
            "tests",
            "failures",
            "errors",
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        },
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": (
        {"name", "time", "classname", "group"},
        {"name"},
        {"skipped", "error", "failure", "system-out", "system-err"},
    ),
    "failure": RESULT,
    "error": RESULT,
    "skipped": RESULT,
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}


def assert_junit10(node: ET.Element) -> None:
    """Fail unless ``node`` follows the junit-10 schema's element and attribute rules."""
    assert node.tag in JUNIT10, node.tag
    allowed, required, children = JUNIT10[node.tag]
    assert set(node.attrib) <= allowed, (node.tag, set(node.attrib) - allowed)
    assert required <= set(node.attrib), (node.tag, required - set(node.attrib))
    if "time" in node.attrib:
        assert SUREFIRE_TIME.fullmatch(node.attrib["time"]), node.attrib["time"]
    for child in node:
        assert child.tag in children, (node.tag, child.tag)
        assert_junit10(child)
    if node.tag == "testsuite":
        cases = node.findall("testcase")
        assert int(node.attrib["tests"]) == len(cases)
        assert int(node.attrib["failures"]) == sum(
            1 for c in cases if c.find("failure") is not None
        )
        assert int(node.attrib["errors"]) == sum(1 for c in cases if c.find("error") is not None)


def test_junit_of_a_failed_gate_is_a_testcase_per_case_and_one_for_the_gate(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(runs.reference, runs.naive)
    out = root.parent / "report.xml"
    assert main(["report", "retail_ops", "--format", "junit", "--output", str(out)]) == 0
    capsys.readouterr()
    assert_junit10(ET.parse(out).getroot())
    xml = JUnitXml.fromfile(str(out))
    (suite,) = list(xml)
    assert isinstance(suite, TestSuite)
    failing = _failing(runs.naive)
    # a scripted run tests its gate: the gate failed, so each failed sample is a failure too
    assert suite.tests == runs.naive.samples + 1 and suite.failures == len(failing) + 1
    assert suite.errors == 0
    props = {p.name: p.value for p in suite.properties()}
    assert props["run_id"] == runs.naive.run_id and props["base_run_id"] == runs.reference.run_id
    assert props["tested"] == "the gate"
    seen: set[str] = set()
    for case in suite:
        seen.add(case.name)
        assert case.classname == "retail_ops.reference" and case.time >= 0
        if case.name == "gate":
            (result,) = case.result
            assert isinstance(result, Failure) and result.message == (
                f"gate FAIL: {runs.naive.gate.reason}"
            )
            continue
        if case.name not in failing:
            assert case.is_passed
            continue
        (result,) = case.result
        assert isinstance(result, Failure)
        assert result.message is not None and result.message.startswith("regressed since run ")
        text = result.text or ""
        names = {ln.split(":", 1)[0].removesuffix(" [HARD GATE]") for ln in text.splitlines()[1:]}
        assert names == failing[case.name]
    assert seen == {c.case_id for c in runs.naive.scorecard.cases} | {"gate"}


def test_junit_maps_outcomes_and_survives_any_text(runs: Runs, root: Path) -> None:
    cases = list(runs.reference.scorecard.cases[:3])
    nasty = 'ctrl \x00\x07 chars, ]]> and </failure> & "quotes"'
    cases[0] = cases[0].model_copy(update={"outcome": Outcome(kind="error", reason=nasty)})
    cases[1] = cases[1].model_copy(update={"outcome": Outcome(kind="transient", reason="529")})
    head = runs.reference.model_copy(
        update={"scorecard": runs.reference.scorecard.model_copy(update={"cases": tuple(cases)})}
    )
    _history(head)
    text = report_junit(build_report((), None, None, transcripts=False))
    root_node = ET.fromstring(text)
    assert_junit10(root_node)
    (suite,) = list(JUnitXml.fromstring(text.encode()))
    results = {c.name: c.result for c in suite}
    (err,) = results[cases[0].case_id]
    # control characters are shown as \xNN escapes, as the terminal shows them
    assert isinstance(err, Error) and err.message == nasty.replace("\x00", "\\x00").replace(
        "\x07", "\\x07"
    )
    (skip,) = results[cases[1].case_id]
    assert isinstance(skip, Skipped)
    assert results[cases[2].case_id] == []
    (gate,) = results["gate"]
    assert isinstance(gate, Error)  # a third of the samples transient: inconclusive
    assert gate.message is not None
    assert gate.message.startswith("gate INCONCLUSIVE: 1/3 samples transient")
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 0, 2, 1)


def test_junit_of_a_replay_tests_the_reproduction(runs: Runs, root: Path) -> None:
    facts = list(runs.replay_a.sample_facts)
    broken = facts[4].model_copy(update={"reproduced": False, "problem": "case x: turn 1: differs"})
    facts[4] = broken
    assert runs.replay_a.replay is not None
    replay = runs.replay_a.replay.model_copy(
        update={"reproduced": False, "problems": ("case x: turn 1: differs",)}
    )
    _history(runs.replay_a.model_copy(update={"sample_facts": tuple(facts), "replay": replay}))
    text = report_junit(build_report((), None, None, transcripts=False))
    assert_junit10(ET.fromstring(text))
    (suite,) = list(JUnitXml.fromstring(text.encode()))
    results = {c.name: c.result for c in suite}
    (failure,) = results[broken.case_id]  # exactly the sample not reproduced fails
    assert isinstance(failure, Failure) and failure.message == "case x: turn 1: differs"
    (scorecard,) = results["replay reproduces the committed scorecard"]
    assert isinstance(scorecard, Skipped)  # not failed a second time for the same cause
    assert (suite.tests, suite.failures, suite.errors) == (len(facts) + 1, 1, 0)
