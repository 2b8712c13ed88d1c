"""The HTML report, opened in headless Chromium (Playwright driving the system's
chromium-headless-shell; skipped with the reason when that browser is not installed).

The report comes from ``agentic-eval report --html`` over three real retail_ops runs: the reference
agent, the naive agent, and a hostile scripted agent whose tool call and answer carry
``</script><script>...`` so its stored transcript tries to break out of the embedded JSON.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.backends import Call, ScriptedBackend, Submit
from agentic_eval.backends.scripted import AgentTask
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.cli.main import main
from agentic_eval.domains import get_domain
from agentic_eval.evaluation import RunSettings, run_session
from agentic_eval.history import HISTORY_DIR_ENV, HistoryEntry, entry_from_session, write_entry
from agentic_eval.report import script_json
from agentic_eval.store.db import Store
from agentic_eval.store.home import HOME_ENV

CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")
DOMAIN = get_domain("retail_ops")
PAYLOAD = "</script><script>window.__pwned = 1</script><!-- \u2028 & done"


def hostile(task: AgentTask) -> Any:
    """Puts a script-closing payload into its tool call and its (invalid) answer."""
    del task
    yield Call("get_supplier", {"supplier_id": PAYLOAD})
    yield Submit({"answer": PAYLOAD})


@dataclass(frozen=True)
class Report:
    html: Path
    text: str
    data: dict[str, Any]
    """``report --format json`` of the same history."""
    entries: tuple[HistoryEntry, ...]


def _run(agent: str, fn: Any, store: Store, minutes: int) -> HistoryEntry:
    settings = RunSettings(model=f"scripted:{agent}")
    specs = DOMAIN.task_specs(DOMAIN.load_cases(), settings.limits)
    spec = BackendSpec(kind="scripted", agent=agent)
    result = asyncio.run(
        run_session(
            DOMAIN.name,
            specs,
            ScriptedBackend(agent, fn),
            settings,
            "scripted",
            store=store,
            backend_spec=spec,
        )
    )
    e = entry_from_session(result, DOMAIN, specs, settings, spec)
    delta = timedelta(minutes=minutes)
    return e.model_copy(
        update={"started_at": e.started_at + delta, "finished_at": e.finished_at + delta}
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Report]:
    base = tmp_path_factory.mktemp("html")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(HOME_ENV, str(base / "home"))
        mp.setenv(HISTORY_DIR_ENV, str(base / "history"))
        store = Store()
        try:
            agents = DOMAIN.agents()
            entries = (  # one agent, "candidate", whose code changed between its runs
                _run("candidate", agents["reference"], store, 0),
                _run("candidate", agents["naive"], store, 1),
                _run("candidate", hostile, store, 2),
            )
        finally:
            store.close()
        for e in entries:
            write_entry(e)
        html = base / "report.html"
        out = base / "report.json"
        args = ["report", "retail_ops", "--html", str(html), "--format", "json"]
        assert main([*args, "--output", str(out)]) == 0
        text = html.read_text(encoding="utf-8")
        yield Report(html, text, json.loads(out.read_text(encoding="utf-8")), entries)


# --- without a browser ---------------------------------------------------------------------


def test_script_json_cannot_close_its_element_and_still_parses() -> None:
    data = {"t": PAYLOAD, "n": [1, "<>&"]}
    text = script_json(data)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == data


def test_the_page_is_self_contained_and_the_payload_stays_text(report: Report) -> None:
    text = report.text
    assert text.count("</script") == 2  # the data element and the script, nothing else
    assert "window.__pwned" in text  # it is there, as escaped text only
    assert "<script>window.__pwned" not in text
    refs = re.findall(r"""(?:src|href)=["']([^"']+)""", text)
    assert all(r.startswith("#") for r in refs), refs
    assert "Content-Security-Policy" in text and "default-src 'none'" in html.unescape(text)


def test_the_report_shows_the_diff_and_the_failed_cases(report: Report) -> None:
    (suite,) = report.data["suites"]
    diff = suite["diff"]
    naive, hostile_run = report.entries[1], report.entries[2]
    assert diff["base"]["run_id"] == naive.run_id and diff["head"]["run_id"] == hostile_run.run_id
    regressed = {c["case_id"] for c in diff["changes"] if c["kind"] == "regressed"}
    assert regressed == {c.case_id for c in naive.scorecard.cases if c.outcome.kind == "passed"}
    assert [t["available"] for t in suite["transcripts"]] == [True] * hostile_run.samples
    assert all(PAYLOAD in json.dumps(t, ensure_ascii=False) for t in suite["transcripts"])


# --- in the browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(report: Report) -> Iterator[Any]:
    """One headless Chromium for the module (after the report: no event loop is left running)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium-headless-shell)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM))
        yield b
        b.close()


@dataclass
class Page:
    page: Any
    problems: list[str]


@pytest.fixture
def page(
    browser: Any, report: Report, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Page]:
    """The report opened from file://, with console errors and page errors collected; a
    screenshot is saved when the test fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    problems: list[str] = []
    pg.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.goto(report.html.as_uri())
    pg.wait_for_selector("body[data-ready='true']", timeout=10_000)
    failed_before = request.session.testsfailed
    yield Page(pg, problems)
    if request.session.testsfailed > failed_before:
        shot = tmp_path / "failure.png"
        pg.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
    context.close()


def test_opens_with_no_console_errors(page: Page) -> None:
    assert page.problems == []
    assert page.page.title() == "agentic-eval report"


def test_shows_the_history_plot(page: Page, report: Report) -> None:
    plot = page.page.locator("svg.history-plot")
    assert plot.count() == 1 and plot.is_visible()
    points = page.page.locator("svg.history-plot circle.point")
    assert points.count() == len(report.entries)
    ids = {points.nth(i).get_attribute("data-run-id") for i in range(points.count())}
    assert ids == {e.run_id for e in report.entries}
    box = plot.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    legend = page.page.locator("ul.legend li").all_inner_texts()
    assert legend == ["scripted agent candidate"]


def test_embedded_data_parses_to_the_json_report(page: Page, report: Report) -> None:
    data = page.page.evaluate("JSON.parse(document.getElementById('report-data').textContent)")
    assert data == report.data


def test_a_script_in_a_transcript_stays_text(page: Page) -> None:
    assert page.page.evaluate("window.__pwned") is None
    first = page.page.locator("details.failed").first
    first.locator("summary").click()
    assert first.locator("pre", has_text="window.__pwned").count() >= 1
    assert first.locator("ol.turns > li").count() >= 2  # the tool call's turn, then submit
    assert "get_supplier" in first.inner_text()


def test_the_filter_hides_and_shows_change_kinds(page: Page, report: Report) -> None:
    (suite,) = report.data["suites"]
    counts = suite["diff"]["counts"]
    rows = page.page.locator("table.changes tr[data-kind='regressed']")
    still = page.page.locator("table.changes tr[data-kind='still_failing']")
    assert rows.count() == counts["regressed"] > 0 and still.count() == counts["still_failing"] > 0
    label = page.page.locator("label", has=page.page.locator("input[data-kind='regressed']"))
    assert f"({counts['regressed']})" in label.inner_text()
    shown = page.page.locator(".shown-count")
    assert shown.inner_text() == f"{counts['regressed'] + counts['still_failing']} shown"
    page.page.locator("input[data-kind='regressed']").uncheck()
    assert all(not rows.nth(i).is_visible() for i in range(rows.count()))
    assert still.first.is_visible()
    assert shown.inner_text() == f"{counts['still_failing']} shown"
    page.page.locator("input[data-kind='regressed']").check()
    assert rows.first.is_visible()


def test_expand_all_opens_every_failed_case(page: Page, report: Report) -> None:
    details = page.page.locator("details.failed")
    assert details.count() == report.entries[2].samples
    page.page.locator("button.expand").click()
    assert page.page.evaluate(
        "Array.from(document.querySelectorAll('details.failed')).every(d => d.open)"
    )


def test_chromium_is_installed_where_ci_runs() -> None:
    """CI installs the browser (.ci/run): there the browser tests must not skip."""
    if os.environ.get("CI") and not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing in CI; .ci/run installs chromium-headless-shell")
