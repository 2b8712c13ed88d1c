"""JUnit that tells the truth (issue 20, part 1), read the way CI reads it: junitparser, and the
Jenkins xUnit ``junit-10.xsd`` schema that GitLab and Jenkins follow, validated with xmlschema.

The schema is the one pytest ships in its source distribution (``testing/example_scripts/
junit-10.xsd``): fetched from PyPI (a package registry) for the installed pytest, its sha256
checked against the index's, cached outside the repository. Nothing of it is committed.

- a replay of the committed recordings: one distinct testcase per sample, each with a time, and
  no failure while every replay reproduces; a tampered recording fails exactly its testcase;
- a scripted run tests its gate; an agent shipped to fail is an expected failure, and a gate it
  passes is a failure;
- a failure's text is complete: every schema error of an invalid output.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from junitparser import Failure, JUnitXml, Skipped

from agentic_eval.backends import ScriptedBackend
from agentic_eval.backends.scripted import Submit
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.cli.main import main
from agentic_eval.domains import get_domain
from agentic_eval.evaluation import RunSettings, run_session
from agentic_eval.history import entry_from_session
from agentic_eval.history.files import StoredEntry
from agentic_eval.report import runs_junit, runs_view
from agentic_eval.store.db import Store

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"
CACHE = Path.home() / ".cache" / "agentic-eval-tests"

_FETCH = r"""
import hashlib, io, re, sys, tarfile, urllib.request
version, out = sys.argv[1], sys.argv[2]
index = urllib.request.urlopen("https://pypi.org/simple/pytest/", timeout=60).read().decode()
name = re.escape(f"pytest-{version}.tar.gz")
url, digest = re.search(r'href="([^"#]+/' + name + r')#sha256=([0-9a-f]{64})"', index).groups()
data = urllib.request.urlopen(url, timeout=120).read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit("sha256 of the pytest sdist does not match the index")
with tarfile.open(fileobj=io.BytesIO(data)) as t:
    member = f"pytest-{version}/testing/example_scripts/junit-10.xsd"
    open(out, "wb").write(t.extractfile(member).read())
"""


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    """The junit-10 schema, from the installed pytest's source distribution on PyPI."""
    version = pytest.__version__
    path = CACHE / f"junit-10-pytest-{version}.xsd"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")  # xdist workers fetch apart
        done = subprocess.run(  # a child process: pytest-socket blocks this one's sockets
            [sys.executable, "-c", _FETCH, version, str(part)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"cannot fetch junit-10.xsd from PyPI: {done.stderr[-500:]}"
        part.replace(path)
    return xmlschema.XMLSchema(str(path))


def _junit(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> tuple[int, JUnitXml]:
    code = main(["run", *args, "--format", "junit", "--output", str(out), "--no-history"])
    capsys.readouterr()
    return code, JUnitXml.fromfile(str(out))


def _cases(xml: JUnitXml) -> list[Any]:
    return [case for suite in xml for case in suite]


def test_the_replay_of_every_recording_is_green_and_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: xmlschema.XMLSchema
) -> None:
    out = tmp_path / "replay.xml"
    code, xml = _junit(capsys, out)
    assert code == 0
    schema.validate(str(out))
    cases = _cases(xml)
    # the demo agents meant to fail are in there, reproduced: nothing is red
    assert {c.classname for c in cases} >= {"retail_ops.naive", "approval_audit.injection_follower"}
    assert (xml.failures, xml.errors) == (0, 0)
    assert all(c.is_passed for c in cases)
    pairs = Counter((c.classname, c.name) for c in cases)
    assert len(pairs) == len(cases) == xml.tests  # every testcase is its own
    assert all(c.time is not None and c.time >= 0 for c in cases)
    names = {s.name: s for s in xml}
    naive = names["retail_ops / naive"]
    outs = [c.system_out or "" for c in naive]
    assert any(o.startswith("recorded and reproduced: check_failed") for o in outs)


def test_a_tampered_recording_fails_exactly_its_testcase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: xmlschema.XMLSchema
) -> None:
    rec = tmp_path / "rec"
    shutil.copytree(RECORDINGS / "retail_ops" / "reference", rec / "retail_ops" / "reference")
    target = rec / "retail_ops" / "reference" / "match-001.json"
    text = target.read_text(encoding="utf-8")
    assert "Whole milk 1 L" in text
    target.write_text(text.replace("Whole milk 1 L", "Whole milk 2 L"), encoding="utf-8")
    out = tmp_path / "tampered.xml"
    code, xml = _junit(capsys, out, "retail_ops", "--recordings", str(rec))
    assert code == 1
    schema.validate(str(out))
    failed = [c for c in _cases(xml) if not c.is_passed and not c.is_skipped]
    assert [(c.classname, c.name) for c in failed] == [("retail_ops.reference", "match-001")]
    (result,) = failed[0].result
    assert isinstance(result, Failure) and "tool_calls[1].result" in (result.message or "")
    assert xml.failures == 1 and xml.errors == 0


def test_an_agent_shipped_to_fail_is_an_expected_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: xmlschema.XMLSchema
) -> None:
    out = tmp_path / "naive.xml"
    code, xml = _junit(capsys, out, "retail_ops", "--backend", "scripted", "--agent", "naive")
    assert code == 1  # the exit code is still the gate's
    schema.validate(str(out))
    assert (xml.failures, xml.errors) == (0, 0)
    cases = {c.name: c for c in _cases(xml)}
    (gate,) = cases["gate"].result
    assert isinstance(gate, Skipped) and gate.type == "expected_failure"
    expected = [c for c in cases.values() if c.is_skipped]
    assert len(expected) > 1 and all(
        r.type == "expected_failure" for c in expected for r in c.result
    )


def test_an_expected_failure_that_passes_is_red(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = get_domain("retail_ops")
    monkeypatch.setattr(type(domain), "failing_agents", lambda self: frozenset({"reference"}))
    out = tmp_path / "xpass.xml"
    code, xml = _junit(capsys, out, "retail_ops", "--backend", "scripted", "--cases", "match-*")
    assert code == 0
    (gate,) = next(c for c in _cases(xml) if c.name == "gate").result
    assert isinstance(gate, Failure) and gate.type == "unexpected_pass"
    assert "the checks did not catch it" in (gate.message or "")
    assert xml.failures == 1


def test_a_passing_gate_tolerates_a_failed_sample_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = get_domain("retail_ops")
    monkeypatch.setattr(type(domain), "failing_agents", lambda self: frozenset[str]())
    out = tmp_path / "tolerated.xml"
    args = ("retail_ops", "--backend", "scripted", "--agent", "naive", "--cases", "match-*")
    code, xml = _junit(capsys, out, *args, "--max-failure-rate", "1.0")
    assert code == 0
    assert (xml.failures, xml.errors) == (0, 0)
    tolerated = [r for c in _cases(xml) for r in c.result if isinstance(r, Skipped)]
    assert tolerated and all(r.type == "tolerated" for r in tolerated)
    assert all("within the gate's threshold" in (r.message or "") for r in tolerated)


def _invalid(task: Any) -> Any:
    """Submits an answer missing every required field."""
    del task
    yield Submit({"nothing": True})


def test_a_schema_failure_lists_every_error(tmp_path: Path) -> None:
    domain = get_domain("retail_ops")
    cases = [c for c in domain.load_cases() if c.id == "match-001"]
    settings = RunSettings(model="scripted:invalid")
    specs = domain.task_specs(cases, settings.limits)
    spec = BackendSpec(kind="scripted", agent="invalid")
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        result = asyncio.run(
            run_session(
                domain.name, specs, ScriptedBackend("invalid", _invalid), settings, "scripted",
                store=store, backend_spec=spec,
            )
        )  # fmt: skip
    finally:
        store.close()
    entry = entry_from_session(result, domain, specs, settings, spec)
    (case,) = entry.scorecard.cases
    assert "(+" in case.outcome.reason  # the model was told one line
    text = runs_junit(runs_view([StoredEntry(tmp_path / "e.json", entry)]))
    xml = JUnitXml.fromstring(text.encode())
    (result_node,) = next(c for c in _cases(xml) if c.name == "match-001").result
    body = result_node.text or ""
    required = specs[0].output_model.model_json_schema()["required"]
    assert len(required) > 1
    for field in required:
        assert f"{field}: Field required" in body, (field, body)
