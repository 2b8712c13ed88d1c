"""`agentic-eval guard` judges what git will commit: the staged blob of every indexed path, read
by its content (JSON, JSON lines, YAML, or as text) whatever its name.

The marked contents below are built from the constants at run time, so this file itself never
holds a mark the guard would find (the repository's own guard runs over it)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentic_eval.cli.main import main
from agentic_eval.core import realdata, realdata_judge
from agentic_eval.core.realdata import MARK, REAL_DATA_KEY

REPO = Path(__file__).resolve().parent.parent
DIGEST = hashlib.sha256(b"the real fixtures").hexdigest()
MARKED = json.dumps({"domain": "retail_ops", MARK: DIGEST, "turns": []}, sort_keys=True)
ESCAPED_E = MARK.replace("e", "\\u0065", 1)  # the JSON escape of its first letter
ALL_ESCAPED = "".join(f"\\u{ord(c):04X}" for c in MARK)  # every letter, upper-case hex
SCRUBBED = json.dumps({"domain": "retail_ops", "turns": []}, sort_keys=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "EVAL_FIXTURE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # no user hooksPath or templates
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.invalid")
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q")
    return path


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


def _stage(repo: Path, name: str, content: str | bytes) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    _git(repo, "add", "--", name)


def _guard(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["guard", "--repo", str(repo)])
    captured = capsys.readouterr()
    return code, captured.err + captured.out


def test_the_staged_copy_is_judged_not_the_scrubbed_work_tree(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _stage(repo, "run.json", MARKED)
    (repo / "run.json").write_text(SCRUBBED)  # scrubbed after `git add`: the mark is committed
    code, out = _guard(repo, capsys)
    assert code == 1
    assert f"run.json: staged copy carries {MARK!r}" in out
    _git(repo, "add", "run.json")  # now the scrubbed copy is what a commit takes
    (repo / "run.json").write_text(MARKED)  # and a marked edit not yet staged commits nothing
    code, out = _guard(repo, capsys)
    assert code == 0, out
    assert "none of 1 files in the git index holds real data" in out


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("runs.jsonl", json.dumps({"turn": 1}) + "\n" + MARKED + "\n"),
        ("SCORECARD.JSON", MARKED),
        ("run.json.bak", MARKED),
        ("run.yaml", yaml.safe_dump({"domain": "x", MARK: DIGEST})),
        ("run.yml", yaml.safe_dump({"fixtures": [{REAL_DATA_KEY: True}]})),
        ("transcript", MARKED),
        ("notes/copy.txt", json.dumps([{"nested": {MARK: "not-a-digest"}}])),
    ],
)
def test_a_marked_copy_is_caught_whatever_its_name(
    repo: Path, name: str, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _stage(repo, name, content)
    code, out = _guard(repo, capsys)
    assert code == 1, out
    assert f"{name}: staged copy " in out and "read as " in out


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (f'{{"id": 1, "{REAL_DATA_KEY}" : true}}', f'declares "{REAL_DATA_KEY}": true'),
        (f'{{"id": 1, "{REAL_DATA_KEY}"\t:\ttrue}}', f'declares "{REAL_DATA_KEY}": true'),
        (f'{{"id": 1,\n  "{REAL_DATA_KEY}"\n  :\n  true\n}}', f'declares "{REAL_DATA_KEY}": true'),
        (f'{{"{ESCAPED_E}": "{DIGEST}"}}', f"carries {MARK!r}"),
        (f'{{"{ALL_ESCAPED}": null}}', f"carries {MARK!r}"),
    ],
    ids=["space-before-colon", "tabs", "newlines", "unicode-escape", "all-escaped-no-digest"],
)
def test_spacing_and_escapes_do_not_hide_the_mark(
    repo: Path, content: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    json.loads(content)  # each is plain JSON
    _stage(repo, "fixtures.json", content)
    code, out = _guard(repo, capsys)
    assert code == 1, out
    assert f"fixtures.json: staged copy {why}" in out and "read as JSON" in out


@pytest.mark.parametrize(
    ("name", "content", "how"),
    [
        ("run.log", f'12:00 wrote {{"a": [1], "{MARK}": "{DIGEST}", "turns": [{{"role": ',
         "found in its text"),
        ("notes.txt", f'notes\n{{"{MARK}":"{DIGEST}"}}\n', "read from its JSON lines"),  # YAML:
        ("cut.json.part", f'{{"a": [1, 2],\n  "{REAL_DATA_KEY}": true,\n  "b": [',  # one string
         "found in its text"),
        ("store.db", b"SQLite format 3\0\0\0" + f'{{"{MARK}":"{DIGEST}"}}'.encode(),
         "found in its text"),
    ],
)  # fmt: skip
def test_text_that_does_not_parse_is_scanned_for_the_mark(
    repo: Path, name: str, content: str | bytes, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _stage(repo, name, content)
    code, out = _guard(repo, capsys)
    assert code == 1, out
    assert f"{name}: staged copy " in out and how in out


def test_naming_the_keys_in_prose_code_or_values_is_not_real_data(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _stage(repo, "README.md", (REPO / "README.md").read_text(encoding="utf-8"))
    _stage(repo, "realdata.py", Path(realdata.__file__).read_text(encoding="utf-8"))
    _stage(repo, "scenarios.py", f'common = {{"workflow": name, "{MARK}": mark}}\n')
    _stage(repo, "redact.json", json.dumps({"drop_fields": [MARK, REAL_DATA_KEY]}))
    _stage(repo, "flags.json", json.dumps({REAL_DATA_KEY: False, "note": f"no {MARK} here"}))
    _stage(repo, "doc.txt", f'A real fixture declares "{REAL_DATA_KEY}": true, and then...\n')
    code, out = _guard(repo, capsys)
    assert code == 0, out
    assert "none of 6 files" in out


def test_a_blob_too_large_to_parse_is_still_scanned_in_chunks(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(realdata_judge, "PARSE_LIMIT", 1 << 16)
    mark = f'"{MARK}": "{DIGEST}"'.encode()
    chunk = 1 << 20  # the mark straddles the first chunk boundary of the stream read
    _stage(repo, "dump.bin", b"x" * (chunk - 20) + mark + b"y" * (chunk + 7))
    _stage(repo, "big-clean.json", json.dumps({"rows": ["z" * 100] * 2000, "k": MARK}))
    code, out = _guard(repo, capsys)
    assert code == 1, out
    assert "dump.bin: staged copy carries" in out and "too large to parse" in out
    assert "big-clean.json" not in out


def test_self_referencing_yaml_is_read_once_and_later_documents_still_count(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _stage(repo, "loop.yaml", f"--- &a [*a, {{k: *a}}]\n--- {{{REAL_DATA_KEY}: yes}}\n")
    code, out = _guard(repo, capsys)
    assert code == 1, out
    assert f'loop.yaml: staged copy declares "{REAL_DATA_KEY}": true (read as YAML)' in out


def test_an_index_entry_git_cannot_read_fails_closed(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{'1' * 40},ghost.json")
    code, out = _guard(repo, capsys)
    assert code == 1, out
    assert "ghost.json: staged copy cannot be read from git" in out


def test_outside_a_git_work_tree_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["guard", "--repo", str(plain)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{plain} is not inside a git work tree" in err


def test_the_pre_commit_hook_refuses_a_commit_of_a_marked_staged_copy(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    call = "import sys; from agentic_eval.cli.main import main; sys.exit(main(['guard']))"
    hook.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(call)}\n")
    hook.chmod(0o755)
    _stage(repo, "run.json", MARKED)
    (repo / "run.json").write_text(SCRUBBED)
    refused = subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=repo, capture_output=True)
    assert refused.returncode != 0
    assert b"run.json: staged copy carries" in refused.stderr
    assert _git(repo, "rev-list", "--all").stdout == b""  # nothing was committed
    _git(repo, "commit", "-q", "-a", "-m", "scrubbed")  # -a stages the scrubbed copy first
    (repo / "run.json").write_text(MARKED)
    partial = subprocess.run(  # `git commit PATH` builds a temporary index: that one is read
        ["git", "commit", "-q", "-m", "y", "--", "run.json"], cwd=repo, capture_output=True
    )
    assert partial.returncode != 0
    assert b"run.json: staged copy carries" in partial.stderr


def test_the_repository_offers_the_guard_as_a_pre_commit_hook(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = (h for h in hooks if h["id"] == "agentic-eval-guard")
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    program, *args = shlex.split(hook["entry"])
    assert program == "agentic-eval"
    assert main([*args, "--repo", str(REPO)]) == 0
    assert "files in the git index holds real data" in capsys.readouterr().out


def test_marked_files_reads_work_tree_copies_by_the_same_rules(tmp_path: Path) -> None:
    (tmp_path / "fixture.yml").write_text(yaml.safe_dump({REAL_DATA_KEY: True}))
    (tmp_path / "README.md").write_text(f'Derived files carry "{MARK}": "<sha256>".\n')
    found = realdata.marked_files(tmp_path, ["fixture.yml", "README.md", "gone.json"], None)
    assert found == [f'fixture.yml: work-tree copy declares "{REAL_DATA_KEY}": true (read as YAML)']
