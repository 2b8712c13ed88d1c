"""What ``agentic-eval step`` prints: each prompt and response as it happens, and the verdict."""

from __future__ import annotations

import json
from typing import Any

import click

from agentic_eval.backends.base import (
    BackendInfo,
    CallContext,
    ModelBackend,
    Review,
    sample_transcript_ref,
    start_sample,
)
from agentic_eval.core.messages import Message, ToolResultBlock, ToolUseBlock
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.text import printable
from agentic_eval.core.transcript import Transcript
from agentic_eval.evaluation.scenario import StepRun
from agentic_eval.workflow.scenarios import AgentScenario


def echo(text: str = "") -> None:
    """Print ``text`` with control characters made visible."""
    click.echo(printable(text))


def _block_text(block: Any) -> str:
    if isinstance(block, ToolUseBlock):
        return f"[call {block.name}] {json.dumps(block.input, ensure_ascii=False)}"
    if isinstance(block, ToolResultBlock):
        flag = " (error)" if block.is_error else ""
        return f"[result {block.tool_use_id}{flag}] {block.content}"
    return str(getattr(block, "text", ""))


def _message_text(message: Message) -> str:
    return "\n".join(_block_text(b) for b in message.content)


class ShowingBackend(ModelBackend):
    """Wraps a backend and prints every prompt (what is new in it) and every response."""

    def __init__(self, inner: ModelBackend) -> None:
        self.inner = inner
        self._seen = 0

    async def start_case(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> None:
        """Forward; the next request is printed whole."""
        self._seen = 0
        await start_sample(self.inner, domain, case_id, sample, attempt)

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """Print the new part of the prompt, ask the wrapped backend, print the response."""
        if self._seen == 0:
            echo(f"--- prompt (turn {call.turn}): system ---")
            echo(request.system)
            echo(f"--- tools: {', '.join(t.name for t in request.tools)} ---")
        for message in request.messages[self._seen :]:
            echo(f"--- prompt (turn {call.turn}): {message.role} ---")
            echo(_message_text(message))
        self._seen = len(request.messages)
        response = await self.inner.complete(request, call)
        echo(f"--- response (turn {call.turn}) ---")
        echo(_message_text(response.message()))
        self._seen += 1
        return response

    def info(self) -> BackendInfo:
        """The wrapped backend's identity."""
        return self.inner.info()

    def review(self, transcript: Transcript) -> Review:
        """Forward."""
        return self.inner.review(transcript)

    def transcript_ref(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> str | None:
        """Forward."""
        return sample_transcript_ref(self.inner, domain, case_id, sample, attempt)

    async def finish_case(self, transcript: Transcript) -> None:
        """Forward."""
        await self.inner.finish_case(transcript)

    async def aclose(self) -> None:
        """Forward."""
        await self.inner.aclose()


def print_header(scenario: AgentScenario, agent: str, backend: str) -> None:
    """Which scenario, step, agent and backend."""
    flow = scenario.workflow
    echo(f"scenario {scenario.name}: {scenario.description}")
    echo(f"workflow {flow.key}, step {scenario.template}; agent {agent} ({backend})")
    checks = ", ".join(c.name for c in scenario.all_checks()) or "none"
    echo(f"checks: {checks}; max failure rate {scenario.max_failure_rate:g}")


def print_attempt(run: StepRun) -> None:
    """The attempt's place in the job, its output, each check and the outcome."""
    feedback = "; ".join(run.feedback) or "none"
    echo(
        f"job {run.job_id} step {run.step_key} attempt {run.attempt_number} "
        f"(claim {run.claim_id}); feedback: {feedback}"
    )
    transcript = run.case.transcript
    if transcript is not None and transcript.output is not None:
        echo("output:")
        echo(json.dumps(transcript.output, indent=2, ensure_ascii=False))
    for c in run.case.result.checks:
        mark = "pass" if c.passed else "FAIL"
        echo(f"  {mark}  {c.name}: {c.message}")
    outcome = run.outcome
    reason = f" ({outcome.reason})" if outcome.reason else ""
    echo(f"outcome: {outcome.kind}{reason}")
    if run.case.reproduced is False:
        echo(f"replay: NOT reproduced: {run.case.problem}")
