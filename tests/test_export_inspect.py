"""``agentic-eval export inspect``: our runs as Inspect eval logs.

The runs are a real ``agentic-eval run retail_ops --no-history`` (replay of every recorded
agent) into a throwaway store; its ``--format json`` document is our scorecard, which every
count here is compared with. Unit tests read the written files as plain JSON and zip. The
acceptance tests install the pinned inspect-ai into a throwaway venv (cached per version), read
both formats with Inspect's own reader and dataframes, and open a log in ``inspect view`` in
headless Chromium.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli.main import main
from agentic_eval.exports.inspect import ExportError, export_run, load_run, pick_run
from agentic_eval.recordings.files import list_transcript_files, read_transcript
from agentic_eval.store.db import HOME_ENV, Store

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings" / "retail_ops"
INSPECT_VERSION = "0.3.285"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentic-eval-tests"
CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")


@dataclass(frozen=True)
class Runs:
    home: Path
    scorecards: dict[str, dict[str, Any]]
    """``run --format json``'s runs, by run id: run id, scorecard, gate."""
    agents: dict[str, str]
    """Run id -> agent."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    home = tmp_path_factory.mktemp("store")
    doc = home / "scorecards.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(HOME_ENV, str(home))
        mp.chdir(REPO)  # the recordings' paths are stored relative to where the run was made
        code = main(["run", "retail_ops", "--no-history", "--format", "json", "--output", str(doc)])
        assert code in (0, 1)  # naive agents fail the gate; the run itself worked
        data = json.loads(doc.read_text(encoding="utf-8"))
        cards = {r["run_id"]: r for r in data["runs"]}
        agents = {r: c["scorecard"]["produced_by"]["agent"] for r, c in cards.items()}
        assert {"reference", "naive", "naive-observe"} <= set(agents.values())
        yield Runs(home, cards, agents)


@pytest.fixture
def in_runs(runs: Runs, monkeypatch: pytest.MonkeyPatch) -> Runs:
    monkeypatch.setenv(HOME_ENV, str(runs.home))
    monkeypatch.chdir(REPO)
    return runs


def _run_of(runs: Runs, agent: str) -> str:
    return next(r for r, a in runs.agents.items() if a == agent)


def _policy_events(agent: str) -> int:
    """Approval checkpoint events in the agent's recording, read with our own reader."""
    folder = RECORDINGS / agent
    return sum(
        len(read_transcript(p).policy_events) for p in list_transcript_files(folder).values()
    )


def _export(run_id: str, out: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> Path:
    capsys.readouterr()
    assert main(["export", "inspect", "--run", run_id, "--format", fmt, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip()
    path = Path(printed)
    assert path.is_file() and path.parent == out and path.suffix == f".{fmt}"
    return path


def _eval_members(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as z:
        return {name: json.loads(z.read(name)) for name in z.namelist()}


# -- the files, read as plain JSON (no inspect_ai) ---------------------------------------------


@pytest.mark.parametrize("agent", ["reference", "naive", "naive-observe"])
def test_json_log_holds_every_sample_our_scores_and_the_gate(
    in_runs: Runs, agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _run_of(in_runs, agent)
    card = in_runs.scorecards[run_id]
    log = json.loads(_export(run_id, tmp_path, "json", capsys).read_text(encoding="utf-8"))
    totals = card["scorecard"]["totals"]
    assert log["version"] == 2 and log["status"] == "success"
    assert log["eval"]["task"] == "retail_ops" and log["eval"]["run_id"] == run_id
    samples = log["samples"]
    assert len(samples) == totals["cases"] == log["results"]["total_samples"]
    assert {(s["id"], s["epoch"]) for s in samples} == {
        (c["case_id"], c["sample"] + 1) for c in card["scorecard"]["cases"]
    }
    passed = sum(1 for s in samples if s["scores"]["passed"]["value"] == "C")
    assert passed == totals["passed"]
    metrics = log["results"]["scores"][0]["metrics"]
    assert metrics["passed"]["value"] == passed
    assert metrics["accuracy"]["value"] == pytest.approx(passed / totals["cases"])
    assert log["metadata"]["agentic_eval"]["gate"] == card["gate"]
    assert log["results"]["metadata"]["gate"] == card["gate"]
    by_case = {c["case_id"]: c for c in card["scorecard"]["cases"]}
    for s in samples:
        ours = by_case[s["id"]]
        assert s["scores"]["passed"]["answer"] == ours["outcome"]["kind"]
        assert s["scores"]["checks"]["value"] == {
            c["name"]: int(c["passed"]) for c in ours["checks"]
        }
        roles = [m["role"] for m in s["messages"]]
        assert roles[0] == "system" and "assistant" in roles and "tool" in roles
        kinds = [e["event"] for e in s["events"]]
        assert kinds[0] == "sample_init" and kinds[-1] == "score"
        assert kinds.count("model") == ours["turns"]
        for e in (e for e in s["events"] if e["event"] == "model"):
            at = len(e["input"])  # a turn's input is the conversation up to its reply
            assert s["messages"][:at] == e["input"]
            assert s["messages"][at] == e["output"]["choices"][0]["message"]
        assert kinds.count("tool") == ours["tool_calls"]
    approvals = [e for s in samples for e in s["events"] if e["event"] == "approval"]
    assert len(approvals) == _policy_events(agent)
    unapproved = [
        e
        for e in approvals
        if e["metadata"]["type"] == "must_approve_call" and e["decision"] != "approve"
    ]
    assert len(unapproved) == totals["unapproved_attempts"]
    assert sum(e["decision"] == "escalate" for e in approvals) == totals["unapproved_executions"]


def test_observe_and_enforce_runs_differ_as_the_checkpoint_did(
    in_runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The naive agent pays without approval: blocked (rejected, the tool call carries an
    approval error) under enforce, executed (escalated) under observe."""
    decisions: dict[str, set[str]] = {}
    for agent in ("naive", "naive-observe"):
        log = json.loads(
            _export(_run_of(in_runs, agent), tmp_path / agent, "json", capsys).read_text("utf-8")
        )
        events = [e for s in log["samples"] for e in s["events"]]
        decisions[agent] = {e["decision"] for e in events if e["event"] == "approval"}
        if agent == "naive":
            blocked = [e for e in events if e["event"] == "tool" and "error" in e]
            assert any(e["error"]["type"] == "approval" for e in blocked)
    assert "reject" in decisions["naive"] and "escalate" not in decisions["naive"]
    assert "escalate" in decisions["naive-observe"]


def test_eval_zip_has_inspects_layout_and_the_same_log(
    in_runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _run_of(in_runs, "naive-observe")
    whole = json.loads(_export(run_id, tmp_path, "json", capsys).read_text(encoding="utf-8"))
    members = _eval_members(_export(run_id, tmp_path, "eval", capsys))
    samples = {n: m for n, m in members.items() if n.startswith("samples/")}
    assert set(members) - set(samples) == {
        "_journal/start.json",
        "summaries.json",
        "header.json",
    }
    assert set(samples) == {f"samples/{s['id']}_epoch_{s['epoch']}.json" for s in whole["samples"]}
    assert sorted(samples.values(), key=lambda s: s["id"]) == sorted(
        whole["samples"], key=lambda s: s["id"]
    )
    header = members["header.json"]
    assert "samples" not in header and header == {k: v for k, v in whole.items() if k != "samples"}
    assert members["_journal/start.json"] == {
        "version": 2,
        "eval": header["eval"],
        "plan": header["plan"],
    }
    summaries = members["summaries.json"]
    assert [(s["id"], s["scores"]["passed"]["value"]) for s in summaries] == [
        (s["id"], s["scores"]["passed"]["value"]) for s in whole["samples"]
    ]


def test_the_same_run_exports_to_the_same_bytes(
    in_runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _run_of(in_runs, "reference")
    first = _export(run_id, tmp_path / "a", "eval", capsys).read_bytes()
    assert _export(run_id, tmp_path / "b", "eval", capsys).read_bytes() == first


def test_latest_exports_the_newest_run(
    in_runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newest = Store().runs(limit=1)[0].id
    capsys.readouterr()
    assert main(["export", "inspect", "--latest", "--format", "json", "--out", str(tmp_path)]) == 0
    log = json.loads(Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8"))
    assert log["eval"]["run_id"] == newest


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--run", "no-such-run"], "no run 'no-such-run' in the store"),
        ([], "give exactly one of --run ID and --latest"),
        (["--run", "x", "--latest"], "give exactly one of --run ID and --latest"),
        (["--latest", "--format", "xml"], "'xml' is not one of"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    in_runs: Runs,
    args: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    del in_runs
    assert main(["export", "inspect", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_empty_store_has_no_latest_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ[HOME_ENV])
    assert main(["export", "inspect", "--latest", "--out", str(tmp_path / "out")]) == 2
    assert "the store holds no run yet" in capsys.readouterr().err
    assert not (home / "agentic-eval.db").exists()  # never created just to be read
    Store().migrate()  # a store that exists but holds no run says the same
    assert main(["export", "inspect", "--latest", "--out", str(tmp_path / "out")]) == 2
    assert "the store holds no run yet" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_missing_or_changed_recording_is_an_error_not_an_empty_sample(
    in_runs: Runs, tmp_path: Path
) -> None:
    store = Store()
    run = pick_run(store, _run_of(in_runs, "reference"))
    with pytest.raises(ExportError, match="run the export there"):
        load_run(store, run, base=tmp_path)
    copy = tmp_path / "evals" / "recordings" / "retail_ops"
    shutil.copytree(RECORDINGS / "reference", copy / "reference")
    assert (
        len(load_run(store, run, base=tmp_path).samples)
        == in_runs.scorecards[run.id]["scorecard"]["totals"]["cases"]
    )
    victim = copy / "reference" / "gate-001.json"
    data = json.loads(victim.read_text(encoding="utf-8"))
    data["verdict"]["outcome"] = {"kind": "error", "reason": "edited", "where": ""}
    victim.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ExportError, match="has changed since the run"):
        export_run(store, run.id, tmp_path / "out", base=tmp_path)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# -- Inspect's own reader, dataframes and viewer (a throwaway venv with inspect-ai) -------------


def _venv() -> Path:
    """A venv with the pinned inspect-ai (and pandas/pyarrow for its dataframes), built once
    per version under the cache (a lock keeps parallel workers from building it twice)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    venv = CACHE / f"inspect-venv-{INSPECT_VERSION}"
    ready = venv / ".installed"
    with (CACHE / f"inspect-venv-{INSPECT_VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        pip = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                f"inspect-ai=={INSPECT_VERSION}",
                "pandas",
                "pyarrow",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if pip.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            last = (pip.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"pip could not install inspect-ai=={INSPECT_VERSION}: {last}")
        ready.write_text(INSPECT_VERSION, encoding="utf-8")
    return venv


@pytest.fixture(scope="module")
def inspect_venv() -> Path:
    return _venv()


READER = r"""
import json, sys
from inspect_ai.analysis import evals_df, events_df, samples_df
from inspect_ai.log import read_eval_log

out = {}
for path in sys.argv[1:]:
    log = read_eval_log(path)
    approvals = [e for s in log.samples for e in s.events if e.event == "approval"]
    samples = samples_df(path)
    evals = evals_df(path)
    approval_rows = events_df(path, filter=lambda e: e.event == "approval")
    out[path] = {
        "task": log.eval.task,
        "status": log.status,
        "samples": len(log.samples),
        "passed": sum(1 for s in log.samples if s.scores["passed"].value == "C"),
        "approvals": len(approvals),
        "unapproved": sum(
            1 for e in approvals
            if e.metadata["type"] == "must_approve_call" and e.decision != "approve"
        ),
        "gate": log.metadata["agentic_eval"]["gate"]["verdict"],
        "df_samples": len(samples),
        "df_passed": int((samples["score_passed"] == "C").sum()),
        "df_evals": len(evals),
        "df_approvals": len(approval_rows),
    }
print(json.dumps(out))
"""


@pytest.mark.timeout(1200)
def test_inspect_reads_both_formats_with_our_counts(
    in_runs: Runs, inspect_venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The acceptance: each exported retail_ops run opens with Inspect's reader and its
    dataframes with the pass count of our scorecard and its approval events present."""
    expected: dict[str, dict[str, Any]] = {}
    for run_id, card in in_runs.scorecards.items():
        agent = in_runs.agents[run_id]
        t = card["scorecard"]["totals"]
        want = {
            "task": "retail_ops",
            "status": "success",
            "samples": t["cases"],
            "passed": t["passed"],
            "approvals": _policy_events(agent),
            "unapproved": t["unapproved_attempts"],
            "gate": card["gate"]["verdict"],
            "df_samples": t["cases"],
            "df_passed": t["passed"],
            "df_evals": 1,
            "df_approvals": _policy_events(agent),
        }
        for fmt in ("eval", "json"):
            expected[str(_export(run_id, tmp_path / fmt, fmt, capsys))] = want
    assert any(w["approvals"] for w in expected.values())
    script = tmp_path / "read_logs.py"
    script.write_text(READER, encoding="utf-8")
    done = subprocess.run(
        [str(inspect_venv / "bin" / "python"), str(script), *expected],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "INSPECT_LOG_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == expected


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _inspect_view(venv: Path, log_dir: Path, log: Path) -> Iterator[str]:
    """``inspect view`` serving ``log_dir`` on a free local port (its output in ``log``),
    stopped on exit."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *(str(venv / "bin" / "inspect"), "view", "--log-dir", str(log_dir)),
                *("--port", str(port), "--host", "127.0.0.1"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = log.read_text(encoding="utf-8", errors="replace")[-2000:]
                    pytest.fail(f"inspect view did not start on {url}: {said}")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


FLOW_PROBE = "/api/flow?"
"""The viewer asks its server for an optional flow file, which answers 404 when there is
none: Inspect's own request, about no data of ours."""


@pytest.mark.timeout(1200)
def test_inspect_view_opens_the_log_in_a_browser(
    in_runs: Runs, inspect_venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium-headless-shell)")
    sync_api = pytest.importorskip("playwright.sync_api")
    run_id = _run_of(in_runs, "naive-observe")
    totals = in_runs.scorecards[run_id]["scorecard"]["totals"]
    _export(run_id, tmp_path / "logs", "eval", capsys)
    problems: list[str] = []
    not_found: list[str] = []
    with (
        _inspect_view(inspect_venv, tmp_path / "logs", tmp_path / "view.log") as url,
        sync_api.sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on(
                "console",
                lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None,
            )
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on(
                "response",
                lambda r: not_found.append(r.url) if r.status >= 400 else None,
            )
            page.goto(url, timeout=30_000)
            page.get_by_text(f"{totals['cases']} Samples").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "retail_ops" in body
            assert "scripted/scripted:naive-observe" in body
            page.get_by_text("gate-002", exact=True).first.click(timeout=15_000)
            page.get_by_text("by checkpoint (observe)").first.wait_for(timeout=15_000)
            sample = page.inner_text("body")
            assert "Escalated" in sample and "never_auto_execute_must_approve" in sample
        except Exception:
            shot = tmp_path / "failure.png"
            with contextlib.suppress(Exception):
                page.screenshot(path=str(shot), full_page=True)  # pyright: ignore[reportPossiblyUnbound]
            print(f"screenshot: {shot}")
            raise
        finally:
            browser.close()
    foreign = [u for u in not_found if FLOW_PROBE not in u]
    assert foreign == []
    # a failed resource is reported on the console too: the flow probe's is the only one allowed
    assert [e for e in problems if "Failed to load resource" not in e] == []
