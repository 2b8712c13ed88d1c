"""Live backends end to end: a retail_ops case through the official SDKs against FakeProvider.

The fake provider answers with the domain's scripted reference agent, so the whole live path runs
(SDK, wire format, loop, tools, checks, store, recording) with no network.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.backends.scripted import respond
from agentic_eval.cli.main import main
from agentic_eval.core import ModelRequest, ModelResponse
from agentic_eval.domains import get_domain
from agentic_eval.testing import FakeProvider, Fault

KEY = "sk-test-SECRET-4242424242"
CASE = "match-001"


def reference_responder(request: ModelRequest) -> ModelResponse:
    return respond(get_domain("retail_ops").agents()["reference"], request)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(reference_responder) as provider:
        yield provider


def _live(provider: str, fake: FakeProvider, *extra: str) -> list[str]:
    url = fake.anthropic_base_url if provider == "anthropic" else fake.openai_base_url
    return [
        "run",
        "retail_ops",
        "--provider",
        provider,
        "--base-url",
        url,
        "--model",
        "fake-model",
        "--retries",
        "1",
        "--timeout",
        "1",
        "--json",
        *extra,
    ]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_case_runs_end_to_end_with_tool_calls_records_and_replays(
    provider: str,
    fake: FakeProvider,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY", KEY)
    rec = tmp_path / "rec"
    code = main(_live(provider, fake, "--cases", CASE, "--record", "--recordings", str(rec)))
    out = capsys.readouterr().out
    assert code == 0, out
    (run,) = json.loads(out)["runs"]
    card = run["scorecard"]
    assert card["totals"]["passed"] == 1
    assert card["produced_by"] == {
        "agent": "fake-model",
        "agent_kind": "model",
        "backend": provider,
        "model": "fake-model",
        "approval_mode": "enforce",
    }
    assert card["cases"][0]["tool_calls"] >= 3  # real tool calls went over the wire
    assert len(fake.requests) == card["cases"][0]["turns"]
    assert fake.saw_auth_header
    transcript = (rec / "retail_ops" / "fake-model" / f"{CASE}.json").read_text()
    assert KEY not in transcript and "authorization" not in transcript.lower()
    assert "x-api-key" not in transcript.lower()

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    requests_before = len(fake.requests)
    code = main(["run", "retail_ops", "--cases", CASE, "--recordings", str(rec), "--json"])
    assert code == 0
    (replayed,) = json.loads(capsys.readouterr().out)["runs"]
    assert replayed["scorecard"] == card  # replay reproduces the live scorecard
    assert replayed["replay"]["reproduced"]
    assert len(fake.requests) == requests_before  # and never called the provider


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize(
    "fault",
    [Fault.status(429), Fault.status(529), Fault.status(500), Fault.delay(3.0)],
    ids=["429", "529", "500", "timeout"],
)
def test_provider_failures_end_as_transient(
    provider: str,
    fault: Fault,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake.inject(fault, fault)  # first try and the one retry both fail
    code = main(_live(provider, fake, "--cases", CASE))
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    card = run["scorecard"]
    case = card["cases"][0]
    assert case["outcome"]["kind"] == "transient", case
    assert card["gate"]["verdict"] == "INCONCLUSIVE" and code == 2


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_transient_failure_within_the_retries_recovers(
    provider: str,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake.inject(Fault.status(429))
    assert main(_live(provider, fake, "--cases", CASE)) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["scorecard"]["totals"]["passed"] == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_refused_key_stops_the_run_with_one_line(
    provider: str,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake.inject(*[Fault.status(401)] * 40)
    code = main(_live(provider, fake, "--cases", "match-00*", "--concurrency", "3"))
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1 and "authentication failed" in lines[0], lines
    assert captured.out == ""
    assert len(fake.requests) <= 3  # it stopped at the first refusals, not after every case


def test_missing_anthropic_key_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "retail_ops", "--provider", "anthropic", "--model", "m"])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code != 0 and len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0]


def test_live_run_reports_progress_per_case_in_a_log(
    fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "retail_ops",
            "--provider",
            "openai",
            "--base-url",
            fake.openai_base_url,
            "--model",
            "fake-model",
            "--cases",
            "match-00[12]",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "[1/2] retail_ops match-001: passed" in captured.err
    assert "[2/2] retail_ops match-002: passed" in captured.err
    assert "model fake-model via openai" in captured.out


def test_a_transient_sample_never_overwrites_a_recording_and_producers_never_mix(
    fake: FakeProvider,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    rec = tmp_path / "rec"
    record = ("--cases", CASE, "--record", "--recordings", str(rec), "--retries", "0")
    assert main(_live("anthropic", fake, *record)) == 0
    capsys.readouterr()
    (path,) = (rec / "retail_ops" / "fake-model").glob(f"{CASE}.json")
    good = path.read_bytes()
    fake.inject(Fault.status(500))
    assert main(_live("anthropic", fake, *record)) == 2
    assert "1 transient samples not recorded" in capsys.readouterr().err
    assert path.read_bytes() == good  # the provider's failure did not replace the recording
    replay = [
        "run",
        "retail_ops",
        "--agent",
        "fake-model",
        "--recordings",
        str(rec),
        "--cases",
        CASE,
    ]
    assert main(replay) == 0, capsys.readouterr()
    capsys.readouterr()
    scripted = ["run", "retail_ops", "--backend", "scripted", "--label", "fake-model", *record]
    assert main(scripted) == 2
    err = capsys.readouterr().err
    assert "holds recordings by fake-model (model, anthropic)" in err and len(err.splitlines()) == 1
    assert path.read_bytes() == good
