"""Hostile input and hostile conditions (issue 7, "Hardening").

Untrusted input gets one clear line, never a traceback: recordings that are devices, folders or
invalid, bad flags, an unusable or locked store, invalid external fixtures, a PostgreSQL URL's
password, a provider error echoing the key, control characters in recordings. Labels are text,
never paths. A run stopped by SIGTERM / SIGINT loses no judged sample; one killed outright is
reported as abandoned by the next run.

Each class of fault the hardening issue names has a test here.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentic_eval.backends.scripted import respond
from agentic_eval.cli.main import main
from agentic_eval.core import ModelRequest, ModelResponse
from agentic_eval.domains import get_domain
from agentic_eval.recordings import label_folder, list_agents
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalRun
from agentic_eval.testing import FakeProvider, Fault

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "evals" / "recordings" / "retail_ops"
MODEL_AGENT = "naive"  # any recorded agent: its provenance is edited below
EXE = Path(sys.executable).parent / "agentic-eval"
CONTROL = ("\x1b", "\x00", "\x07", "\x9b")
SCRIPTED_ONE = ("run", "retail_ops", "--backend", "scripted", "--cases", "match-001")


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    """A private copy of some committed retail_ops recordings (reference and naive)."""
    root = tmp_path / "recordings"
    for agent in ("reference", "naive"):
        shutil.copytree(COMMITTED / agent, root / "retail_ops" / agent)
    return root


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, list[str]]:
    """Exit code, stdout and the non-blank stderr lines of an in-process CLI call."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, [line for line in captured.err.splitlines() if line.strip()]


def _one_error_line(err: list[str], *fragments: str) -> str:
    assert len(err) == 1, err
    (line,) = err
    assert line.startswith("agentic-eval: error: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    for noise in ("Traceback", "Background on this error", "sqlalche.me", "[SQL:"):
        assert noise not in line, line
    return line


def _db(home: Path) -> Path:
    return home / "agentic-eval.db"


def _runs() -> list[EvalRun]:
    """The run rows of the store under ``$AGENTIC_EVAL_HOME``, newest first."""
    store = Store()
    try:
        return store.runs()
    finally:
        store.close()


def _sample_count(run_id: str) -> int:
    store = Store()
    try:
        return len(store.samples(run_id))
    finally:
        store.close()


def _status(run_id: str) -> str | None:
    return next((r.status for r in _runs() if r.id == run_id), None)


def _store_rows(home: Path) -> list[tuple[object, ...]]:
    """Every row of the run and sample tables, raw."""
    with contextlib.closing(sqlite3.connect(_db(home))) as conn:
        return [
            row
            for table in ("eval_run", "eval_sample")
            for row in conn.execute(f"SELECT * FROM {table}")
        ]


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root``: files with their bytes, folders as None."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


# ----------------------------------------------------------------------------------------------
# Recordings are untrusted input


def _make_hostile(path: Path, kind: str) -> None:
    path.unlink(missing_ok=True)
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)


@pytest.mark.parametrize("kind", ["dev-zero", "directory", "fifo"])
@pytest.mark.parametrize("name", ["chase-001.json", "match-001.json"])
def test_a_transcript_that_is_not_a_regular_file_is_one_line_not_a_hang(
    kind: str, name: str, recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / name
    _make_hostile(path, kind)
    code, out, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--agent",
        "reference",
        "--recordings",
        str(recordings),
        "--cases",
        "match-00*",
        "--json",
    )
    assert code == 1
    _one_error_line(err, str(path), "not a regular file")
    assert json.loads(out)["broken"] == [f"retail_ops / reference: {path}: not a regular file"]


def test_a_scorecard_that_is_a_device_is_not_reproduced_not_read(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = recordings / "retail_ops" / "naive" / "scorecard.json"
    _make_hostile(card, "dev-zero")
    code, out, err = _cli(
        capsys, "run", "retail_ops", "--agent", "naive", "--recordings", str(recordings), "--json"
    )
    (run,) = json.loads(out)["runs"]
    assert code == 1 and err == []
    assert run["replay"]["samples_reproduced"] == 34
    assert run["replay"]["problems"] == [f"{card}: not a regular file"]


def test_an_oversized_transcript_is_refused_unread(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / "match-001.json"
    path.unlink()
    with path.open("wb") as fh:  # sparse: 70 MB on paper, nothing on disk
        fh.truncate(70 * 1024 * 1024)
    code, out, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--agent",
        "reference",
        "--recordings",
        str(recordings),
        "--cases",
        "match-001",
        "--json",
    )
    (run,) = json.loads(out)["runs"]
    assert code == 1 and err == []
    assert run["replay"]["problems"][0] == (
        f"replay of case match-001: {path}: larger than {64 * 1024 * 1024} bytes"
    )
    code, _, err = _cli(capsys, "show", "match-001", "--recordings", str(recordings))
    assert code == 2
    _one_error_line(err, str(path), "larger than")


@pytest.mark.parametrize("kind", ["dev-zero", "directory"])
def test_show_of_a_transcript_that_is_not_a_regular_file_is_one_line(
    kind: str, recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / "match-001.json"
    _make_hostile(path, kind)
    code, out, err = _cli(capsys, "show", "match-001", "--recordings", str(recordings))
    assert code == 2 and out == ""
    _one_error_line(err, str(path))


@pytest.mark.parametrize("kind", ["dev-zero", "directory"])
def test_list_recordings_with_a_transcript_that_is_not_a_regular_file_is_one_line(
    kind: str, recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / "match-001.json"
    _make_hostile(path, kind)
    code, out, err = _cli(
        capsys, "list", "recordings", "retail_ops", "--recordings", str(recordings)
    )
    assert "naive" in out  # the other agent is still listed
    assert code in (0, 1) and len(err) <= 1  # reported as a line of the listing or an error
    assert f"{path}: not a regular file" in out + "".join(err)
    assert "Traceback" not in out


BAD_PARAMETERS = [
    ("max_turns", 0, "greater than or equal to 1"),
    ("temperature", "warm", "valid number"),
    ("approval_mode", "sometimes", "approval_mode"),
    ("max_failure_rate", 2, "less than or equal to 1"),
    ("bogus", 1, "Extra inputs are not permitted"),
]


@pytest.mark.parametrize(
    ("field", "value", "says"), BAD_PARAMETERS, ids=[b[0] for b in BAD_PARAMETERS]
)
def test_bad_provenance_parameters_of_the_first_transcript_is_one_line(
    field: str, value: object, says: str, recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings / "retail_ops" / "reference" / "chase-001.json"  # the first: sets the run
    data = json.loads(path.read_text())
    data["provenance"]["parameters"][field] = value
    path.write_text(json.dumps(data))
    code, _, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--agent",
        "reference",
        "--recordings",
        str(recordings),
        "--cases",
        "match-001",
    )
    assert code == 1
    _one_error_line(err, str(path), f"provenance.parameters.{field}", says)


@pytest.mark.parametrize(
    ("field", "value", "says"), BAD_PARAMETERS, ids=[b[0] for b in BAD_PARAMETERS]
)
def test_bad_provenance_parameters_of_another_transcript_is_not_reproduced_naming_it(
    field: str, value: object, says: str, recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del says
    path = recordings / "retail_ops" / "reference" / "match-001.json"
    data = json.loads(path.read_text())
    data["provenance"]["parameters"][field] = value
    path.write_text(json.dumps(data))
    code, out, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--agent",
        "reference",
        "--recordings",
        str(recordings),
        "--cases",
        "match-00[12]",
        "--json",
    )
    (run,) = json.loads(out)["runs"]
    assert code == 1 and err == []
    assert run["replay"]["samples_reproduced"] == 1
    problems = run["replay"]["problems"]
    assert f"case match-001, field provenance.parameters.{field}" in problems[0], problems


def test_an_unknown_agent_in_replay_is_a_usage_error_listing_the_recorded_ones(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        capsys, "run", "retail_ops", "--agent", "nobody", "--recordings", str(recordings)
    )
    assert code == 2 and out == ""
    _one_error_line(err, "'nobody'", "(recorded: naive, reference)")


def test_a_bare_replay_of_one_agent_replays_the_domains_that_recorded_it(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(
        capsys, "run", "--agent", "reference", "--recordings", str(recordings), "--json"
    )
    assert code == 0
    (run,) = json.loads(out)["runs"]
    assert run["scorecard"]["produced_by"]["agent"] == "reference" and run["replay"]["reproduced"]


# ----------------------------------------------------------------------------------------------
# Bad flags


NON_FINITE = [
    ("--temperature", ()),
    ("--max-failure-rate", ()),
    ("--max-transient", ()),
    ("--timeout", ("--provider", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")),
]


@pytest.mark.parametrize(("flag", "extra"), NON_FINITE, ids=[f[0] for f in NON_FINITE])
@pytest.mark.parametrize("value", ["nan", "-nan"])
def test_a_non_finite_number_is_a_usage_error(
    flag: str,
    extra: tuple[str, ...],
    value: str,
    tmp_path: Path,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rec = tmp_path / "rec"
    backend = () if extra else ("--backend", "scripted", "--record", "--recordings", str(rec))
    code, out, err = _cli(
        capsys, "run", "retail_ops", "--cases", "match-001", *backend, *extra, flag, value
    )
    assert code == 2 and out == ""
    _one_error_line(err, flag)
    assert not rec.exists()  # nothing recorded for replay to choke on later
    assert not _db(isolated_home).exists() or _store_rows(isolated_home) == []


# ----------------------------------------------------------------------------------------------
# The recordings folder while recording


def test_record_cases_leaves_invalid_and_foreign_json_alone(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = recordings / "retail_ops" / "reference"
    (folder / "junk.json").write_bytes(b"{not json")
    (folder / "notes.json").write_bytes(b'{"a": 1}\n')
    shutil.copy(recordings / "retail_ops" / "naive" / "match-002.json", folder / "naive-copy.json")
    before = _tree(folder)
    code, out, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--backend",
        "scripted",
        "--record",
        "--recordings",
        str(recordings),
        "--cases",
        "match-001",
    )
    assert code == 0 and err == []
    assert _tree(folder) == before  # match-001 re-recorded byte-identical, the rest untouched
    for name in ("junk.json", "notes.json", "naive-copy.json"):
        assert f"left alone: {folder / name}" in out


def test_record_with_a_directory_named_json_in_the_folder_is_one_line(
    recordings: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = recordings / "retail_ops" / "reference" / "dir.json"
    odd.mkdir()
    code, _, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--backend",
        "scripted",
        "--record",
        "--recordings",
        str(recordings),
        "--cases",
        "match-001",
    )
    assert code == 2
    _one_error_line(err, str(odd))
    assert odd.is_dir()
    assert [r.status for r in _runs()] != ["running"]


@pytest.mark.parametrize("where", ["root under a file", "agent folder is a file"])
def test_record_where_the_folder_cannot_be_made_is_one_line(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    if where == "root under a file":
        root = blocker / "rec"
    else:
        root = tmp_path / "rec"
        (root / "retail_ops").mkdir(parents=True)
        (root / "retail_ops" / "reference").write_text("x")
    code, _, err = _cli(capsys, *SCRIPTED_ONE, "--record", "--recordings", str(root))
    assert code == 1
    _one_error_line(err)


def test_a_full_re_record_keeps_copies_it_did_not_write(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = recordings / "retail_ops" / "reference"
    for name in ("match-001.bak.json", "backup.json"):
        shutil.copy(folder / "match-001.json", folder / name)
    code, _, _ = _cli(
        capsys,
        "run",
        "retail_ops",
        "--backend",
        "scripted",
        "--record",
        "--recordings",
        str(recordings),
    )
    assert code == 0
    assert (folder / "match-001.bak.json").is_file() and (folder / "backup.json").is_file()


# ----------------------------------------------------------------------------------------------
# The store


@pytest.mark.parametrize(
    "where", ["home under a file", "home is a file", "database is a folder", "database is junk"]
)
def test_an_unusable_store_is_one_line(
    where: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    home = {"home under a file": blocker / "home", "home is a file": blocker}.get(
        where, tmp_path / "home2"
    )
    if where == "database is a folder":
        (home / "agentic-eval.db").mkdir(parents=True)
    elif where == "database is junk":
        home.mkdir()
        (home / "agentic-eval.db").write_bytes(bytes(range(256)) * 40)
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(home))
    replay = ("run", "retail_ops", "--cases", "match-001", "--recordings", str(COMMITTED.parent))
    for argv in (SCRIPTED_ONE, replay):
        code, out, err = _cli(capsys, *argv)
        assert code == 2 and out == ""
        _one_error_line(err, str(home))
    assert blocker.read_text() == "x"


LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_locked_database_fails_with_one_line_in_bounded_time(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs()  # the database exists (migrated); another process now holds it
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(_db(isolated_home))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        started = time.monotonic()
        code, out, err = _cli(capsys, *SCRIPTED_ONE)
        waited = time.monotonic() - started
    finally:
        locker.communicate(timeout=10)
    assert code == 1 and out == ""
    _one_error_line(err, "database is locked")
    assert waited < 30
    assert [r.status for r in _runs()] != ["running"]


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://evaluser:Hunter2-Secret@127.0.0.1:1/evals",
        "postgresql+psycopg://evaluser:Hunter2%40Secret@127.0.0.1:1/evals?connect_timeout=2",
        "postgresql://evaluser:Hunter2-Secret@127.0.0.1:notaport/evals",
        "postgresql://evaluser@127.0.0.1:1/evals?password=Hunter2-Secret",
    ],
    ids=["userinfo", "encoded", "bad-port", "query-parameter"],
)
def test_a_postgres_password_is_never_printed(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", url)
    code, out, err = _cli(capsys, *SCRIPTED_ONE)
    assert code == 2 and out == ""  # no verdict: the store could not be reached
    line = _one_error_line(err, "evaluser")
    assert "Hunter2" not in line and "Secret" not in line


# ----------------------------------------------------------------------------------------------
# External fixtures


@pytest.mark.parametrize("content", [b"{bad", b"", b"[]", b"{}", b'{"policy": 1}', b"\xff\xfe"])
@pytest.mark.parametrize(
    "argv",
    [
        SCRIPTED_ONE,
        ("run", "retail_ops", "--recordings", str(COMMITTED.parent)),
        ("list", "cases", "retail_ops"),
    ],
    ids=["scripted", "replay", "list"],
)
def test_invalid_external_fixtures_are_one_line(
    content: bytes,
    argv: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "fx" / "retail_ops" / "fixtures.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "fx"))
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and out == ""  # a broken input: nothing judged
    _one_error_line(err, str(path), "invalid fixtures")


@pytest.mark.parametrize("kind", ["dev-zero", "directory"])
def test_an_external_fixtures_file_that_is_not_a_file_is_refused_not_replaced(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fx" / "retail_ops" / "fixtures.json"
    path.parent.mkdir(parents=True)
    _make_hostile(path, kind)
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path / "fx"))
    code, _, err = _cli(capsys, *SCRIPTED_ONE)
    assert code == 2
    _one_error_line(err, str(path))


# ----------------------------------------------------------------------------------------------
# Secrets


def _reference(request: ModelRequest) -> ModelResponse:
    return respond(get_domain("retail_ops").agents()["reference"], request)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(_reference) as provider:
        yield provider


KEYS = {"anthropic": "sk-ant-api03-TOPSECRET-0123456789", "openai": "plainTOPSECRETkey-0123456789"}


@pytest.mark.parametrize("status", [400, 401, 500])
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_provider_error_echoing_the_key_is_redacted_everywhere(
    provider: str,
    status: int,
    fake: FakeProvider,
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = KEYS[provider]
    monkeypatch.setenv("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY", key)
    message = f"Invalid request for key {key} (api_key={key}); Authorization: Bearer {key}"
    fake.inject(*[Fault.status(status, message)] * 4)
    rec = tmp_path / "rec"
    url = fake.anthropic_base_url if provider == "anthropic" else fake.openai_base_url
    code = main(
        [
            "run",
            "retail_ops",
            "--provider",
            provider,
            "--base-url",
            url,
            "--model",
            "m",
            "--cases",
            "match-001",
            "--retries",
            "0",
            "--record",
            "--recordings",
            str(rec),
            "-v",
        ]
    )
    captured = capsys.readouterr()
    assert code == {400: 1, 401: 2, 500: 2}[status]
    printed = captured.out + captured.err
    assert "TOPSECRET" not in printed
    assert "[REDACTED]" in printed  # the provider's message was shown, redacted
    files = [p for p in rec.rglob("*") if p.is_file()]
    # 400: transcript and scorecard; 500 (transient): the scorecard only, a transient sample's
    # transcript is never written; 401: nothing
    assert len(files) == {400: 2, 401: 0, 500: 1}[status]
    for p in files:
        assert "TOPSECRET" not in p.read_text(encoding="utf-8"), p
    rows = _store_rows(isolated_home)
    assert rows and all("TOPSECRET" not in repr(r) for r in rows)


# ----------------------------------------------------------------------------------------------
# Control characters in recordings never reach the terminal raw


NASTY = "\x1b[31mRED\x1b[0m\x00NUL\x07\x9b2J"


def _nasty_naive(recordings: Path) -> None:
    folder = recordings / "retail_ops" / "naive"
    path = folder / "chase-001.json"  # check_failed: its failure text is printed with -v
    data = json.loads(path.read_text())
    data["verdict"]["outcome"]["reason"] += NASTY
    for check in data["verdict"]["checks"]:
        check["message"] += NASTY
    data["output"]["overdue_po_ids"] = [f"PO{NASTY}"]
    data["tool_calls"][0]["result"] += NASTY
    path.write_text(json.dumps(data))
    card = folder / "scorecard.json"
    data = json.loads(card.read_text())
    for case in data["cases"]:
        case["outcome"]["reason"] += NASTY
    card.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "retail_ops", "--agent", "naive", "-v"),
        ("run", "retail_ops", "--agent", "naive", "--markdown"),
        ("run", "retail_ops", "--agent", "naive", "--json"),
        ("show", "chase-001", "--agent", "naive"),
        ("list", "recordings", "retail_ops"),
    ],
    ids=["run-v", "markdown", "json", "show", "list"],
)
def test_control_characters_in_a_recorded_verdict_and_output_are_escaped(
    argv: tuple[str, ...], recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _nasty_naive(recordings)
    code, out, err = _cli(capsys, *argv, "--recordings", str(recordings))
    assert code == (0 if argv[0] != "run" else 1)
    printed = out + "\n".join(err)
    for ch in CONTROL:
        assert ch not in printed, (repr(ch), argv)
    if argv[0] == "show":
        assert "\\x1b[31mRED" in out  # shown, escaped


@pytest.mark.parametrize("flag", ["-v", "--markdown"])
def test_control_characters_in_recorded_provenance_are_escaped(
    flag: str, recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(
        COMMITTED / MODEL_AGENT, recordings / "retail_ops" / MODEL_AGENT, dirs_exist_ok=True
    )
    path = recordings / "retail_ops" / MODEL_AGENT / "chase-001.json"
    data = json.loads(path.read_text())
    data["provenance"]["model"] += NASTY
    data["provenance"]["backend"] += NASTY
    path.write_text(json.dumps(data))
    code, out, err = _cli(
        capsys,
        "run",
        "retail_ops",
        "--agent",
        MODEL_AGENT,
        "--cases",
        "chase-001",
        "--recordings",
        str(recordings),
        flag,
    )
    assert code == 1
    printed = out + "\n".join(err)
    for ch in CONTROL:
        assert ch not in printed, repr(ch)


# ----------------------------------------------------------------------------------------------
# Labels are text, never paths


def test_an_absolute_label_records_inside_the_recordings_folder_and_deletes_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "unrelated.json").write_text('{"keep": 1}\n')
    (outside / "scorecard.json").write_text('{"keep": 2}\n')
    before = _tree(outside)
    rec = tmp_path / "rec"
    label = str(outside)
    argv = ("run", "retail_ops", "--backend", "scripted", "--record", "--recordings", str(rec))
    assert _cli(capsys, *argv, "--label", label, "--cases", "match-00*")[0] == 0
    folder = rec / "retail_ops" / label_folder(label)
    assert [p.name for p in (rec / "retail_ops").iterdir()] == [folder.name]
    (folder / "notes.json").write_text('{"mine": true}\n')  # the user's own file in the folder
    (folder / "broken.json").write_text("{")
    code, out, _ = _cli(capsys, *argv, "--label", label)  # a full re-record
    assert code == 0
    assert _tree(outside) == before
    assert (folder / "notes.json").read_text() == '{"mine": true}\n'
    assert (folder / "broken.json").read_text() == "{"
    flat = "".join(out.split())  # the table wraps or folds a long path at its width
    assert f"leftalone:{folder / 'notes.json'}".replace(" ", "") in flat
    assert len(list(folder.glob("*-*.json"))) == 34
    assert list_agents(rec, "retail_ops") == [label]


@pytest.mark.parametrize(
    "label",
    ["../../x", "..", ".", "a/../../b", "%2E%2E", "..\\..\\y", " lead", "-rf", "x" * 200],
)
def test_a_path_like_label_stays_inside_the_recordings_folder(
    label: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    area = tmp_path / "area"
    rec = area / "deep" / "rec"
    rec.mkdir(parents=True)
    (area / "sentinel.json").write_text("{}")
    before = _tree(area)
    code, _, err = _cli(
        capsys, *SCRIPTED_ONE, "--label", label, "--record", "--recordings", str(rec)
    )
    assert code == 0 and err == []
    after = _tree(area)
    new = sorted(set(after) - set(before))
    assert all(p.startswith("deep/rec/retail_ops/") for p in new if p != "deep/rec/retail_ops")
    assert {k: v for k, v in after.items() if k in before} == before
    (folder,) = (rec / "retail_ops").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["match-001.json", "scorecard.json"]
    assert list_agents(rec, "retail_ops") == [label]


def test_a_label_with_a_tilde_is_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    assert (
        _cli(capsys, *SCRIPTED_ONE, "--label", "a~b", "--record", "--recordings", str(rec))[0] == 0
    )
    assert list_agents(rec, "retail_ops") == ["a~b"]
    code, out, _ = _cli(
        capsys, "run", "retail_ops", "--cases", "match-001", "--recordings", str(rec), "--json"
    )
    (run,) = json.loads(out)["runs"]
    assert code == 0 and run["replay"]["reproduced"]


def test_a_long_non_ascii_label_is_refused_or_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    label = "ü" * 100
    code, _, err = _cli(
        capsys, *SCRIPTED_ONE, "--label", label, "--record", "--recordings", str(rec)
    )
    if code == 2:
        _one_error_line(err, "--label")
    else:
        assert code == 0 and list_agents(rec, "retail_ops") == [label]


def test_a_model_name_with_a_slash_records_one_folder_and_bare_replay_replays_every_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    record = ("run", "retail_ops", "--backend", "scripted", "--record", "--recordings", str(rec))
    assert _cli(capsys, *record, "--label", "Qwen/Qwen2.5-7B-Instruct")[0] == 0
    assert _cli(capsys, *record)[0] == 0
    assert sorted(p.name for p in (rec / "retail_ops").iterdir()) == [
        "Qwen%2FQwen2.5-7B-Instruct",
        "reference",
    ]
    code, out, err = _cli(capsys, "run", "--recordings", str(rec), "--json")
    assert code == 0
    runs = json.loads(out)["runs"]
    assert sorted(r["scorecard"]["produced_by"]["agent"] for r in runs) == [
        "Qwen/Qwen2.5-7B-Instruct",
        "reference",
    ]
    assert all(r["replay"]["reproduced"] and r["replay"]["samples"] == 34 for r in runs)
    assert all("warning" in line and "nothing recorded" in line for line in err)


# ----------------------------------------------------------------------------------------------
# Killed runs


LONG_RUN = (
    "run",
    "retail_ops",
    "--backend",
    "scripted",
    "--agent",
    "reference",
    "--samples",
    "200",
)


def _sample_rows(home: Path) -> int:
    try:
        uri = f"file:{_db(home)}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=1)) as conn:
            return int(conn.execute("SELECT count(*) FROM eval_sample").fetchone()[0])
    except sqlite3.Error:
        return 0


def _spawn_long_run(home: Path, *extra: str) -> subprocess.Popen[bytes]:
    """The 6,800-sample run in a child process with its own store under ``home``."""
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(home)}
    return subprocess.Popen(
        [str(EXE), *LONG_RUN, *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _wait_for_samples(proc: subprocess.Popen[bytes], home: Path) -> None:
    """Until the child has stored its first samples (and a little more)."""
    deadline = time.monotonic() + 60
    while _sample_rows(home) == 0:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no sample stored within 60 s"
        time.sleep(0.1)
    time.sleep(0.3)


def _stopped_cleanly(
    proc: subprocess.Popen[bytes], home: Path, sig: signal.Signals, deadline: float
) -> str | None:
    """What is wrong with how a signalled run ended (None: exit 128+sig, status interrupted,
    every judged sample stored)."""
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"{sig.name}: still running 4 s after the signal"
    if proc.returncode != 128 + sig or b"Traceback" in err:
        return f"{sig.name}: exit {proc.returncode}: {err.decode()[-300:]}"
    store = Store(f"sqlite:///{_db(home)}")
    try:
        (run,) = store.runs()
        stored = len(store.samples(run.id))
    finally:
        store.close()
    judged = json.loads(out)["runs"][0]["scorecard"]["totals"]["cases"]
    if run.status != "interrupted" or not 0 < stored == judged == run.samples < 6800:
        return f"{sig.name}: status {run.status}, {stored} rows, {judged} judged, {run.samples}"
    return None


def test_sigterm_and_sigint_stop_a_long_run_and_lose_no_judged_sample(tmp_path: Path) -> None:
    """SIGTERM exits 143 and SIGINT 130 (two children, side by side), each run row is
    ``interrupted`` and holds exactly the samples the printed scorecard judged."""
    signals = (signal.SIGTERM, signal.SIGINT)
    homes = {sig: tmp_path / sig.name for sig in signals}
    procs = {sig: _spawn_long_run(homes[sig], "--json") for sig in signals}
    try:
        for sig in signals:
            _wait_for_samples(procs[sig], homes[sig])
        for sig in signals:
            procs[sig].send_signal(sig)
        deadline = time.monotonic() + 4
        problems = [_stopped_cleanly(procs[sig], homes[sig], sig, deadline) for sig in signals]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert problems == [None, None]


def test_a_killed_run_stays_running_and_the_next_run_marks_it_abandoned(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proc = _spawn_long_run(isolated_home)
    _wait_for_samples(proc, isolated_home)
    proc.kill()
    proc.communicate(timeout=10)
    (dead,) = _runs()
    assert dead.status == "running"

    code, _, err = _cli(capsys, *SCRIPTED_ONE)
    assert code == 0 and err == []  # its heartbeat is fresh: it may be alive elsewhere
    assert _status(dead.id) == "running"

    long_ago = (datetime.now(UTC) - timedelta(minutes=10)).replace(tzinfo=None)
    with contextlib.closing(sqlite3.connect(_db(isolated_home))) as conn, conn:
        conn.execute(  # as if ten minutes had passed
            "UPDATE eval_run SET started_at = ?, heartbeat_at = ? WHERE id = ?",
            (long_ago.isoformat(" "), long_ago.isoformat(" "), dead.id),
        )
    code, _, err = _cli(capsys, *SCRIPTED_ONE)
    assert code == 0
    assert len(err) == 1 and err[0].startswith("agentic-eval: warning: "), err
    assert dead.id in err[0] and "abandoned" in err[0]
    assert _status(dead.id) == "abandoned"
    code, _, err = _cli(capsys, *SCRIPTED_ONE)
    assert code == 0 and err == []  # reported once
