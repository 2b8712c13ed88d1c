"""History is evidence: a tampered entry is noticed (issue 17, class 3).

An entry that disagrees with itself is refused on read, naming the field; an entry the store's
sample rows (or its copy of the entry) contradict is refused by `report`; entries carry the
sha256 of the previous entry of their series, so a deletion or reordering is reported and
`--fail-on-regression` will not gate on it; a lone surrogate is a clear error in every format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli.main import main
from agentic_eval.evaluation.gate import build_scorecard
from agentic_eval.history import HistoryEntry, load_history, read_entry
from agentic_eval.history.consistency import inconsistency
from agentic_eval.history.entry import entry_digest, series_key
from agentic_eval.history.verify import chain_problems, store_problems

REPO = Path(__file__).resolve().parent.parent
SCRIPTED = ("run", "retail_ops", "--backend", "scripted", "--cases", "gate-00*")


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.delenv("AGENTIC_EVAL_DATABASE_URL", raising=False)
    return tmp_path / "history"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _runs(capsys: pytest.CaptureFixture[str], *agents: str) -> list[Path]:
    """Scripted runs, in order; ``"naive as reference"`` files the naive agent's run under the
    reference label (one series whose agent got worse)."""
    for agent in agents:
        name, _, label = agent.partition(" as ")
        _cli(capsys, *SCRIPTED, "--agent", name, *(("--label", label) if label else ()))
    return [s.path for s in load_history("retail_ops")]


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, sort_keys=True, indent=2), encoding="utf-8")


def _all_passed(data: dict[str, Any]) -> None:
    for case in data["scorecard"]["cases"]:
        case["outcome"] = {"kind": "passed", "reason": "", "where": ""}


def test_every_case_edited_to_passed_is_refused_naming_the_field(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, head = _runs(capsys, "reference", "naive")
    _edit(head, _all_passed)
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 2
    assert "refused: the entry disagrees with itself: scorecard.cases[" in err
    assert "outcome is passed but its checks failed" in err
    for args in (("history",), ("report", "--format", "json")):  # every reader refuses it
        code, _, err = _cli(capsys, *args)
        assert code == 2 and "disagrees with itself" in err


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("scorecard.gate.verdict", lambda d: d["scorecard"]["gate"].update(verdict="PASS")),
        ("gate.verdict", lambda d: d["gate"].update(verdict="PASS")),
        ("scorecard.totals.passed", lambda d: d["scorecard"]["totals"].update(passed=7)),
        ("gate.failure_rate", lambda d: d["gate"].update(failure_rate=0.0)),
        (
            "hard_gate_failed",
            lambda d: [c.update(hard_gate_failed=False) for c in d["scorecard"]["cases"]],
        ),
        (
            "config.parameters.max_failure_rate",
            lambda d: (
                d["config"]["parameters"]["gate"].update(max_failure_rate=1.0)
                if "gate" in d["config"]["parameters"]
                else d["config"]["parameters"].update(max_failure_rate=1.0)
            ),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_an_entry_that_disagrees_with_itself_is_refused(
    field: str, change: Any, history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (path,) = _runs(capsys, "naive")
    _edit(path, change)
    code, _, err = _cli(capsys, "history", "retail_ops")
    assert code == 2
    assert field in err and "disagrees with itself" in err


def _consistent_all_passed(data: dict[str, Any]) -> None:
    """The fully consistent forgery: every check held, every case passed, totals and gates
    recomputed with the gate arithmetic."""
    entry = HistoryEntry.model_validate(data)
    cases = [
        c.model_copy(
            update={
                "outcome": c.outcome.model_copy(
                    update={"kind": "passed", "reason": "", "where": ""}
                ),
                "checks": tuple(k.model_copy(update={"passed": True}) for k in c.checks),
                "hard_gate_failed": False,
                "unapproved_attempts": 0,
                "unapproved_executions": 0,
            }
        )
        for c in entry.scorecard.cases
    ]
    gate = entry.scorecard.gate
    card = build_scorecard(
        entry.suite,
        entry.scorecard.produced_by,
        cases,
        max_failure_rate=gate.max_failure_rate,
        max_transient=gate.max_transient,
    )
    forged = entry.model_copy(update={"scorecard": card, "gate": card.gate})
    assert inconsistency(forged) is None
    data.clear()
    data.update(forged.model_dump(mode="json"))


def test_a_fully_consistent_forgery_is_caught_by_the_store(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, head = _runs(capsys, "reference", "naive as reference")
    code, _, _ = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 1  # the reference series regressed
    _edit(head, _consistent_all_passed)
    read_entry(head)  # it agrees with itself...
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 2  # ...but not with the store
    assert "differs from the store's copy of the entry" in err and "edited or deleted" in err
    code, _, err = _cli(capsys, "history", "retail_ops")
    assert code == 0 and "warning: retail_ops:" in err and "disagrees with the store" in err


def test_without_the_stores_copy_the_sample_rows_still_contradict_it(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentic_eval.store import Store

    (path,) = _runs(capsys, "naive")
    _edit(path, _consistent_all_passed)
    (stored,) = load_history("retail_ops")
    store = Store()
    rows = store.sample_verdicts([stored.entry.run_id])
    (line,) = store_problems([stored], rows, {})
    assert "is passed in the entry but check_failed in the store's sample rows" in line
    assert store_problems([stored], {}, {}) == []  # a run the store does not hold: nothing to say


def test_entries_are_chained_and_a_deleted_or_reordered_entry_is_reported(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, third = _runs(capsys, "naive", "naive", "naive")
    stored = load_history("retail_ops")
    assert stored[0].entry.previous_sha256 is None
    assert stored[1].entry.previous_sha256 == entry_digest(first.read_bytes())
    assert stored[2].entry.previous_sha256 == entry_digest(second.read_bytes())
    assert len({series_key(s.entry) for s in stored}) == 1
    assert chain_problems(stored) == []
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 0 and "chain" not in err

    second.unlink()
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 2
    assert f"{third.name}: the entry before it in series naive (enforce, scripted)" in err
    assert "is missing: deleted or edited" in err
    assert "entry file is gone: deleted, moved or renamed" in err  # the store recorded it
    code, _, err = _cli(capsys, "history")
    assert code == 0 and "is missing" in err and "entry file is gone" in err

    store_file = history.parent / "home" / "agentic-eval.db"
    store_file.unlink()  # the history alone, as on another machine: only the chain tells
    code, _, err = _cli(capsys, "report", "retail_ops")
    assert code == 0 and "warning: history chain" in err  # reported, the diff still shown
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 2 and "history chain is broken" in err


def test_deleting_the_newest_entry_is_noticed_by_the_store(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, newest = _runs(capsys, "reference", "reference", "naive as reference")
    assert _cli(capsys, "report", "retail_ops", "--fail-on-regression")[0] == 1
    newest.rename(newest.with_name("." + newest.name))  # hidden, as good as deleted
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 2
    assert "entry file is gone: deleted, moved or renamed" in err


def test_pruning_the_oldest_entries_is_allowed(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, _, _ = _runs(capsys, "naive", "naive", "naive", "naive")
    first.unlink()
    second.unlink()
    assert chain_problems(load_history("retail_ops")) == []
    code, _, err = _cli(capsys, "report", "retail_ops", "--fail-on-regression")
    assert code == 0, err


def test_a_reordered_chain_is_reported(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = _runs(capsys, "naive", "naive")
    older = json.loads(first.read_text())
    newer = json.loads(second.read_text())
    # swap when the two runs finished, keeping each file's bytes otherwise: the link now runs
    # from an entry that finished later to one that finished earlier
    older["finished_at"], newer["finished_at"] = newer["finished_at"], older["finished_at"]
    first.write_text(json.dumps(older, sort_keys=True, indent=2))
    newer["previous_sha256"] = entry_digest(first.read_bytes())
    second.write_text(json.dumps(newer, sort_keys=True, indent=2))
    problems = chain_problems(load_history("retail_ops"))
    assert any("finished later: the history was reordered" in p for p in problems), problems


def test_two_series_in_one_suite_chain_separately(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs(capsys, "naive", "reference", "naive", "reference")
    stored = load_history("retail_ops")
    assert chain_problems(stored) == []
    assert sum(s.entry.previous_sha256 is None for s in stored) == 2


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "junit"])
def test_a_lone_surrogate_is_a_clear_error_in_every_format(
    fmt: str, history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (path,) = _runs(capsys, "naive")
    text = path.read_text(encoding="utf-8").replace('"gate-001"', '"gate-\\ud800"')
    path.write_text(text, encoding="utf-8")
    code, _, err = _cli(capsys, "report", "--format", fmt)
    assert code == 2, err
    assert "invalid history entry at " in err and "holds a lone surrogate" in err
    code, _, err = _cli(capsys, "history", "--format", "json" if fmt == "junit" else fmt)
    assert code == 2 and "lone surrogate" in err


def test_format_1_entries_still_read_as_unchained() -> None:
    committed = sorted((REPO / "evals" / "history").rglob("2*.json"))
    assert committed, "the repository keeps a format-1 entry as a reading test"
    for path in committed:
        entry = read_entry(path)
        assert entry.schema_version == 1 and entry.previous_sha256 is None


def test_recomputed_totals_match_on_real_entries(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sanity of the consistency rule on what runs really write: transient, error, hard gates."""
    for agent in ("naive", "reference"):
        _cli(capsys, "run", "retail_ops", "--backend", "scripted", "--agent", agent)
        _cli(capsys, "run", "approval_audit", "--backend", "scripted", "--agent", agent)
    for suite in ("retail_ops", "approval_audit"):
        for s in load_history(suite):
            assert inconsistency(s.entry) is None


def _rename_failing(data: dict[str, Any]) -> None:
    for case in data["scorecard"]["cases"]:
        if case["outcome"]["kind"] != "passed":
            case["case_id"] = "zz-" + case["case_id"]
    data["scorecard"]["cases"].sort(key=lambda c: (c["case_id"], c["sample"]))


def _drop_failing(data: dict[str, Any]) -> None:
    entry = HistoryEntry.model_validate(data)
    kept = [c for c in entry.scorecard.cases if c.outcome.kind == "passed"]
    gate = entry.scorecard.gate
    card = build_scorecard(
        entry.suite,
        entry.scorecard.produced_by,
        kept,
        max_failure_rate=gate.max_failure_rate,
        max_transient=gate.max_transient,
    )
    data.clear()
    data.update(
        entry.model_copy(update={"scorecard": card, "gate": card.gate}).model_dump(mode="json")
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_rename_failing, "is not among the cases fingerprinted when it ran"),
        (_drop_failing, "was run (fingerprinted) but has no result"),
        (lambda d: d.update(suite="approval_audit"), "but the entry's suite is 'approval_audit'"),
        (lambda d: d["producer"].update(agent="reference"), "producer.agent is 'reference'"),
    ],
    ids=["renamed-cases", "dropped-cases", "other-suite", "other-producer"],
)
def test_cheap_edits_that_hide_failures_are_refused_without_a_store(
    change: Any, field: str, history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, head = _runs(capsys, "reference", "naive")
    (history.parent / "home" / "agentic-eval.db").unlink()  # no store to compare with
    _edit(head, change)
    if "suite" in field:  # moved to that suite's folder, renamed to match
        folder = history / "approval_audit"
        folder.mkdir()
        head = head.rename(folder / head.name)
    code, _, err = _cli(capsys, "report", "--fail-on-regression")
    assert code == 2, err
    assert field in err


def test_a_run_is_never_gated_against_itself(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs(capsys, "reference", "naive")
    run_id = load_history("retail_ops")[-1].entry.run_id
    code, _, err = _cli(
        capsys, "report", "--base", run_id, "--head", run_id, "--fail-on-regression"
    )
    assert code == 2 and "base and head are the same run" in err
    assert _cli(capsys, "baseline", "promote", run_id)[0] == 0
    code, _, err = _cli(capsys, "report", "--base", "baseline", "--fail-on-regression")
    assert code == 2 and "base and head are the same run" in err


def test_a_baseline_marker_whose_file_and_run_disagree_is_refused(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs(capsys, "reference", "naive")
    stored = load_history("retail_ops")
    assert _cli(capsys, "baseline", "promote", stored[0].entry.run_id)[0] == 0
    (marker,) = (history / "retail_ops" / "baselines").iterdir()
    data = json.loads(marker.read_text())
    data["run_id"] = stored[1].entry.run_id  # now names the head, file still the old run's
    marker.write_text(json.dumps(data))
    code, _, err = _cli(capsys, "report", "--base", "baseline", "--fail-on-regression")
    assert code == 2 and "the marker was edited" in err
