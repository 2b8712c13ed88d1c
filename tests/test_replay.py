"""Replay is exact or it is loud: the committed recordings reproduce their scorecards keyless,
and an edited response, fixture value or system prompt stops the case naming case, turn, field."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pytest_socket import disable_socket, enable_socket

from agentic_eval.cli.main import main
from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.domains import get_domain
from agentic_eval.domains.retail_ops.fixtures import FIXTURES_PATH

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"
WORKFLOW_SUITES = {"lead_intelligence"}  # scenario recordings: tests/test_workflow_scenarios.py
COMMITTED = sorted(
    p for p in RECORDINGS.glob("*/*") if p.is_dir() and p.parent.name not in WORKFLOW_SUITES
)


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    """A private copy of the committed recordings, safe to edit."""
    root = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, root)
    return root


@pytest.fixture
def no_network() -> object:
    """Every socket but the event loop's own socketpair is refused."""
    disable_socket(allow_unix_socket=True)
    yield None
    enable_socket()


def _replay(root: Path, agent: str, *extra: str) -> int:
    return main(["run", "retail_ops", "--agent", agent, "--recordings", str(root), *extra])


def test_recordings_exist_for_every_domain_and_agent() -> None:
    labels = {p.name for p in COMMITTED if p.parent.name == "retail_ops"}
    assert {"reference", "naive", "naive-observe"} <= labels
    for agent_dir in COMMITTED:
        assert (agent_dir / "scorecard.json").is_file(), agent_dir


@pytest.mark.parametrize("agent_dir", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_recordings_replay_byte_for_byte_with_no_network(
    agent_dir: Path, no_network: object, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            agent_dir.parent.name,
            "--agent",
            agent_dir.name,
            "--recordings",
            str(RECORDINGS),
            "--json",
        ]
    )
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert code == 0
    assert run["replay"]["reproduced"] and run["replay"]["problems"] == []
    assert run["replay"]["samples_reproduced"] == run["replay"]["samples"] > 0
    committed = (agent_dir / "scorecard.json").read_text(encoding="utf-8")
    assert canonical_file_text(run["scorecard"]) == committed  # byte for byte


def test_record_then_replay_reproduces_the_scorecard_json(
    tmp_path: Path, no_network: object, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(tmp_path / "rec")
    assert (
        main(
            [
                "run",
                "retail_ops",
                "--backend",
                "scripted",
                "--agent",
                "reference",
                "--record",
                "--recordings",
                root,
                "--json",
            ]
        )
        == 0
    )
    (recorded,) = json.loads(capsys.readouterr().out)["runs"]
    assert recorded["scorecard"]["totals"]["passed"] == 34 and recorded["replay"] is None
    assert main(["run", "retail_ops", "--recordings", root, "--json"]) == 0
    (replayed,) = json.loads(capsys.readouterr().out)["runs"]
    assert canonical_file_text(replayed["scorecard"]) == canonical_file_text(recorded["scorecard"])
    assert replayed["replay"]["samples_reproduced"] == 34


def _diverged(capsys: pytest.CaptureFixture[str], root: Path, agent: str) -> dict[str, str]:
    assert _replay(root, agent, "--json") == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert not run["replay"]["reproduced"]
    card = run["scorecard"]
    return {
        c["case_id"]: c["outcome"]["reason"]
        for c in card["cases"]
        if c["outcome"]["kind"] == "error"
    }


def test_edited_recorded_response_names_case_turn_and_field(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / "match-003.json"
    data = json.loads(path.read_text())
    use = data["turns"][1]["response"]["content"][0]
    assert use["type"] == "tool_use"
    use["input"] = {**use["input"], "extra": "edited"}
    path.write_text(json.dumps(data, indent=2))
    errors = _diverged(capsys, recordings, "reference")
    assert list(errors) == ["match-003"]
    assert "case match-003, turn 1, field turns[1].response" in errors["match-003"]


def test_edited_or_invalid_appended_message_names_case_and_field(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Replay serves the recorded responses; the messages the harness appended are the loop's
    # own, proved by the request key and held to the file by the final comparison.
    folder = recordings / "retail_ops" / "reference"
    edits = {
        "otif-001": ("content", "tampered"),  # a tool result edited
        "otif-003": ("is_error", "yes"),  # a value no message may hold
    }
    for case, (field, value) in edits.items():
        path = folder / f"{case}.json"
        data = json.loads(path.read_text())
        block = data["turns"][1]["appended"][0]["content"][0]
        assert block["type"] == "tool_result"
        block[field] = value
        path.write_text(json.dumps(data, indent=2))
    errors = _diverged(capsys, recordings, "reference")
    assert set(errors) == set(edits)
    for case, (field, value) in edits.items():
        assert (
            f"case {case}, field turns[1].appended[0].content[0].{field}: recorded '{value}'"
            in errors[case]
        )


def test_a_request_key_mismatch_over_an_invalid_appended_message_names_it(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / "otif-001.json"
    data = json.loads(path.read_text())
    data["turns"][1]["request_key"] = "0" * 64
    data["turns"][1]["appended"][0]["role"] = "system"
    path.write_text(json.dumps(data, indent=2))
    errors = _diverged(capsys, recordings, "reference")
    assert list(errors) == ["otif-001"]
    assert (
        "case otif-001, turn 1, field request.messages: the recording's "
        "turns[1].appended.0.role is invalid" in errors["otif-001"]
    )


LONG_NUMBER_FORMAT = ('"max_failure_rate": 0.01', '"max_failure_rate": 1000000000000000000000e-23')
"""The same value, written with a run of 19 digits: the file goes to the exact reader."""


@pytest.mark.parametrize(
    ("old", "new", "reproduced", "problem"),
    [
        (*LONG_NUMBER_FORMAT, True, ""),
        ('"actual": null', '"actual": 1e999', False, "not JSON (number is infinity"),
        ('"result": "', '"result": "\\udfff', False, "not JSON (invalid high surrogate"),
        (
            '"temperature": 0.0\n',
            '"temperature": -0.0\n',
            False,
            "field provenance.parameters.temperature: recorded -0.0, now 0.0",
        ),
        (
            '"temperature": 0.0,',
            '"temperature": -0.0,',
            False,
            "field request.temperature: recorded -0.0, now 0.0",
        ),
        (
            '"actual": null',
            '"actual": null, "note": null',
            False,
            "note: recorded null, now absent",
        ),
    ],
    ids=["format-only", "infinity", "lone-surrogate", "-0.0-provenance", "-0.0-request", "null"],
)
def test_what_the_exact_reader_reads_is_still_strict_and_named(
    recordings: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    reproduced: bool,
    problem: str,
) -> None:
    # A long number sends a file to the standard library's reader, which alone would take
    # 1e999 (as infinity, written back as null) and lone surrogates: both must stay refused.
    path = recordings / "retail_ops" / "reference" / "chase-003.json"
    text = path.read_text().replace(*LONG_NUMBER_FORMAT).replace(old, new, 1)
    path.write_text(text)
    code = main(
        [
            *("run", "retail_ops", "--agent", "reference", "--recordings", str(recordings)),
            *("--cases", "chase-003", "--no-history", "--json"),
        ]
    )
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "internal error" not in out.err
    (run,) = json.loads(out.out)["runs"]
    assert code == (0 if reproduced else 1)
    assert run["replay"]["reproduced"] is reproduced
    if not reproduced:
        (case,) = run["scorecard"]["cases"]
        assert case["case_id"] == "chase-003"
        assert problem in case["outcome"]["reason"] or problem in json.dumps(run["replay"])


def test_edited_fixture_value_names_case_turn_and_field_and_fails_goldens(
    recordings: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixtures = json.loads(FIXTURES_PATH.read_text())
    invoice = next(i for i in fixtures["invoices"] if i["invoice_id"] == "INV-2003")
    order = next(o for o in fixtures["purchase_orders"] if o["po_id"] == invoice["po_id"])
    order["lines"][0]["unit_price_cents"] -= 5  # the PO price of INV-2003's first line
    (tmp_path / "fx" / "retail_ops").mkdir(parents=True)
    (tmp_path / "fx" / "retail_ops" / "fixtures.json").write_text(json.dumps(fixtures))
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "fx"))
    errors = _diverged(capsys, recordings, "reference")
    assert "match-001" in errors  # the case about INV-2003
    assert re.search(
        r"case match-001, turn \d+, field request\.messages\[\d+\]\.content\[\d+\]"
        r"\.content: recorded .*unit_price_cents",
        errors["match-001"],
    )
    assert main(["goldens", "check", "retail_ops"]) == 1
    err = capsys.readouterr().err
    assert "fixtures changed" in err
    assert re.search(r"case match-001 field expected\.\w+: committed", err)


def test_edited_system_prompt_names_case_turn_and_field(
    recordings: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    domain = get_domain("retail_ops")
    monkeypatch.setattr(domain, "system_prompt", domain.system_prompt + " Be brief.")
    errors = _diverged(capsys, recordings, "reference")
    assert len(errors) == 34
    assert "case gate-001, turn 0, field request.system: recorded" in errors["gate-001"]


def test_missing_and_corrupt_recordings_are_errors_not_empty(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = recordings / "retail_ops" / "reference"
    (folder / "otif-002.json").unlink()
    (folder / "otif-003.json").write_text('{"schema_version": 2, "truncated')
    errors = _diverged(capsys, recordings, "reference")
    assert set(errors) == {"otif-002", "otif-003"}
    assert "no recording" in errors["otif-002"]
    assert "not JSON" in errors["otif-003"]


SECRET_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"sk-[a-z0-9_-]{8,}",
        r"sk-ant-",
        r"x-api-key",
        r"authorization",
        r"bearer\s",
        r"api[_-]?key\"\s*:",
        r"ANTHROPIC_API_KEY=",
        r"OPENAI_API_KEY=",
    )
]


def test_no_committed_transcript_holds_a_key_header_or_token() -> None:
    files = list(RECORDINGS.rglob("*.json"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern in SECRET_PATTERNS:
            assert not pattern.search(text), f"{path}: matches {pattern.pattern}"


def test_readme_scorecard_table_is_what_replay_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--recordings", str(RECORDINGS), "--markdown"]) == 0
    table = capsys.readouterr().out.strip()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- scorecards:start -->\n", 1)[1].split("<!-- scorecards:end -->")[0]
    assert block.strip() == table


@pytest.mark.parametrize(
    ("folder", "args"),
    [
        ("reference", ["--agent", "reference"]),
        (
            "naive-observe",
            ["--agent", "naive", "--label", "naive-observe", "--approval", "observe"],
        ),
    ],
)
def test_re_recording_an_unchanged_run_leaves_the_files_byte_identical(
    recordings: Path, folder: str, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    target = recordings / "retail_ops" / folder
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    code = main(
        [
            "run",
            "retail_ops",
            "--backend",
            "scripted",
            *args,
            "--record",
            "--recordings",
            str(recordings),
        ]
    )
    capsys.readouterr()
    assert code == (0 if folder == "reference" else 1)  # the naive agent fails its gate
    after = {p.name: p.read_bytes() for p in target.iterdir()}
    assert after == before


def test_a_bare_run_prints_every_domains_replay_fidelity_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentic_eval.domains import all_domains

    assert main(["run", "--recordings", str(RECORDINGS), "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| Domain | Replay | Notes |"
    for domain in all_domains().values():
        n = len(domain.load_cases())
        assert any(line.startswith(f"| {domain.name} | {n}/{n} |") for line in lines[:6])
