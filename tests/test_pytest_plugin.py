"""The pytest plugin, through a user's test files run by ``pytester`` in a subprocess (each run
loads the plugin from its ``pytest11`` entry point, with pytest-socket's flags as a user sets
them), and the Python API it stands on (``agentic_eval.run`` / ``agentic_eval.batch``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentic_eval
from agentic_eval.api import AgenticEvalError
from agentic_eval.backends.scripted import respond
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.domains.registry import get_domain
from agentic_eval.store.db import Store
from agentic_eval.testing import FakeProvider

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"
NO_NETWORK = ("--disable-socket", "--allow-unix-socket", "-p", "no:cacheprovider")

USER_TEST = """
import pytest

@pytest.mark.agentic_eval("retail_ops", cases="deduct-00[1-3]", agent="reference")
def test_deductions(agentic_eval_result):
    assert [s.case_id for s in agentic_eval_result.samples] == [
        "deduct-001", "deduct-002", "deduct-003"]
    assert all(s.replayed and s.reproduced for s in agentic_eval_result.samples)
    assert agentic_eval_result.passed, agentic_eval_result.report()
"""


def _recordings(tmp: Path, agent: str = "reference") -> Path:
    """A copy of retail_ops' recordings of ``agent`` under ``tmp``."""
    root = tmp / "recordings"
    shutil.copytree(RECORDINGS / "retail_ops" / agent, root / "retail_ops" / agent)
    return root


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*NO_NETWORK, *args, timeout=110)


def test_a_marked_test_replays_retail_ops_cases_with_sockets_disabled(
    pytester: pytest.Pytester,
) -> None:
    root = _recordings(pytester.path)
    pytester.makepyfile(test_user=USER_TEST)
    result = _run(pytester, f"--agentic-recordings={root}")
    result.assert_outcomes(passed=1)


def test_a_regressed_recording_fails_its_test(pytester: pytest.Pytester) -> None:
    root = _recordings(pytester.path)
    path = root / "retail_ops" / "reference" / "deduct-002.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    final = data["turns"][-1]["response"]["content"][0]
    assert final["name"] == "submit"
    final["input"]["allowed_cents"] += 1  # the recorded final answer, no longer right
    path.write_text(json.dumps(data), encoding="utf-8")
    pytester.makepyfile(test_user=USER_TEST)
    result = _run(pytester, f"--agentic-recordings={root}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*deduct-002*"])
    assert "deduct-001:" not in result.stdout.str()  # only the regressed case is reported


def test_per_case_makes_one_test_per_case_named_by_its_id(pytester: pytest.Pytester) -> None:
    root = _recordings(pytester.path)
    pytester.makepyfile(
        test_user="""
import pytest

@pytest.mark.agentic_eval("retail_ops", cases=["chase-001", "deduct-00[12]"], per_case=True)
def test_case(agentic_eval_result, agentic_eval_case):
    (sample,) = agentic_eval_result.samples
    assert sample.case_id == agentic_eval_case
    assert sample.passed and all(c.passed for c in sample.checks)
"""
    )
    result = _run(pytester, f"--agentic-recordings={root}", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*test_user.py::test_case?chase-001? PASSED*",
            "*test_user.py::test_case?deduct-001? PASSED*",
            "*test_user.py::test_case?deduct-002? PASSED*",
        ]
    )


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('"no_such_domain"', "*unknown domain*no_such_domain*"),
        ('"retail_ops", cases="zzz-*"', "*retail_ops has no case matching 'zzz-[*]'*"),
        ('"retail_ops", colour="red"', "*unknown argument 'colour'*"),
    ],
    ids=["domain", "case", "argument"],
)
def test_an_unknown_domain_or_case_is_a_collection_error(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    pytester.makepyfile(
        test_user=f"""
import pytest

@pytest.mark.agentic_eval({marker})
def test_it(agentic_eval_result):
    pass
"""
    )
    result = _run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting test_user.py*", message])
    assert "Traceback" not in result.stdout.str()


def test_mode_none_never_runs_a_case_it_has_no_recording_of(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = _run(pytester, f"--agentic-recordings={pytester.path / 'empty'}")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no recordings of agent 'reference' for retail_ops*"])


def test_the_plugin_is_inert_without_the_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
import sys

def test_plain():
    assert "agentic_eval.pytest_plugin" in sys.modules  # loaded from its entry point
    assert "agentic_eval.api" not in sys.modules  # and nothing of the run path with it
    assert "agentic_eval.domains" not in sys.modules
"""
    )
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    assert "agentic" not in result.stdout.str().replace("agentic-eval-", "")
    help_text = _run(pytester, "--help").stdout.str()
    assert "--agentic-record-mode={none,once,new_episodes,all}" in help_text


def _reference_responder() -> FakeProvider:
    agent = get_domain("retail_ops").agents()["reference"]

    def answer(request: ModelRequest) -> ModelResponse:
        return respond(agent, request)

    return FakeProvider(answer)


def test_record_mode_once_records_against_the_fake_provider_then_none_replays(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # the fake provider accepts any key
    root = pytester.path / "recordings"
    with _reference_responder() as fake:
        pytester.makepyfile(
            test_user=f"""
import pytest

@pytest.mark.agentic_eval("retail_ops", cases="deduct-001", agent="fake-model",
                          provider="openai", model="fake", base_url="{fake.openai_base_url}")
def test_recorded(agentic_eval_result):
    assert agentic_eval_result.passed, agentic_eval_result.report()
    print("recorded:", ",".join(agentic_eval_result.recorded) or "none")
"""
        )
        first = _run(
            pytester, f"--agentic-recordings={root}", "--agentic-record-mode=once",
            "--allow-hosts=127.0.0.1", "-s",
        )  # fmt: skip
        first.assert_outcomes(passed=1)
        first.stdout.fnmatch_lines(["*recorded: deduct-001*"])
        served = sum(fake.status_counts.values())
        assert served > 0
    transcript = root / "retail_ops" / "fake-model" / "deduct-001.json"
    assert json.loads(transcript.read_text(encoding="utf-8"))["case_id"] == "deduct-001"
    # The provider is gone: mode none replays the recording, with no socket but asyncio's.
    second = _run(pytester, f"--agentic-recordings={root}", "-s")
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["*recorded: none*"])


# The Python API.


def _store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'store.db'}")


def test_run_replays_and_returns_typed_samples(tmp_path: Path) -> None:
    store = _store(tmp_path)
    result = agentic_eval.run(
        "retail_ops", "deduct-00[12]", agent="naive", recordings=RECORDINGS, store=store
    )
    assert [(s.case_id, s.epoch, s.replayed) for s in result.samples] == [
        ("deduct-001", 0, True),
        ("deduct-002", 0, True),
    ]
    assert all(s.reproduced for s in result.samples)
    assert len(result.run_ids) == 1 and result.recorded == ()
    failing = [s for s in result.samples if s.outcome != "passed"]
    for sample in failing:  # the naive agent's recorded failures are reproduced, typed
        check = sample.failed_checks[0]
        assert check.expected != check.actual
        assert sample.case_id in result.report()
    assert result.passed is not bool(failing)


def test_record_modes_new_episodes_and_all(tmp_path: Path) -> None:
    root = _recordings(tmp_path)
    (root / "retail_ops" / "reference" / "deduct-002.json").unlink()
    store = _store(tmp_path)
    cases = ["deduct-001", "deduct-002"]
    none = agentic_eval.run("retail_ops", cases, recordings=root, store=store)
    assert not none.passed and none.sample("deduct-002").outcome == "error"
    once = agentic_eval.run("retail_ops", cases, recordings=root, store=store, record_mode="once")
    assert not once.passed and once.recorded == ()  # partly recorded: once does not record
    new = agentic_eval.run(
        "retail_ops", cases, recordings=root, store=store, record_mode="new_episodes"
    )
    assert new.passed and new.recorded == ("deduct-002",) and len(new.run_ids) == 2
    assert new.sample("deduct-001").replayed and not new.sample("deduct-002").replayed
    again = agentic_eval.run("retail_ops", cases, recordings=root, store=store, record_mode="all")
    assert again.passed and again.recorded == ("deduct-001", "deduct-002")
    assert agentic_eval.run("retail_ops", cases, recordings=root, store=store).passed


def test_run_refuses_bad_requests_in_one_line(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for kwargs, message in [
        ({"domain": "nope"}, "unknown domain"),
        ({"domain": "retail_ops", "cases": "zzz"}, "no case matching 'zzz'"),
        ({"domain": "retail_ops", "agent": "ghost"}, "no recordings of agent 'ghost'"),
        (
            {"domain": "retail_ops", "agent": "ghost", "record_mode": "once"},
            "no scripted agent 'ghost'",
        ),
        ({"domain": "retail_ops", "record_mode": "sometimes"}, "record_mode 'sometimes'"),
    ]:
        with pytest.raises(AgenticEvalError, match=message) as caught:
            agentic_eval.run(recordings=tmp_path / "empty", store=store, **kwargs)
        assert "\n" not in str(caught.value)


def test_batch_gates_samples_of_a_scripted_agent(tmp_path: Path) -> None:
    store = _store(tmp_path)
    good = agentic_eval.batch("retail_ops", "deduct-00[12]", samples=2, store=store)
    assert good.passed and good.gate.verdict == "PASS" and len(good.samples) == 4
    assert [(s.case_id, s.epoch) for s in good.samples][:2] == [
        ("deduct-001", 0),
        ("deduct-001", 1),
    ]
    bad = agentic_eval.batch("retail_ops", "chase-00[12]", agent="naive", store=store)
    assert bad.gate.verdict == "FAIL" and not bad.passed
    assert any(not s.passed for s in bad.samples)
    assert agentic_eval.batch.RunPlan is not None  # still the batch package too


def test_import_agentic_eval_does_not_load_the_api_and_batch_stays_callable() -> None:
    code = (
        "import sys, agentic_eval; "
        "print('agentic_eval.api' in sys.modules, 'agentic_eval.batch' in sys.modules); "
        "from agentic_eval.batch import RunPlan; "  # the package first, the API not loaded
        "print('agentic_eval.api' in sys.modules, callable(agentic_eval.batch), "
        "agentic_eval.batch.RunPlan is RunPlan)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    ).stdout  # fmt: skip
    assert out.split() == ["False", "False", "False", "True", "True"]


def test_a_committed_scorecard_that_differs_fails_a_whole_domain_replay(tmp_path: Path) -> None:
    root = _recordings(tmp_path)
    store = _store(tmp_path)
    assert agentic_eval.run("retail_ops", recordings=root, store=store).passed
    path = root / "retail_ops" / "reference" / "scorecard.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    card["cases"][0]["turns"] += 1
    path.write_text(json.dumps(card, sort_keys=True), encoding="utf-8")
    result = agentic_eval.run("retail_ops", recordings=root, store=store)
    assert all(s.passed for s in result.samples)  # every sample reproduced its transcript
    assert not result.passed and len(result.problems) == 1
    assert "scorecard" in result.report()
