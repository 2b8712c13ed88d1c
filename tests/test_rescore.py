"""``agentic-eval rescore``: recorded samples re-judged under today's checks, keyless.

Each test records scripted retail_ops agents into a temporary folder, changes a check the way a
domain author would (a tightened gate, a gate taken away), and drives ``rescore`` through the
public CLI. What "should" change is always computed from the files and from a fresh record run
under the changed check, never typed in.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentic_eval import CaseSpec, CheckContext, CheckResult, TaskKind
from agentic_eval.checks.base import FunctionCheck
from agentic_eval.cli.main import main
from agentic_eval.core.realdata import MARK
from agentic_eval.domains import all_domains
from agentic_eval.domains.retail_ops.fixtures import FIXTURES_PATH

DOMAIN = "retail_ops"
AGENTS = ("naive", "reference")
GATE = "never_auto_execute_must_approve"
TIGHT = "at_most_median_tool_calls"


def _record(root: Path, agent: str) -> None:
    code = main(["run", DOMAIN, "--backend", "scripted", "--agent", agent, "--record",
                 "--recordings", str(root), "--no-history"])  # fmt: skip
    assert code in (0, 1)  # the gate's verdict; the recording is what matters here
    assert (root / DOMAIN / agent / "scorecard.json").is_file()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root``: its bytes and modification time."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _without_verdict(raw: bytes) -> dict[str, Any]:
    data = json.loads(raw)
    data.pop("verdict")
    return data


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def recorded_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The naive and reference agents of retail_ops, recorded once for the module."""
    base = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as env:  # conftest's isolation is per test: do it here
        env.setenv("AGENTIC_EVAL_HOME", str(base / "home"))
        env.setenv("AGENTIC_EVAL_HISTORY_DIR", str(base / "history"))
        env.delenv("EVAL_FIXTURE_DIR", raising=False)
        for agent in AGENTS:
            _record(base / "recordings", agent)
    return base / "recordings"


@pytest.fixture
def recorded(recorded_once: Path, tmp_path: Path) -> Path:
    """A private copy of ``recorded_once``, safe to edit."""
    root = tmp_path / "recordings"
    shutil.copytree(recorded_once, root)
    return root


def _patch_kinds(
    monkeypatch: pytest.MonkeyPatch, edit: Callable[[tuple[Any, ...]], tuple[Any, ...]]
) -> None:
    domain = all_domains()[DOMAIN]
    original = domain.task_kind

    def task_kind(case: CaseSpec) -> TaskKind:
        kind = original(case)
        return replace(kind, checks=edit(kind.checks))

    monkeypatch.setattr(domain, "task_kind", task_kind)


def tighten(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """A new hard gate: no more tool calls than the median naive transcript makes (computed
    from the recording, so some cases pass it and some fail it)."""
    counts = sorted(
        len(json.loads(p.read_bytes())["tool_calls"])
        for p in (root / DOMAIN / "naive").glob("*-*.json")
    )
    limit = counts[len(counts) // 2]

    def at_most(ctx: CheckContext[Any]) -> CheckResult:
        n = len(ctx.trace.tool_calls)
        return CheckResult(name=TIGHT, passed=n <= limit, hard_gate=True, actual=n)

    _patch_kinds(monkeypatch, lambda checks: (*checks, FunctionCheck(TIGHT, at_most, True)))


def loosen(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """The approval gate taken away (as tests/test_mutants.py ``_without_gate`` does)."""
    del root

    def passes(ctx: CheckContext[Any]) -> CheckResult:
        del ctx
        return CheckResult(name=GATE, passed=True, hard_gate=True)

    _patch_kinds(
        monkeypatch,
        lambda checks: tuple(
            FunctionCheck(GATE, passes, hard_gate=True) if c.name == GATE else c for c in checks
        ),
    )


def _shown(verdict: dict[str, Any]) -> str:
    gates = [c["name"] for c in verdict["checks"] if c["hard_gate"] and not c["passed"]]
    kind = verdict["outcome"]["kind"]
    return f"{kind} [{', '.join(gates)}]" if gates else kind


@pytest.mark.parametrize("change", [tighten, loosen], ids=["tightened", "loosened"])
def test_rescore_rewrites_only_verdicts_and_the_scorecard_a_record_run_writes(
    recorded: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[pytest.MonkeyPatch, Path], None],
) -> None:
    folder = recorded / DOMAIN / "naive"
    before = _files(folder)
    change(monkeypatch, recorded)
    replay = ("run", DOMAIN, "--agent", "naive", "--recordings", str(recorded), "--no-history")
    code, out, err = _cli(capsys, *replay)
    assert code == 1 and "verdict not reproduced" in out + err

    code, out, err = _cli(capsys, "rescore", DOMAIN, "--agent", "naive", "--recordings",
                          str(recorded))  # fmt: skip
    assert (code, err) == (0, "")
    after = _files(folder)
    assert set(after) == set(before)
    changed = sorted(n for n in before if n != "scorecard.json" and after[n] != before[n])
    assert changed, "the changed check moved no verdict: the test would prove nothing"
    for name in before:
        if name != "scorecard.json":  # every transcript: the same apart from its verdict
            assert _without_verdict(after[name]) == _without_verdict(before[name]), name
    # one line per changed verdict, old -> new, read from the files themselves
    lines = [line for line in out.splitlines() if " -> " in line]
    assert len(lines) == len(changed)
    for name, line in zip(changed, lines, strict=True):
        old, new = json.loads(before[name])["verdict"], json.loads(after[name])["verdict"]
        shown = f"  {name.removesuffix('.json')}: {_shown(old)} -> {_shown(new)}"
        if _shown(old) != _shown(new):
            assert line == shown
        else:  # it reads the same: the line names the checks whose results moved
            was = {c["name"]: c for c in old["checks"]}
            moved = [c["name"] for c in new["checks"] if was.get(c["name"]) != c]
            assert line.startswith(f"{shown} (") and moved, line
            assert all(m in line for m in moved), (moved, line)
    n = len(changed)
    summary = f"  {n} re-judged, {len(before) - 1 - n} unchanged, 0 refused: rewrote {n} "
    assert f"{summary}transcript{'s' if n != 1 else ''} and scorecard.json" in out

    # byte for byte what a fresh record run under the changed check writes, scorecard included
    fresh = tmp_path / "fresh"
    _record(fresh, "naive")
    assert after == _files(fresh / DOMAIN / "naive")
    assert _cli(capsys, *replay)[0] == 0  # and replay now reproduces every file

    # rescoring again changes nothing; a stale scorecard alone (a rescore stopped before its
    # last write) is rebuilt
    code, out, _ = _cli(capsys, "rescore", DOMAIN, "--recordings", str(recorded), "--agent",
                        "naive")  # fmt: skip
    assert code == 0 and "0 re-judged" in out and "nothing to write" in out
    assert _files(folder) == after
    (folder / "scorecard.json").write_bytes(before["scorecard.json"])
    code, out, _ = _cli(capsys, "rescore", DOMAIN, "--recordings", str(recorded), "--agent",
                        "naive")  # fmt: skip
    assert code == 0 and "0 re-judged" in out and "rewrote scorecard.json" in out
    assert _files(folder) == after


def _first_tool_case(folder: Path) -> tuple[str, dict[str, Any]]:
    """A transcript with a tool call and more than one turn (one that replays some way), not
    one of the two replay reads up front (``broken-first`` breaks one of those)."""
    for path in sorted(folder.glob("*-*.json"))[2:]:
        data = json.loads(path.read_bytes())
        if data["tool_calls"] and len(data["turns"]) > 1:
            return path.stem, data
    raise AssertionError("no transcript with tool calls")


def _edit_response(data: dict[str, Any]) -> str:
    response = data["turns"][0]["response"]
    text = json.dumps(response)
    assert '"id": "call_0_0"' in text
    data["turns"][0]["response"] = json.loads(text.replace('"call_0_0"', '"call_0_9"'))
    return "field turns[0].response"


def _edit_tool_result(data: dict[str, Any]) -> str:
    data["tool_calls"][0]["result"] += " (edited)"
    return "field tool_calls[0].result"


def _edit_request(data: dict[str, Any]) -> str:
    data["request"]["system"] += " Edited."
    return "field request.system"


@pytest.mark.parametrize(
    "edit",
    [
        _edit_response,
        _edit_tool_result,
        _edit_request,
        "broken",
        "broken-first",
        "missing",
        "stale",
    ],
)
def test_a_sample_whose_trace_does_not_reproduce_is_refused_and_its_folder_left_untouched(
    recorded: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], str] | str,
) -> None:
    folder = recorded / DOMAIN / "naive"
    tighten(monkeypatch, recorded)
    case, data = _first_tool_case(folder)
    path = folder / f"{case}.json"
    if edit == "broken":
        path.write_bytes(b'{"schema_version": 2, "case_id": ')
        fragment = "not JSON"
    elif edit == "broken-first":  # it sets the replay's settings: nothing in the folder replays
        path = sorted(folder.glob("*-*.json"))[0]
        case = path.stem
        path.write_bytes(b"[]")
        fragment = "transcript format version None"
    elif edit == "missing":
        path.unlink()
        fragment = "no recording in"
    elif edit == "stale":  # a transcript of a case the case file no longer has
        case = "gone-001"
        path = folder / f"{case}.json"
        path.write_text(json.dumps({**data, "case_id": case}))
        fragment = "a case that retail_ops's case file no longer has"
    else:
        assert callable(edit)
        fragment = edit(data)
        path.write_text(json.dumps(data, indent=1))
    (folder / "notes.json").write_text('{"note": "a user\'s file, not a transcript: left alone"}')
    naive_before, reference_before = _files(folder), _files(recorded / DOMAIN / "reference")

    code, out, err = _cli(capsys, "rescore", DOMAIN, "--recordings", str(recorded))
    assert code == 1
    refused = [line for line in out.splitlines() if line.startswith("  refused: ")]
    assert len(refused) == 1, out
    assert f"case {case}" in refused[0] and fragment in refused[0], refused[0]
    summary = r"\n  \d+ re-judged, \d+ unchanged, 1 refused( \(\d+ not replayed\))?: "
    assert re.search(summary + r"folder left untouched\n", out), out
    assert err.strip() == "agentic-eval: error: 1 sample refused in 1 folder; left untouched"
    assert _files(folder) == naive_before  # every file of the folder, byte for byte
    # ... though other samples' verdicts moved: only the refusal kept them from being written
    assert (" -> " in out.split("retail_ops / reference")[0]) == (edit != "broken-first")
    # the rest was processed: the reference folder was re-judged and written
    assert _files(recorded / DOMAIN / "reference") != reference_before
    assert "retail_ops / reference" in out and "rewrote" in out.split("retail_ops / reference")[1]


def test_dry_run_writes_nothing_and_prints_what_the_rescore_then_does(
    recorded: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tighten(monkeypatch, recorded)
    monkeypatch.chdir(tmp_path)
    everything = _tree(tmp_path)
    code, dry, err = _cli(capsys, "rescore", "--recordings", str(recorded), "--dry-run")
    assert (code, err) == (0, "")
    assert _tree(tmp_path) == everything  # no file written, touched or added anywhere
    assert "dry run, would rewrite" in dry and "wrote nothing" in dry
    replay = ("run", DOMAIN, "--recordings", str(recorded), "--no-history")
    assert _cli(capsys, *replay)[0] == 1  # still not reproduced

    everything = _tree(tmp_path)
    code, wet, err = _cli(capsys, "rescore", "--recordings", str(recorded))
    assert (code, err) == (0, "")
    changes = [line for line in wet.splitlines() if " -> " in line or " / " in line]
    assert changes == [line for line in dry.splitlines() if " -> " in line or " / " in line]
    assert sum(" -> " in line for line in changes) > 0
    # only recordings were rewritten (no history entry, no store, no file in the working
    # folder), and no file was added
    now = _tree(tmp_path)
    assert set(now) == set(everything)
    rewritten = {name for name in now if now[name] != everything[name]}
    assert rewritten and all(name.startswith("recordings/") for name in rewritten), rewritten
    assert _cli(capsys, *replay)[0] == 0


@pytest.fixture
def real_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    data = json.loads(FIXTURES_PATH.read_text())
    data["suppliers"][0]["contact_email"] = "someone@real-customer.example"
    folder = tmp_path / "real" / DOMAIN
    folder.mkdir(parents=True)
    (folder / "fixtures.json").write_text(json.dumps(data))
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "real"))
    yield tmp_path


def test_recordings_of_real_fixtures_are_not_rewritten_inside_a_git_work_tree(
    real_fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = real_fixtures / "private"
    _record(outside, "naive")
    repo = real_fixtures / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, capture_output=True, timeout=60)
    inside = repo / "recordings"
    shutil.copytree(outside, inside)
    tighten(monkeypatch, outside)
    before = _tree(inside)
    capsys.readouterr()

    code, out, err = _cli(capsys, "rescore", DOMAIN, "--recordings", str(inside))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "refusing to rewrite recordings" in lines[0], lines
    assert _tree(inside) == before
    code, out, _ = _cli(capsys, "rescore", DOMAIN, "--recordings", str(inside), "--dry-run")
    assert code == 0 and "would rewrite" in out  # reading is a replay: allowed
    assert _tree(inside) == before

    code, out, _ = _cli(capsys, "rescore", DOMAIN, "--recordings", str(outside))
    assert code == 0 and "rewrote" in out
    for path in sorted((outside / DOMAIN / "naive").iterdir()):
        assert f'"{MARK}"' in path.read_text(), path.name  # the rewritten files keep the mark


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["no_such_domain"], "unknown domain 'no_such_domain'"),
        ([DOMAIN, "--agent", "nobody"], "no recordings of agent 'nobody' for retail_ops"),
        (["--agent", "nobody"], "no domain has recordings of agent 'nobody'"),
        (["browser_ops"], "no recordings of browser_ops under"),
        (["--recordings", "{tmp}/nowhere"], "no recordings folder at"),
        (["--recordings", "{tmp}/a-file"], "is a file"),
        ([DOMAIN, "--agent", "naive", "--recordings", "{tmp}/odd"], "not a regular file"),
        (["--bogus"], "No such option"),
    ],
)
def test_usage_errors_exit_2_with_one_line_and_write_nothing(
    recorded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    fragment: str,
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    odd = tmp_path / "odd"
    shutil.copytree(recorded, odd)
    (odd / DOMAIN / "naive" / "x-001.json").mkdir()  # a transcript name that is a folder
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if "--recordings" not in args:
        args += ["--recordings", str(recorded)]
    everything = _tree(tmp_path)
    code, out, err = _cli(capsys, "rescore", *args)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("agentic-eval: error:"), lines
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in err
    assert _tree(tmp_path) == everything
