"""A recording made with ``--cases`` replays what it holds and names the cases it does not
(issue 20): before, replaying it without the same ``--cases`` failed every case it never held.
A case its scorecard lists whose transcript is gone still fails loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.domains import get_domain


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def partial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    rec = tmp_path / "rec"
    args = ("run", "retail_ops", "--backend", "scripted", "--cases", "match-*", "--record")
    assert _cli(capsys, *args, "--recordings", str(rec), "--no-history")[0] == 0
    return rec


def test_a_partial_recording_replays_what_it_holds_and_names_the_rest(
    partial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, "run", "retail_ops", "--recordings", str(partial), "--json")
    assert code == 0, err
    matched = [c.id for c in get_domain("retail_ops").load_cases() if c.id.startswith("match-")]
    others = [c.id for c in get_domain("retail_ops").load_cases() if c.id not in matched]
    assert f"retail_ops / reference: {len(others)} of {len(others) + len(matched)} case(s)" in err
    assert f"replaying the {len(matched)} recorded: not recorded: {others[0]}" in err
    (run,) = json.loads(out)["runs"]
    assert run["planned_samples"] == len(matched) and run["replay"]["reproduced"] is True


def test_a_transcript_its_scorecard_lists_still_fails_when_gone(
    partial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (partial / "retail_ops" / "reference" / "match-002.json").unlink()
    code, out, err = _cli(capsys, "run", "retail_ops", "--recordings", str(partial))
    assert code == 1 and "match-002" not in err  # not taken for a case never recorded
    assert "match-002: error - replay of case match-002: no recording in" in out
