"""``agentic-eval view`` in headless Chromium, over an SQLite store and a PostgreSQL one.

Each store is filled by the real commands, run as subprocesses (so no event loop of theirs
meets Playwright's): a replay of the committed retail_ops recordings, scripted runs of the
reference and naive agents, and a two-epoch batch of the naive agent. Then, as anything else
that can write to the database could, one sample row is made hostile (a ``</script>`` and an
``<img onerror>`` in its case id, its reason, a check, the model's text and a tool result) and
one run's agent name too. The server runs in a thread on a free port.

Checked: every page loads with no console error and no script of the payload runs; the runs are
grouped by series with a sparkline; a run lists its samples failed first, and a batch its bound,
pass^k and flaky cases; a sample shows its checks (expected beside actual), tokens, time and its
transcript turn by turn, a blocked must-approve call marked so; the diff page lists exactly the
cases ``agentic-eval report --format json`` lists for the same two runs; unknown ids are 404
pages; the command refuses a non-loopback host and serves until interrupted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from agentic_eval.report.web import ViewerServer
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalRun, EvalSample

CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")
PAYLOAD = "</script><script>window.__pwned = 1</script><img src=x onerror='window.__pwned=2'>"
REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "agentic_eval"]
pytestmark = pytest.mark.timeout(600)  # filling a store runs six commands (slow on a busy machine)


@dataclass
class Filled:
    """A store filled by real commands, and what the tests need to know about it."""

    url: str
    env: dict[str, str]
    runs: dict[str, str] = field(default_factory=lambda: {})
    """Run ids by what made them: replay, reference, naive, batch, bound (a batch gated on the
    upper bound: no history entry), hostile."""
    hostile_sample: int = 0
    blocked_sample: int = 0


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )


def _newest(store: Store) -> str:
    with store.engine.connect() as conn:
        stmt = select(EvalRun.id).order_by(EvalRun.started_at.desc()).limit(1)
        return str(conn.execute(stmt).scalar_one())


def _make_hostile(store: Store, run_id: str) -> int:
    """Put the payload into one failed sample of the run (and the run's agent name)."""
    with store.engine.begin() as conn:
        row = conn.execute(
            select(EvalSample.id, EvalSample.transcript, EvalSample.checks)
            .where(EvalSample.run_id == run_id, EvalSample.outcome != "passed")
            .order_by(EvalSample.case_id)
            .limit(1)
        ).one()
        whole = store.sample(row.id)  # the row keeps it without its request template
        assert whole is not None and whole.transcript is not None
        transcript = json.loads(whole.transcript)
        first = transcript["turns"][0]
        first["response"]["content"].insert(0, {"type": "text", "text": f"thinking {PAYLOAD}"})
        later = [
            t
            for t in transcript["turns"]
            if any(b.get("type") == "tool_result" for m in t["appended"] for b in m["content"])
        ]
        for m in later[0]["appended"] if later else []:
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    b["content"] = json.dumps({"note": PAYLOAD, "n": [1, 2]})
        checks = [dict(c) for c in row.checks]
        checks[0] = {**checks[0], "passed": False, "expected": {"x": PAYLOAD}, "actual": [PAYLOAD]}
        conn.execute(
            update(EvalSample)
            .where(EvalSample.id == row.id)
            .values(
                case_id=f"case {PAYLOAD}",
                failure_reason=f"reason {PAYLOAD}",
                transcript=json.dumps(transcript),
                request_template=None,  # stored whole
                request_at=None,
                checks=checks,
            )
        )
        conn.execute(update(EvalRun).where(EvalRun.id == run_id).values(agent=PAYLOAD))
    return int(row.id)


def _blocked_sample(store: Store, run_id: str) -> int:
    """A sample of the run whose transcript has a call the approval checkpoint blocked."""
    with store.engine.connect() as conn:
        stmt = select(EvalSample.id, EvalSample.transcript).where(EvalSample.run_id == run_id)
        for sid, text in conn.execute(stmt):
            if text and '"status":"blocked"' in text.replace(" ", ""):
                return int(sid)
    raise AssertionError(f"no blocked call in run {run_id}")


def _fill(tmp: Path, url: str | None) -> Filled:
    env = {
        **os.environ,
        "AGENTIC_EVAL_HOME": str(tmp / "home"),
        "AGENTIC_EVAL_HISTORY_DIR": str(tmp / "history"),
    }
    env.pop("AGENTIC_EVAL_DATABASE_URL", None)
    if url is not None:
        env["AGENTIC_EVAL_DATABASE_URL"] = url
    url = url or f"sqlite:///{tmp / 'home' / 'agentic-eval.db'}"
    filled = Filled(url, env)
    store = Store(url)
    try:
        commands = {
            "replay": ["run", "retail_ops", "--agent", "reference"],
            "reference": ["run", "retail_ops", "--backend", "scripted", "--agent", "reference"],
            "naive": ["run", "retail_ops", "--backend", "scripted", "--agent", "naive"],
            "batch": ["batch", "retail_ops", "--agent", "naive", "--samples", "2"],
            "bound": ["batch", "retail_ops", "--agent", "reference", "--samples", "1",
                      "--gate", "upper-bound"],
            "hostile": ["run", "retail_ops", "--backend", "scripted", "--agent", "naive",
                        "--no-history"],
        }  # fmt: skip
        for name, args in commands.items():
            done = _cli(env, *args)
            assert done.returncode in (0, 1), f"{args}: {done.stderr}"
            filled.runs[name] = _newest(store)
        filled.hostile_sample = _make_hostile(store, filled.runs["hostile"])
        filled.blocked_sample = _blocked_sample(store, filled.runs["naive"])
    finally:
        store.close()
    return filled


@dataclass
class Viewer:
    filled: Filled
    base: str
    """http://127.0.0.1:PORT"""


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def viewer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Viewer]:
    """The viewer over one store, filled by the commands, served from a thread on a free port."""
    url = request.getfixturevalue("own_pg_url") if request.param == "postgres" else None
    filled = _fill(tmp_path_factory.mktemp(request.param), url)
    store = Store(filled.url)
    server = ViewerServer(store, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Viewer(filled, server.url.rstrip("/"))
    finally:
        server.shutdown()
        server.server_close()
        store.close()


def _get(url: str, host: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


# --- without a browser ---------------------------------------------------------------------


def test_unknown_ids_are_404_pages_not_tracebacks(viewer: Viewer) -> None:
    for path in ("/run/no-such-run", "/sample/987654321", "/sample/abc", "/nothing",
                 "/diff?base=nope&head=nope"):  # fmt: skip
        status, text = _get(viewer.base + path)
        assert status == 404, path
        assert "Traceback" not in text and "<title>Not found</title>" in text
    status, text = _get(viewer.base + "/diff?base=" + viewer.filled.runs["naive"])
    assert status == 400 and "needs two runs" in text


def test_a_run_without_a_history_entry_cannot_be_diffed(viewer: Viewer) -> None:
    runs = viewer.filled.runs
    status, text = _get(f"{viewer.base}/diff?base={runs['reference']}&head={runs['bound']}")
    assert status == 404 and "has no history entry in the store" in text


def test_a_foreign_host_header_is_refused(viewer: Viewer) -> None:
    status, text = _get(viewer.base + "/", host="attacker.example:80")
    assert status == 400 and "loopback" in text


def test_the_hostile_text_is_escaped_in_every_page(viewer: Viewer) -> None:
    f = viewer.filled
    for path in ("/", f"/run/{f.runs['hostile']}", f"/sample/{f.hostile_sample}"):
        status, text = _get(viewer.base + path)
        assert status == 200
        assert "<script>window.__pwned" not in text and "<img src=x" not in text, path
        assert "&lt;/script&gt;&lt;script&gt;window.__pwned" in text, path


def _report_json(viewer: Viewer, base: str, head: str) -> dict[str, Any]:
    args = ["report", "retail_ops", "--base", base, "--head", head, "--format", "json"]
    done = _cli(viewer.filled.env, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- in the browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module (the commands filling the stores run as
    subprocesses, so its event loop meets none of theirs)."""
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
    base: str

    def open(self, path: str) -> Any:
        response = self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        return response


@pytest.fixture
def page(
    browser: Any, viewer: Viewer, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Page]:
    """A fresh page collecting console messages and page errors; a screenshot on failure."""
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
    failed_before = request.session.testsfailed
    yield Page(pg, problems, viewer.base)
    if request.session.testsfailed > failed_before:
        shot = tmp_path / "failure.png"
        pg.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
    context.close()


def test_every_page_loads_with_no_console_error(page: Page, viewer: Viewer) -> None:
    f = viewer.filled
    paths = [
        "/",
        *(f"/run/{r}" for r in f.runs.values()),
        f"/sample/{f.hostile_sample}",
        f"/sample/{f.blocked_sample}",
        f"/diff?base={f.runs['reference']}&head={f.runs['naive']}",
        f"/diff?base={f.runs['naive']}&head={f.runs['batch']}",
    ]
    for path in paths:
        response = page.open(path)
        assert response.status == 200, path
        assert page.problems == [], (path, page.problems)
        assert page.page.evaluate("window.__pwned") is None, path


def test_the_index_groups_runs_by_series_with_a_sparkline(page: Page, viewer: Viewer) -> None:
    f = viewer.filled
    page.open("/")
    series = page.page.locator("section.series[data-domain='retail_ops']")
    agents = sorted(series.nth(i).get_attribute("data-agent") for i in range(series.count()))
    # the replay; the scripted reference run and batch; the scripted naive run and batch; the
    # hostile run, whose agent name is the payload
    assert agents == sorted(["reference", "reference", "naive", PAYLOAD])
    naive = page.page.locator("section.series[data-agent='naive']")
    assert naive.locator("svg.sparkline circle.point").count() == 2
    assert naive.locator("tr[data-run-id]").count() == 2
    hostile = page.page.locator("section.series", has_text="window.__pwned")
    assert hostile.count() == 1 and PAYLOAD in hostile.inner_text()
    assert page.page.locator(f"tr[data-run-id='{f.runs['batch']}'] .verdict-FAIL").count() == 1


def test_a_batch_shows_its_bound_pass_k_and_samples_failed_first(
    page: Page, viewer: Viewer
) -> None:
    page.open(f"/run/{viewer.filled.runs['batch']}")
    stats = page.page.locator("ul.stats").inner_text()
    assert "upper bound (95%, Clopper-Pearson)" in stats and "pass^k (k=2)" in stats
    assert page.page.locator("p.flaky").inner_text() == "flaky cases: none"
    rows = page.page.locator("table.samples tr[data-outcome]")
    outcomes = [rows.nth(i).get_attribute("data-outcome") for i in range(rows.count())]
    assert len(outcomes) == 68
    first_pass = outcomes.index("passed")
    assert all(o != "passed" for o in outcomes[:first_pass])
    assert all(o == "passed" for o in outcomes[first_pass:])


def test_a_sample_shows_checks_and_its_transcript_turn_by_turn(page: Page, viewer: Viewer) -> None:
    page.open(f"/sample/{viewer.filled.hostile_sample}")
    assert page.page.evaluate("window.__pwned") is None
    failed = page.page.locator("table.checks-table tr.failed").first
    cells = failed.locator("td pre")
    assert PAYLOAD in cells.nth(0).inner_text() and PAYLOAD in cells.nth(1).inner_text()
    turns = page.page.locator("ol.turns > li.turn")
    assert turns.count() >= 2
    assert PAYLOAD in turns.first.locator(".role-assistant + pre").first.inner_text()
    result = page.page.locator("pre", has_text='"note"').first.inner_text()
    assert json.loads(result) == {"n": [1, 2], "note": PAYLOAD}
    assert '\n  "n": [' in result  # pretty-printed
    assert "input /" in turns.first.locator(".turn-head").inner_text()


def test_a_blocked_call_is_marked_and_nothing_executed(page: Page, viewer: Viewer) -> None:
    page.open(f"/sample/{viewer.filled.blocked_sample}")
    blocked = page.page.locator(".status-tool-blocked")
    assert blocked.count() >= 1
    assert "BLOCKED by the approval checkpoint" in blocked.first.inner_text()
    events = page.page.locator("table.policy tr[data-event='must_approve_call']")
    assert events.count() >= 1
    assert "not executed" in events.first.inner_text()


PAIRS = {
    ("reference", "naive"): {"regressed"},
    ("naive", "reference"): {"improved"},
    ("naive", "batch"): {"still_failing", "new"},  # the batch's second epoch is new
}


@pytest.mark.parametrize("pair", list(PAIRS), ids="-".join)
def test_the_diff_lists_exactly_the_cases_report_lists(
    page: Page, viewer: Viewer, pair: tuple[str, str]
) -> None:
    base, head = (viewer.filled.runs[p] for p in pair)
    (suite,) = _report_json(viewer, base, head)["suites"]
    expected = sorted(
        (c["kind"], c["case_id"] if c["sample"] == 0 else f"{c['case_id']}@{c['sample']}")
        for c in suite["diff"]["changes"]
    )
    page.open(f"/diff?base={base}&head={head}")
    page.page.wait_for_selector("body[data-ready='true']")
    rows = page.page.locator("table.changes tr[data-kind]")
    shown = sorted(
        (rows.nth(i).get_attribute("data-kind"), rows.nth(i).get_attribute("data-case"))
        for i in range(rows.count())
    )
    assert shown == expected
    kinds = {k for k, _ in expected}
    assert kinds == PAIRS[pair]
    data = page.page.evaluate("JSON.parse(document.getElementById('report-data').textContent)")
    assert data["suites"][0]["diff"]["counts"] == suite["diff"]["counts"]
    box = page.page.locator(f"input[data-kind='{sorted(kinds)[0]}']")
    box.uncheck()
    assert page.problems == []


# --- the command -------------------------------------------------------------------------------


def test_view_refuses_a_non_loopback_host() -> None:
    for host in ("0.0.0.0", "192.168.1.5", "example.com"):
        done = subprocess.run(
            [*CLI, "view", "--host", host], capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert done.returncode == 2
        assert done.stderr.strip().count("\n") == 0 and "not a loopback address" in done.stderr


def test_view_without_a_store_says_so_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "view", "--port", "0"], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "no store at" in done.stderr and done.stderr.count("\n") == 1


def test_view_prints_its_url_and_serves_until_interrupted(viewer: Viewer) -> None:
    filled = viewer.filled
    proc = subprocess.Popen(
        [*CLI, "view", "--port", "0", "--database", filled.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=filled.env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" at ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/")
        status, text = _get(url)
        assert status == 200 and "retail_ops" in text
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopped" in err


def test_only_loopback_hosts_count_as_loopback() -> None:
    from agentic_eval.report.web import is_loopback

    assert all(map(is_loopback, ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost")))
    assert not any(map(is_loopback, ("0.0.0.0", "10.0.0.1", "::", "example.com", "")))


def test_a_replayed_sample_shows_the_recorded_transcript(page: Page, viewer: Viewer) -> None:
    run = viewer.filled.runs["replay"]
    page.open(f"/run/{run}")
    page.page.locator("table.samples a").first.click()
    page.page.wait_for_load_state("load")
    assert "Read from evals/recordings/retail_ops/reference/" in page.page.inner_text("body")
    assert page.page.locator("ol.turns > li.turn").count() >= 1
    assert page.problems == []
