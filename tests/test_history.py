"""Scorecard history: entries from real sessions, safe loading, the run-to-run diff, the causes it
names, baselines, run lookup, the git commit, and the ``history`` / ``baseline`` commands.

Entries come from real ``run_session`` results: scripted retail_ops runs of the reference and
naive agents, and two replays of the committed reference recording.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agentic_eval import __version__
from agentic_eval.backends import ScriptedBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.cli.main import main
from agentic_eval.core.canonical import canonical_file_text, sha256_of
from agentic_eval.core.results import Outcome
from agentic_eval.domains import get_domain
from agentic_eval.evaluation import RunSettings, run_session
from agentic_eval.history import (
    HISTORY_DIR_ENV,
    HistoryEntry,
    HistoryError,
    baseline_path,
    diff_runs,
    entry_from_session,
    entry_name,
    explained_by_checks,
    find_run,
    git_commit,
    history_dir,
    load_history,
    promote,
    read_baselines,
    read_entry,
    record_session,
    recording_ref,
    write_entry,
)
from agentic_eval.history.entry import series_key
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"
DOMAIN = get_domain("retail_ops")


@dataclass(frozen=True)
class Runs:
    reference: HistoryEntry
    naive: HistoryEntry
    replay_a: HistoryEntry
    replay_b: HistoryEntry


def _scripted(agent: str, store: Store) -> HistoryEntry:
    settings = RunSettings(model=f"scripted:{agent}")
    specs = DOMAIN.task_specs(DOMAIN.load_cases(), settings.limits)
    spec = BackendSpec(kind="scripted", agent=agent)
    backend = ScriptedBackend(agent, DOMAIN.agents()[agent])
    result = asyncio.run(
        run_session(
            DOMAIN.name, specs, backend, settings, "scripted", store=store, backend_spec=spec
        )
    )
    return entry_from_session(result, DOMAIN, specs, settings, spec)


def _replay(agent: str, store: Store) -> HistoryEntry:
    backend = ReplayBackend(agent_dir(RECORDINGS, DOMAIN.name, agent))
    settings = RunSettings.from_parameters(backend.info().model, backend.parameters())
    specs = DOMAIN.task_specs(DOMAIN.load_cases(), settings.limits)
    spec = BackendSpec(kind="replay", agent=agent, recordings=str(RECORDINGS))
    result = asyncio.run(
        run_session(DOMAIN.name, specs, backend, settings, "replay", store=store, backend_spec=spec)
    )
    return entry_from_session(result, DOMAIN, specs, settings, spec)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('store') / 'runs.db'}")
    try:
        return Runs(
            reference=_scripted("reference", store),
            naive=_scripted("naive", store),
            replay_a=_replay("reference", store),
            replay_b=_replay("reference", store),
        )
    finally:
        store.close()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "history"
    monkeypatch.setenv(HISTORY_DIR_ENV, str(folder))
    return folder


def _naive_failures(runs: Runs) -> dict[str, set[str]]:
    return {
        c.case_id: {k.name for k in c.checks if not k.passed}
        for c in runs.naive.scorecard.cases
        if c.outcome.kind != "passed"
    }


# --- entries -------------------------------------------------------------------------------


def test_entry_records_configuration_producer_and_fingerprints(runs: Runs) -> None:
    e = runs.reference
    assert e.producer.kind == "scripted" and e.producer.agent == "reference"
    assert e.config.mode == "scripted" and e.config.complete
    assert e.config.parameters == RunSettings(model="scripted:reference").parameters()
    assert e.config.backend == BackendSpec(kind="scripted", agent="reference")
    assert e.config.planned_samples == len(DOMAIN.load_cases()) == e.samples
    f = e.fingerprints
    cases = DOMAIN.load_cases()
    assert f.fixtures_sha256 == DOMAIN.fixtures_sha256()
    assert f.case_sha256 == {c.id: sha256_of(c) for c in sorted(cases, key=lambda c: c.id)}
    assert f.answer_key_sha256 == sha256_of(f.case_sha256)
    assert f.system_prompt_sha256 == sha256_of([DOMAIN.system_prompt])
    assert f.package_version == __version__
    assert f.git_commit == git_commit(REPO)
    # same tools and prompt for every agent; the agent is what differs
    assert runs.naive.fingerprints.model_copy(update={"git_commit": f.git_commit}) == f
    assert e.started_at.tzinfo is not None and e.finished_at >= e.started_at


def test_replay_entry_names_the_recording_by_content(runs: Runs) -> None:
    p = runs.replay_a.producer
    assert p.kind == "replay" and p.agent_kind == "scripted" and p.agent == "reference"
    assert p.recording is not None
    folder = agent_dir(RECORDINGS, DOMAIN.name, "reference")
    assert p.recording == recording_ref(folder)
    assert p.recording.transcripts == len(DOMAIN.load_cases())
    assert runs.replay_a.replay is not None and runs.replay_a.replay.reproduced
    assert runs.replay_b.producer.recording == p.recording


def test_record_session_writes_a_filtered_run_that_loads_back(root: Path, tmp_path: Path) -> None:
    backend = ReplayBackend(agent_dir(RECORDINGS, DOMAIN.name, "naive"))
    settings = RunSettings.from_parameters(backend.info().model, backend.parameters())
    specs = DOMAIN.task_specs(DOMAIN.load_cases()[:3], settings.limits)
    spec = BackendSpec(kind="replay", agent="naive", recordings=str(RECORDINGS))
    store = Store(f"sqlite:///{tmp_path / 'one.db'}")
    try:
        result = asyncio.run(
            run_session(
                DOMAIN.name,
                specs,
                backend,
                settings,
                "replay",
                store=store,
                backend_spec=spec,
                full=False,
            )
        )
    finally:
        store.close()
    stored = record_session(result, DOMAIN, specs, settings, spec)
    assert stored.path.parent == root / "retail_ops"
    assert load_history("retail_ops") == [stored]
    e = stored.entry
    assert not e.config.complete and e.samples == 3
    assert sorted(e.fingerprints.case_sha256) == sorted(s.case.id for s in specs)
    assert e.producer.kind == "replay" and e.producer.agent == "naive"


def test_recording_ref_changes_when_a_transcript_changes(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "reference"
    shutil.copytree(agent_dir(RECORDINGS, DOMAIN.name, "reference"), folder)
    before = recording_ref(folder)
    path = folder / "chase-001.json"
    path.write_text(path.read_text(encoding="utf-8") + " ", encoding="utf-8")
    after = recording_ref(folder)
    assert after.transcripts_sha256 != before.transcripts_sha256
    assert after.scorecard_sha256 == before.scorecard_sha256


def test_entries_refuse_unsafe_run_ids_and_naive_timestamps(runs: Runs) -> None:
    data = runs.reference.model_dump(mode="json")
    with pytest.raises(ValidationError, match="run id"):
        HistoryEntry.model_validate({**data, "run_id": "../../etc"})
    with pytest.raises(ValidationError, match="time zone"):
        HistoryEntry.model_validate({**data, "started_at": "2026-01-01T00:00:00"})
    with pytest.raises(ValidationError, match="Extra inputs"):
        HistoryEntry.model_validate({**data, "surprise": 1})


# --- files -------------------------------------------------------------------------------------


def test_history_dir_defaults_to_the_home_folder_and_moves_with_the_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, runs: Runs
) -> None:
    monkeypatch.delenv(HISTORY_DIR_ENV, raising=False)
    monkeypatch.delenv("AGENTIC_EVAL_HOME")
    assert history_dir() == Path(".agentic-eval") / "history"
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(home))
    assert history_dir() == home / "history"
    write_entry(runs.reference)  # the folder it makes ignores itself, as git sees it
    assert (home / ".gitignore").read_text().splitlines()[-1] == "*"
    monkeypatch.setenv(HISTORY_DIR_ENV, str(tmp_path / "elsewhere"))
    assert history_dir() == tmp_path / "elsewhere"


def test_written_entries_are_canonical_and_load_back_oldest_first(runs: Runs, root: Path) -> None:
    paths = [write_entry(e) for e in (runs.naive, runs.reference)]
    for path, e in zip(paths, (runs.naive, runs.reference), strict=True):
        assert path.parent == root / "retail_ops"
        assert re.fullmatch(rf"\d{{8}}T\d{{6}}\.\d{{6}}Z_{e.run_id}\.json", path.name)
        assert path.read_text(encoding="utf-8") == canonical_file_text(e)
        assert read_entry(path) == e
    loaded = load_history("retail_ops")
    assert [s.entry.run_id for s in loaded] == [runs.reference.run_id, runs.naive.run_id]
    assert sorted(p.name for p in paths) == [s.path.name for s in loaded]


def _break(path: Path, how: str) -> None:
    text = path.read_text(encoding="utf-8")
    if how == "truncated":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    elif how == "not_json":
        path.write_text("schema_version: 1\n", encoding="utf-8")
    elif how == "unknown_version":
        path.write_text(json.dumps({**json.loads(text), "schema_version": 99}), encoding="utf-8")
    elif how == "invalid":
        data = json.loads(text)
        data["scorecard"]["totals"]["passed"] = "many"
        path.write_text(json.dumps(data), encoding="utf-8")
    elif how == "misnamed":
        path.rename(path.with_name("20000101T000000.000000Z_" + path.name.split("_", 1)[1]))
    elif how == "stray":
        (path.parent / "notes.json").write_text("{}", encoding="utf-8")
    elif how == "empty":
        path.write_text("", encoding="utf-8")


@pytest.mark.parametrize(
    ("how", "fragment"),
    [
        ("truncated", "truncated or not JSON"),
        ("empty", "truncated or not JSON"),
        ("not_json", "truncated or not JSON"),
        ("unknown_version", "format version 99 is not the supported 1"),
        ("invalid", "invalid history entry at scorecard.totals.passed"),
        ("misnamed", "its name does not match its content"),
        ("stray", "not a history entry name"),
    ],
)
def test_a_bad_history_file_is_an_error_naming_it(
    runs: Runs, root: Path, how: str, fragment: str
) -> None:
    write_entry(runs.reference)
    path = write_entry(runs.naive)
    _break(path, how)
    with pytest.raises(HistoryError) as info:
        load_history("retail_ops")
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    named = {"misnamed": "20000101T", "stray": "notes.json"}.get(how, path.name)
    assert named in message


def test_an_entry_filed_under_another_suite_is_refused(runs: Runs, root: Path) -> None:
    path = write_entry(runs.reference)
    other = root / "other_suite" / path.name
    other.parent.mkdir(parents=True)
    path.rename(other)
    with pytest.raises(HistoryError, match="holds a run of 'retail_ops', not of 'other_suite'"):
        load_history("other_suite")


# --- diff -------------------------------------------------------------------------------------


def test_reference_then_naive_lists_exactly_the_cases_whose_verdict_changed(runs: Runs) -> None:
    d = diff_runs(runs.reference, runs.naive)
    failures = _naive_failures(runs)
    assert failures, "the naive agent must fail some cases for this test to mean anything"
    assert {c.case_id for c in d.changed} == set(failures)
    assert {c.case_id for c in d.of_kind("regressed")} == set(failures)
    assert d.regressions == len(failures)
    for c in d.of_kind("regressed"):
        assert {f.name for f in c.flips} == failures[c.case_id]
        assert all(f.before is True and f.after is False and f.why for f in c.flips)
    counts = d.counts()
    assert counts["unchanged"] == runs.naive.passed
    assert counts["improved"] == counts["new"] == counts["removed"] == 0
    assert d.causes == ("agent changed (scripted agent reference -> scripted agent naive)",)
    assert d.replay == ""


def test_naive_then_reference_is_all_improvements_with_checks_that_now_hold(runs: Runs) -> None:
    d = diff_runs(runs.naive, runs.reference)
    assert {c.case_id for c in d.of_kind("improved")} == set(_naive_failures(runs))
    assert d.regressions == 0
    flip = d.of_kind("improved")[0].flips[0]
    assert flip.before is False and flip.after is True and flip.why.startswith("holds now (was: ")


def test_two_replays_of_one_recording_report_no_change_and_say_so(runs: Runs) -> None:
    d = diff_runs(runs.replay_a, runs.replay_b)
    assert d.changed == () and d.regressions == 0
    assert d.causes == ()
    assert d.replay.startswith("Both runs replay the same recording")
    assert "not the agent" in d.replay


def test_a_replay_after_a_live_run_is_not_presented_as_new_behaviour(runs: Runs) -> None:
    d = diff_runs(runs.naive, runs.replay_a)
    assert d.replay.startswith("The head run is a replay of ")
    assert "it is not new agent behaviour" in d.replay
    assert "agent changed (scripted agent naive -> scripted agent reference)" in d.causes


def test_causes_name_what_changed_besides_the_agent(runs: Runs) -> None:
    base = runs.reference
    f = base.fingerprints
    case_sha = dict(f.case_sha256)
    case_sha["chase-001"] = "0" * 64
    head = base.model_copy(
        update={
            "run_id": "later",
            "fingerprints": f.model_copy(
                update={
                    "fixtures_sha256": "1" * 64,
                    "system_prompt_sha256": "2" * 64,
                    "tool_schema_sha256": "3" * 64,
                    "case_sha256": case_sha,
                    "package_version": "9.9.9",
                    "git_commit": "a" * 40,
                }
            ),
            "config": base.config.model_copy(
                update={
                    "parameters": base.config.parameters.model_copy(update={"temperature": 0.5})
                }
            ),
        }
    )
    d = diff_runs(base, head)
    causes = list(d.causes)
    assert "parameters changed: temperature 0.0 -> 0.5" in causes
    assert "system prompt changed" in causes
    assert "tool schemas changed" in causes
    assert "fixtures changed" in causes
    assert "answer key changed: expectations of 1 case(s) differ (chase-001)" in causes
    assert f"package version changed ({__version__} -> 9.9.9)" in causes
    if f.git_commit:
        assert any(c.startswith("git commit changed") for c in causes)
    changed = {c.case_id: c.expectation_changed for c in d.cases}
    assert changed["chase-001"] and not changed["chase-002"]


def test_model_swap_is_named(runs: Runs) -> None:
    def as_model(e: HistoryEntry, model: str, run_id: str) -> HistoryEntry:
        producer = e.producer.model_copy(
            update={
                "kind": "model",
                "agent_kind": "model",
                "agent": model,
                "model": model,
                "backend": "openai",
                "provider": "openai",
            }
        )
        return e.model_copy(update={"producer": producer, "run_id": run_id})

    d = diff_runs(as_model(runs.reference, "m-1", "r1"), as_model(runs.reference, "m-2", "r2"))
    assert d.causes == ("model changed (m-1 -> m-2)",)


def test_transient_is_inconclusive_and_missing_cases_are_new_or_removed(runs: Runs) -> None:
    cases = list(runs.reference.scorecard.cases)
    gone, flaky = cases[0], cases[1]
    cases = [
        c.model_copy(update={"outcome": Outcome(kind="transient", reason="HTTP 529")})
        if c is flaky
        else c
        for c in cases
        if c is not gone
    ]
    head = runs.reference.model_copy(
        update={
            "run_id": "head",
            "scorecard": runs.reference.scorecard.model_copy(update={"cases": tuple(cases)}),
        }
    )
    d = diff_runs(runs.reference, head)
    assert [c.case_id for c in d.of_kind("removed")] == [gone.case_id]
    assert [c.case_id for c in d.of_kind("inconclusive")] == [flaky.case_id]
    assert d.regressions == 0
    back = diff_runs(head, runs.reference)
    assert [c.case_id for c in back.of_kind("new")] == [gone.case_id]


def test_a_side_whose_checks_never_ran_is_explained_by_its_outcome(runs: Runs) -> None:
    failing = next(
        c
        for c in runs.naive.scorecard.cases
        if c.outcome.kind != "passed" and all(k.passed for k in c.checks if k.hard_gate)
    )
    schema = Outcome(kind="check_failed", reason="output failed its schema: x: Field required")
    trace_only = tuple(k for k in failing.checks if k.hard_gate)  # they run without an answer
    assert trace_only and all(k.passed for k in trace_only)
    broken = failing.model_copy(update={"outcome": schema, "checks": trace_only})
    head = runs.naive.model_copy(
        update={
            "run_id": "head",
            "scorecard": runs.naive.scorecard.model_copy(update={"cases": (broken,)}),
        }
    )
    d = diff_runs(runs.naive, head)
    (still,) = d.of_kind("still_failing")
    assert still.case_id == failing.case_id and still.flips == ()
    assert still.after is not None and still.after.outcome.reason.startswith("output failed")
    assert explained_by_checks(failing) and not explained_by_checks(broken)


def test_runs_of_different_suites_are_not_compared(runs: Runs) -> None:
    other = runs.naive.model_copy(update={"suite": "other"})
    with pytest.raises(ValueError, match="cannot compare"):
        diff_runs(runs.reference, other)


# --- baselines and lookup -----------------------------------------------------------------


def test_promote_a_run_and_find_it_as_its_series_baseline(runs: Runs, root: Path) -> None:
    write_entry(runs.reference)
    write_entry(runs.naive)
    stored = find_run(runs.reference.run_id[:8])
    path, marker = promote(stored, now=datetime(2026, 1, 2, tzinfo=UTC))
    key = series_key(runs.reference)
    assert path == baseline_path(key) and path.parent == root / "retail_ops" / "baselines"
    assert path.name == ".".join(key[1:]) + ".json"
    assert marker.file == entry_name(runs.reference)
    assert (marker.agent, marker.approval_mode, marker.producer_kind) == key[1:]
    history = load_history("retail_ops")
    found = read_baselines("retail_ops", history)
    assert {k: s.entry for k, s in found.items()} == {key: runs.reference}
    assert series_key(runs.naive) not in found  # another agent's series has none
    assert len(history) == 2  # the markers are not entries


def test_a_suite_wide_marker_of_format_1_is_its_runs_series_baseline(
    runs: Runs, root: Path
) -> None:
    write_entry(runs.reference)
    write_entry(runs.naive)
    legacy = {
        "schema_version": 1,
        "suite": "retail_ops",
        "run_id": runs.naive.run_id,
        "file": entry_name(runs.naive),
        "promoted_at": "2026-01-02T00:00:00Z",
    }
    (root / "retail_ops" / "baseline.json").write_text(json.dumps(legacy))
    found = read_baselines("retail_ops", load_history("retail_ops"))
    assert {k: s.entry.run_id for k, s in found.items()} == {
        series_key(runs.naive): runs.naive.run_id
    }
    promote(find_run(runs.naive.run_id))  # a series' own marker takes over from it
    assert read_baselines("retail_ops", load_history("retail_ops"))[series_key(runs.naive)]


def test_a_baseline_whose_run_left_the_history_is_an_error(runs: Runs, root: Path) -> None:
    path = write_entry(runs.reference)
    promote(find_run(runs.reference.run_id))
    path.unlink()
    with pytest.raises(HistoryError, match=r"\.json: baseline run .* is not in the history"):
        read_baselines("retail_ops", load_history("retail_ops"))
    assert read_baselines("nothing_here", []) == {}


def test_a_marker_moved_to_another_series_file_is_refused(runs: Runs, root: Path) -> None:
    write_entry(runs.reference)
    write_entry(runs.naive)
    path, _ = promote(find_run(runs.reference.run_id))
    path.rename(baseline_path(series_key(runs.naive)))
    with pytest.raises(HistoryError, match="the marker was moved or edited"):
        read_baselines("retail_ops", load_history("retail_ops"))


def test_promote_refuses_a_run_outside_the_history(runs: Runs, root: Path, tmp_path: Path) -> None:
    outside = write_entry(runs.reference, tmp_path / "elsewhere")
    with pytest.raises(HistoryError, match="not in the history"):
        promote(find_run(str(outside)))


def test_find_run_by_id_prefix_or_file_and_refuse_ambiguity(runs: Runs, root: Path) -> None:
    a = runs.reference.model_copy(update={"run_id": "abcd1111"})
    b = runs.naive.model_copy(update={"run_id": "abcd2222"})
    path = write_entry(a)
    write_entry(b)
    assert find_run("abcd1111").entry == a
    assert find_run("abcd2").entry == b
    assert find_run(str(path)).path == path
    with pytest.raises(HistoryError, match="ambiguous: retail_ops/abcd1111, retail_ops/abcd2222"):
        find_run("abcd")
    with pytest.raises(HistoryError, match="at least 4 characters"):
        find_run("abc")
    with pytest.raises(HistoryError, match="no run 'ffff'"):
        find_run("ffff")
    with pytest.raises(HistoryError, match="no such file"):
        find_run(str(root / "missing.json"))


# --- git --------------------------------------------------------------------------------------

SHA_A, SHA_B = "a" * 40, "b" * 40


def _repo(tmp_path: Path, head: str, files: dict[str, str] | None = None) -> Path:
    git = tmp_path / "repo" / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text(head, encoding="utf-8")
    for name, text in (files or {}).items():
        (git / name).parent.mkdir(parents=True, exist_ok=True)
        (git / name).write_text(text, encoding="utf-8")
    inner = tmp_path / "repo" / "src" / "deep"
    inner.mkdir(parents=True)
    return inner


@pytest.mark.parametrize(
    ("head", "files", "expected"),
    [
        ("ref: refs/heads/main\n", {"refs/heads/main": SHA_A + "\n"}, SHA_A),
        (
            "ref: refs/heads/main\n",
            {"packed-refs": f"# pack-refs\n{SHA_B} refs/heads/main\n"},
            SHA_B,
        ),
        (SHA_A + "\n", {}, SHA_A),
        ("ref: refs/heads/unborn\n", {}, None),
        ("garbage", {}, None),
        ("ref: ../outside\n", {"../outside": SHA_A}, None),  # a ref may not leave .git
    ],
)
def test_git_commit_is_read_from_dot_git_without_running_git(
    tmp_path: Path, head: str, files: dict[str, str], expected: str | None
) -> None:
    assert git_commit(_repo(tmp_path, head, files)) == expected


def test_git_commit_of_a_worktree_reads_the_shared_refs(tmp_path: Path) -> None:
    common = tmp_path / "main" / ".git"
    (common / "refs" / "heads").mkdir(parents=True)
    (common / "refs" / "heads" / "topic").write_text(SHA_B + "\n", encoding="utf-8")
    gdir = common / "worktrees" / "wt"
    gdir.mkdir(parents=True)
    (gdir / "HEAD").write_text("ref: refs/heads/topic\n", encoding="utf-8")
    (gdir / "commondir").write_text("../..\n", encoding="utf-8")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {gdir}\n", encoding="utf-8")
    assert git_commit(tree) == SHA_B


def test_git_commit_outside_a_repository_is_none(tmp_path: Path) -> None:
    lonely = tmp_path / "x"
    lonely.mkdir()
    found = git_commit(lonely)
    # tmp folders normally live outside any repository; if one encloses them, it is a real sha
    assert found is None or re.fullmatch("[0-9a-f]{40}", found)


# --- commands ------------------------------------------------------------------------------


def _shifted(e: HistoryEntry, minutes: int) -> HistoryEntry:
    delta = timedelta(minutes=minutes)
    return e.model_copy(
        update={"started_at": e.started_at + delta, "finished_at": e.finished_at + delta}
    )


def test_history_command_lists_runs_newest_first_with_rates_and_gates(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_entry(runs.reference)
    write_entry(_shifted(runs.naive, 1))
    write_entry(_shifted(runs.replay_a, 2))
    assert main(["baseline", "promote", runs.reference.run_id[:8]]) == 0
    assert "retail_ops / reference (enforce, scripted): baseline is now run" in (
        capsys.readouterr().out
    )
    assert main(["history", "retail_ops", "--format", "json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    (suite,) = data["suites"]
    assert suite["suite"] == "retail_ops"
    listed = suite["runs"]
    assert [r["run_id"] for r in listed] == [
        runs.replay_a.run_id,
        runs.naive.run_id,
        runs.reference.run_id,
    ]
    assert [r["baseline"] for r in listed] == [False, False, True]
    naive = listed[1]
    assert (naive["passed"], naive["samples"]) == (runs.naive.passed, runs.naive.samples)
    assert naive["hard_gate_failures"] == runs.naive.scorecard.totals.hard_gate_failures
    assert listed[0]["producer"].startswith("replay of ")
    assert main(["history", "retail_ops"]) == 0
    out = capsys.readouterr().out
    assert out.index(runs.replay_a.run_id[:8]) < out.index(runs.naive.run_id[:8])
    assert "baseline" in out and "scripted agent naive" in out
    total = runs.naive.samples
    assert f"{runs.naive.passed}/{total} ({100 * runs.naive.passed / total:.1f}%)" in out
    assert main(["baseline", "show"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert f"retail_ops / reference (enforce, scripted): run {runs.reference.run_id}" in shown[0]
    assert shown[1:] == [
        "retail_ops / naive (enforce, scripted): no baseline",
        "retail_ops / reference (enforce, replay): no baseline",
    ]


def test_history_command_on_a_corrupt_file_exits_2_naming_it(
    runs: Runs, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_entry(runs.reference)
    _break(path, "truncated")
    assert main(["history"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and path.name in err[0] and err[0].startswith("agentic-eval: error:")


def test_history_of_an_unknown_suite_is_a_usage_error(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "nope"]) == 2
    assert "no history for 'nope'" in capsys.readouterr().err
