"""`agentic-eval guard` finds the mark in every common serialisation a staged file may carry it
in: escaped inside strings (JSON, HTML, URLs), JSON5, TOML, INI and .env, CSV and TSV, XML,
Markdown and HTML tables, base64, gzip/xz and UTF-16; with any spacing, in files that parse and in
files that do not, over the parse limit too. Prose and code that only name the keys still pass.

Every marked content is built at run time from the constants, so this file holds no mark the
repository's own guard would find (it runs over this file)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import lzma
import os
import subprocess
import textwrap
import urllib.parse
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.core import realdata_judge
from agentic_eval.core.realdata import MARK, REAL_DATA_KEY

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src" / "agentic_eval"
DIGEST = hashlib.sha256(b"the real fixtures").hexdigest()
REAL = REAL_DATA_KEY
MARKED = json.dumps({"domain": "retail_ops", MARK: DIGEST, "turns": []})
CARRIES = f"carries {MARK!r}"
DECLARES = f'declares "{REAL}": true'
UNCLOSED = "x: [unclosed\n"  # neither JSON, YAML nor TOML: what follows is read as text only


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "EVAL_FIXTURE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True, timeout=60)
    return path


def _stage(repo: Path, name: str, content: str | bytes) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    subprocess.run(["git", "add", "--", name], cwd=repo, check=True, timeout=60)


def _guard(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["guard", "--repo", str(repo)])
    captured = capsys.readouterr()
    return code, captured.err + captured.out


def _caught(repo: Path, capsys: pytest.CaptureFixture[str], name: str, why: str, how: str) -> None:
    code, out = _guard(repo, capsys)
    assert code == 1, out
    line = next((x for x in out.splitlines() if f"{name}: staged copy " in x), "")
    assert why in line and how in line, out


def _wrapped_base64(data: bytes) -> str:
    return "\n".join(textwrap.wrap(base64.b64encode(data).decode(), 76))


NOTEBOOK_CELL = ["{\n", f'  "{MARK}": "{DIGEST}",\n', '  "turns": []\n', "}\n"]
PADDED_REAL = json.dumps({"padding": "p" * 200, REAL: True}).encode()


@pytest.mark.parametrize(
    ("name", "content", "why", "how"),
    [
        # escaped inside a string
        ("log.json", json.dumps({"log": json.dumps({MARK: DIGEST})}), CARRIES, "inside a string"),
        ("log.jsonl", json.dumps({"msg": json.dumps({REAL: True, "x": 1})}) + "\n", DECLARES,
         "inside a string"),
        ("cell.ipynb", json.dumps({"cells": [{"source": NOTEBOOK_CELL}]}), CARRIES,
         "inside a string"),
        ("cut.log", "truncated " + json.dumps(json.dumps({"a": [1], REAL: True, "b": "x"}))[:-8],
         DECLARES, "found in its text"),
        # HTML
        ("pre.html", f"<pre>{{&quot;{MARK}&quot;: &quot;{DIGEST}&quot;}}</pre>", CARRIES,
         "found in its text"),
        ("cells.html", f"<table><tr><td>{MARK}</td><td>{DIGEST}</td></tr></table>", CARRIES,
         "found in its text"),
        ("row.html", f'<tr><td>{REAL}</td><td class="v">true</td></tr>', DECLARES,
         "found in its text"),
        ("query.txt", "GET /runs?meta=" + urllib.parse.quote(MARKED), CARRIES, "found in its text"),
        ("twice.json", json.dumps(json.dumps(json.dumps({REAL: True}))), DECLARES,
         "inside a string value, inside a string value"),
        # JSON5
        ("fixture.json5", f"{{\n  // fixture\n  name: 'x', // note\n  {REAL}: true, // yes\n}}\n",
         DECLARES, "read as JSON5"),
        ("run.json5", f"{{\n  /* c */ {MARK}: 'x',\n  z: [1, 2,],\n}}\n", CARRIES, "read as JSON5"),
        # key = value
        ("meta.toml", f'{MARK} = "{DIGEST}"\n', CARRIES, "read as TOML"),
        ("fixture.toml", f'[meta]\nname = "x"\n{REAL} = true\n', DECLARES, "read as TOML"),
        ("run.ini", f"[run]\n; derived\n{MARK}={DIGEST}\n", CARRIES, "found in its text"),
        ("fixture.ini", f"[fixture]\n; a real one\nname: x\n{REAL} = yes\n", DECLARES,
         "found in its text"),
        (".env", f"EVAL=1\n{MARK.upper()}={DIGEST}\n", CARRIES, "found in its text"),
        ("real.env", f"export {REAL}=1\n", DECLARES, "found in its text"),
        # tables
        ("runs.csv", f"id,{MARK},other\n1,{DIGEST},x\n", CARRIES, "found in its text"),
        ("fixtures.csv", f'{REAL},name\n"true","x, y"\n', DECLARES, "found in its text"),
        ("fixtures.tsv", f"name\t\t{REAL}\nx\t\tyes\n", DECLARES, "found in its text"),
        ("keys.md", f"| key | value |\n|---|---|\n| {MARK} | {DIGEST} |\n", CARRIES,
         "found in its text"),
        ("flags.md", f"| {REAL} | name |\n|---|---|\n| true | x |\n", DECLARES,
         "found in its text"),
        # XML
        ("attr.xml", f'<run id="1" {MARK}="{DIGEST}"/>', CARRIES, "found in its text"),
        ("elem.xml", f"<run><{MARK}>{DIGEST}</{MARK}></run>", CARRIES, "found in its text"),
        ("elem-any.xml", f"<run><{MARK}>sha-of-it</{MARK}></run>", CARRIES, "found in its text"),
        ("real.xml", f"<fixture>\n  <{REAL}> true </{REAL}>\n</fixture>", DECLARES,
         "found in its text"),
        ("real-attr.xml", f'<fixture id="1" {REAL}="yes"/>', DECLARES, "found in its text"),
        ("ns.xml", f"<f:fixture xmlns:f='u'><f:{REAL}>true</f:{REAL}></f:fixture>", DECLARES,
         "found in its text"),
        ("array.php", f"<?php return ['{REAL}' => true, 'x' => 1];", DECLARES,
         "found in its text"),
        # edge forms
        ("broken.yaml", f"{UNCLOSED}{REAL}: on\n", DECLARES, "found in its text"),
        ("yes.yaml", f"{UNCLOSED}{REAL}: 'yes'  # a real one\n", DECLARES, "found in its text"),
        ("string.json", json.dumps({REAL: "true"}), DECLARES, "read as JSON"),
        ("one.json", json.dumps({REAL: 1}), DECLARES, "read as JSON"),
        ("quoted.yaml", f"{REAL}: 'True'\n", DECLARES, "read as YAML"),
        ("spaced.txt", f'{{"a": [1],{" " * 40}"{REAL}"{" " * 40}:{" " * 40}true,{" " * 40}"b": [',
         DECLARES, "found in its text"),
        ("spaced-mark.txt", f'{{"{MARK}":{" " * 40}"{DIGEST}"', CARRIES, "found in its text"),
        ("null.txt", f'broken {{ "{MARK}": null', CARRIES, "found in its text"),
        ("nonhex.txt", f'{{"a": 1, "{MARK}": "not-a-digest"', CARRIES, "found in its text"),
        ("prefixed.txt", f'cut {{"{MARK}": "sha256:{DIGEST}"', CARRIES, "found in its text"),
        ("upper.json", json.dumps({MARK.upper(): DIGEST}), CARRIES, "read as JSON"),
        ("dashed.json", json.dumps({MARK.replace("_", "-"): DIGEST}), CARRIES, "read as JSON"),
        # encodings
        ("blob.txt", base64.b64encode(MARKED.encode()), CARRIES, "base64-decoded"),
        ("att.yaml", "attachment: |\n" + textwrap.indent(_wrapped_base64(PADDED_REAL), "  "),
         DECLARES, "base64-decoded"),
        ("run.json.gz", gzip.compress(MARKED.encode()), CARRIES, "gzip-decompressed"),
        ("fixture.yaml.xz", lzma.compress(f"{REAL}: true\n".encode()), DECLARES,
         "xz-decompressed"),
        ("wide.json", json.dumps({REAL: True}).encode("utf-16"), DECLARES, "decoded as UTF-16"),
        ("wide-le.json", MARKED.encode("utf-16-le"), CARRIES, "decoded as UTF-16-LE"),
        ("latin.json", json.dumps({"note": "caf\xe9", MARK: "x"}, ensure_ascii=False).encode(
            "latin-1"), CARRIES, "read as JSON"),
        ("store.bin", b"\0" * 10 + f'{{"{MARK}": "not-hex"}}'.encode(), CARRIES,
         "found in its text"),
    ],
)  # fmt: skip
def test_the_mark_is_found_in_every_common_serialisation(
    repo: Path, name: str, content: str | bytes, why: str, how: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _stage(repo, name, content)
    _caught(repo, capsys, name, why, how)


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("nonhex.json", b'{"pad": "' + b"x" * 100_000 + f'", "{MARK}": "not-hex"}}'.encode(),
         CARRIES),
        ("spaced.json", b'{"pad": "' + b"x" * 100_000 + b'",' + b" " * 40 + f'"{REAL}": true}}'
         .encode(), DECLARES),
        ("gz.json.gz", gzip.compress(b'{"pad": "' + b"x" * 100_000 + f'", {MARKED[1:]}'.encode()),
         CARRIES),
    ],
)  # fmt: skip
def test_over_the_parse_limit_the_same_forms_are_found_as_text(
    repo: Path, name: str, content: bytes, why: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(realdata_judge, "PARSE_LIMIT", 1 << 16)
    _stage(repo, name, content)
    _caught(repo, capsys, name, why, "too large to parse")


def test_a_run_of_whitespace_longer_than_a_window_does_not_hide_the_declaration(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(realdata_judge, "PARSE_LIMIT", 1 << 16)
    chunk = 1 << 20  # the spaces straddle the first chunk boundary of the stream read
    key = f'"{REAL}"'.encode()
    content = b"x" * (chunk - 1000) + b'{"a": 1,' + b" " * 300_000 + key + b": true}"
    _stage(repo, "dump.bin", content)
    _caught(repo, capsys, "dump.bin", DECLARES, "too large to parse")


def test_compressed_content_past_the_inflate_limit_cannot_be_checked(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(realdata_judge, "INFLATE_LIMIT", 1 << 20)
    _stage(repo, "bomb.gz", gzip.compress(b"\0" * (4 << 20)))
    _caught(repo, capsys, "bomb.gz", "cannot be checked", "decompresses past 1 MiB")


def test_prose_and_code_naming_the_keys_are_not_real_data(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = {
        "README.md": (REPO / "README.md").read_text(encoding="utf-8"),
        "prose.txt": f"The key {MARK} holds the fixtures' sha256; a fixture sets {REAL} to true.",
        "names.py": f'MARK = "{MARK}"\nREAL = "{REAL}"\n',
        "call.py": f"load(\n    path,\n    {REAL}=True,\n)\nload(\n    path,\n    {REAL}=True\n)\n",
        "dict.py": f'common = {{"workflow": name, "{MARK}": mark, "{REAL}": flag}}\n',
        "fmt.py": f'print(f"{{{MARK}:10}}")\nd = dict({MARK}="abc", {REAL}=True)\n',
        "fixture.toml": f'[fixture]\n{REAL} = false\nname = "x"\n',
        "fixture.ini": f"[x]\n{REAL}=no\n{MARK}=\n",
        "flags.json": json.dumps({REAL: "false", "n": 0, "note": f"no {MARK} here"}),
        "zero.json": json.dumps({REAL: 0}),
        "comment.yaml": f"{REAL}: false  # true only for real fixtures\n",
        "fixtures.csv": f"name,{REAL}\nx,false\ny,no\n",
        "keys.md": f"| key | meaning |\n|---|---|\n| {MARK} | the fixtures' sha256 |\n"
        f"| {REAL} | true on a real fixture file |\n",
        "doc.html": f"<p>The <code>&quot;{REAL}&quot;: true</code> declaration, <b>{MARK}</b>.</p>",
        "blob.txt": base64.b64encode(json.dumps({"a": "b" * 50, "c": [1, 2]}).encode()).decode(),
        "run.json.gz": gzip.compress(json.dumps({"domain": "retail_ops", "turns": []}).encode()),
        "sums.txt": f"{DIGEST}  fixtures.json\n",
    }
    sources = ["core/realdata.py", "core/realdata_formats.py", "core/realdata_text.py",
               "core/realdata_judge.py", "cli/guard.py"]  # fmt: skip
    for rel in sources:
        clean[Path(rel).name] = (SRC / rel).read_text(encoding="utf-8")
    for name, content in clean.items():
        _stage(repo, name, content)
    code, out = _guard(repo, capsys)
    assert code == 0, out
    assert f"none of {len(clean)} files" in out
