"""The transcript: one file per case, written by ``record`` and read by ``replay``.

It holds only what the allow-list names: requests (as keys plus the messages the harness
appended), responses, tool calls and results, policy events, the output, the verdict and
provenance. No header, API key or token is ever part of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentic_eval.core.canonical import Fragment, canonical_bytes, spliced_bytes
from agentic_eval.core.defaults import USER_STOP as USER_STOP
from agentic_eval.core.messages import Frozen, Message, trusted
from agentic_eval.core.model import ModelRequest, ModelResponse, ToolSpec
from agentic_eval.core.results import CheckResult, Outcome, PolicyEvent, ToolCallRecord
from agentic_eval.core.settings import RunParameters

TRANSCRIPT_SCHEMA_VERSION = 2


class Provenance(Frozen):
    """What produced a recording. No clock time: re-recording an unchanged run leaves the file
    byte-identical (times are kept in the store)."""

    agent: str = Field(
        description="Agent label (scripted agent name, or a label naming the model)."
    )
    agent_kind: Literal["scripted", "model"] = Field(
        description="scripted: deterministic Python; model: a language model behind a provider."
    )
    backend: str = Field(
        description="Backend that produced the responses (scripted, anthropic...)."
    )
    model: str = Field(description="Model name sent in requests.")
    parameters: RunParameters = Field(description="Run parameters: limits, approval mode...")
    package_version: str = Field(description="agentic-eval version that recorded it.")
    external_fixtures: str | None = Field(
        default=None,
        description="sha256 of the real (external) fixtures the case came from; absent for "
        "committed fixtures. A file carrying it must never be committed.",
    )

    @model_serializer(mode="wrap")
    def _drop_absent_mark(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("external_fixtures") is None:
            data.pop("external_fixtures", None)
        return data


class RequestTemplate(Frozen):
    """The parts of every request in a case that do not change from turn to turn."""

    model: str = Field(description="Model name.")
    system: str = Field(description="System prompt.")
    tools: tuple[ToolSpec, ...] = Field(description="Tools offered.")
    max_tokens: int = Field(description="Output token bound per call.")
    temperature: float = Field(description="Sampling temperature.")

    @classmethod
    def of(cls, request: ModelRequest) -> RequestTemplate:
        """The fixed part of ``request`` (whose fields are already validated)."""
        return trusted(
            cls,
            {
                "model": request.model,
                "system": request.system,
                "tools": request.tools,
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
            },
        )


class Turn(Frozen):
    """One model call: the messages the harness added since the last response, and the reply."""

    index: int = Field(description="0-based turn number.")
    request_key: str = Field(description="sha256 of the canonical request sent in this turn.")
    appended: tuple[Message, ...] = Field(
        description="Messages the harness appended since the previous response (task, results)."
    )
    response: ModelResponse = Field(description="What the model answered.")
    response_key: str = Field(description="sha256 of the canonical response (integrity check).")


def says_stop(text: str) -> bool:
    """Whether a user reply ends the conversation."""
    return USER_STOP in text


class UserTurn(Frozen):
    """One reply of the simulated user: the request its backend was sent (as a key) and what it
    answered. The request is rebuilt from the dialogue, so only its key is kept."""

    index: int = Field(description="0-based user turn number (0: the opening message).")
    after: int = Field(
        description="The agent turn whose text it answers (-1: the opening, before any)."
    )
    request_key: str = Field(description="sha256 of the canonical request the user was sent.")
    response: ModelResponse = Field(description="What the user answered.")
    response_key: str = Field(description="sha256 of the canonical response (integrity check).")


class Verdict(Frozen):
    """How the case was judged."""

    outcome: Outcome = Field(description="The case's outcome.")
    checks: tuple[CheckResult, ...] = Field(description="Every check's result, in order.")


class Transcript(Frozen):
    """Everything one case run did, in recordable form."""

    schema_version: Literal[2] = Field(
        default=TRANSCRIPT_SCHEMA_VERSION, description="Format version."
    )
    domain: str = Field(description="Suite (domain) name.")
    case_id: str = Field(description="Case id.")
    sample: int = Field(default=0, ge=0, description="Sample index (epoch) of the case.")
    attempt: int = Field(
        default=1,
        ge=1,
        description="Attempt: the rejection round of a workflow step, from 1 (a domain case's "
        "samples have one). Absent from the file at 1, so a transcript of a first attempt has "
        "the bytes it had before attempts were recorded.",
    )
    provenance: Provenance = Field(description="What produced it.")
    request: RequestTemplate | None = Field(description="Fixed request parts (None if no call).")
    turns: tuple[Turn, ...] = Field(description="Model calls, in order.")
    tool_calls: tuple[ToolCallRecord, ...] = Field(description="Tool calls and results, in order.")
    policy_events: tuple[PolicyEvent, ...] = Field(description="Approval checkpoint events.")
    output: dict[str, Any] | None = Field(description="Schema-validated final output, if any.")
    verdict: Verdict = Field(description="Outcome and check results.")
    user_turns: tuple[UserTurn, ...] = Field(
        default=(),
        description="The simulated user's replies, in order (a conversation with a user; "
        "absent from the file when there is no user, so other transcripts keep their bytes).",
    )
    user_tool_calls: tuple[ToolCallRecord, ...] = Field(
        default=(),
        description="Calls of the user's own tools, in order (turn: the user turn that made "
        "them); absent when there are none.",
    )

    @model_serializer(mode="wrap")
    def _drop_first_attempt(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("attempt") == 1:
            del data["attempt"]
        for absent_when_empty in ("user_turns", "user_tool_calls"):
            if not data.get(absent_when_empty, True):
                del data[absent_when_empty]
        return data

    def request_at(self, index: int) -> ModelRequest:
        """Rebuild the request recorded at turn ``index`` from the template and the turns.

        Raises:
            ValueError: When the transcript has no request template or no such turn.
        """
        if self.request is None or index >= len(self.turns):
            raise ValueError(f"no recorded request for turn {index}")
        messages: list[Message] = []
        for turn in self.turns[: index + 1]:
            messages.extend(turn.appended)
            if turn.index < index:
                messages.append(turn.response.message())
        t = self.request
        return ModelRequest(
            model=t.model,
            system=t.system,
            messages=tuple(messages),
            tools=t.tools,
            max_tokens=t.max_tokens,
            temperature=t.temperature,
        )


def encode_turn(
    index: int, request_key: str, appended: Iterable[bytes], response: bytes, response_key: str
) -> bytes:
    """Canonical JSON of a :class:`Turn` from its parts, already serialised.

    Equals ``canonical_bytes(Turn(...))`` for the same values (a test holds the two together).

    Args:
        index: The turn number.
        request_key: The request's key: a sha256 in hex, as the loop computes it (hex digits
            need no escaping in JSON).
        appended: Canonical JSON of each appended message.
        response: Canonical JSON of the response.
        response_key: The response's key: a sha256 in hex.
    """
    return b"".join(
        (
            b'{"appended":[',
            b",".join(appended),
            b'],"index":',
            str(index).encode(),
            b',"request_key":"',
            request_key.encode(),
            b'","response":',
            response,
            b',"response_key":"',
            response_key.encode(),
            b'"}',
        )
    )


class TranscriptParts(NamedTuple):
    """A transcript's canonical JSON in three parts: ``head + request + tail`` is the whole.

    The request template (the tool list: most of a scripted transcript's bytes) is the same
    for every sample of a suite, so the store keeps it once and each row without it
    (:func:`agentic_eval.store.db.Store.add_samples`)."""

    head: bytes
    """Everything before the request template's value: ``{...,"request":``."""
    request: bytes
    """Canonical JSON of the request template (``null`` when no call was made)."""
    tail: bytes
    """Everything after it: ``,"sample":...}``."""

    def whole(self) -> bytes:
        """The transcript's canonical JSON."""
        return self.head + self.request + self.tail


def encode_transcript(
    transcript: Transcript,
    *,
    provenance: bytes,
    request: bytes | None,
    turns: Iterable[bytes],
    user_turns: Iterable[bytes] = (),
) -> bytes:
    """Canonical JSON of a transcript whose largest parts are already serialised.

    Equals ``canonical_bytes(transcript)`` (a test holds the two together over every committed
    recording). The small remaining parts (trace entries, outcome, check results) are flat
    models whose fields are all JSON data: their instance dicts are their JSON form, which
    orjson writes at a fraction of pydantic's cost. A value orjson cannot write (not JSON
    data) sends the whole transcript through :func:`canonical_bytes`, which says so.

    Args:
        transcript: The transcript.
        provenance: Canonical JSON of ``transcript.provenance``.
        request: Canonical JSON of ``transcript.request`` (None when it is None).
        turns: Canonical JSON of each turn (see :func:`encode_turn`).
        user_turns: Canonical JSON of each of ``transcript.user_turns``.
    """
    parts = encode_transcript_parts(
        transcript, provenance=provenance, request=request, turns=turns, user_turns=user_turns
    )
    return canonical_bytes(transcript) if parts is None else parts.whole()


def encode_transcript_parts(
    transcript: Transcript,
    *,
    provenance: bytes,
    request: bytes | None,
    turns: Iterable[bytes],
    user_turns: Iterable[bytes] = (),
) -> TranscriptParts | None:
    """:func:`encode_transcript` in its three parts (None when orjson cannot write a value:
    then only :func:`canonical_bytes` of the whole transcript can).

    Canonical JSON sorts an object's keys, and ``request`` is a key of the transcript's top
    level: the keys before it are written as one object, those after it as another, and the
    two are joined around the request's value, which makes the very bytes of the whole.
    """
    t, verdict = transcript, transcript.verdict
    before = {
        "case_id": t.case_id,
        "domain": t.domain,
        "output": t.output,
        "policy_events": [e.__dict__ for e in t.policy_events],
        "provenance": Fragment(provenance),
        **({} if t.attempt == 1 else {"attempt": t.attempt}),
    }
    after = {
        "sample": t.sample,
        "schema_version": t.schema_version,
        "tool_calls": [c.__dict__ for c in t.tool_calls],
        "turns": [Fragment(turn) for turn in turns],
        **({"user_turns": [Fragment(u) for u in user_turns]} if t.user_turns else {}),
        **(
            {"user_tool_calls": [c.__dict__ for c in t.user_tool_calls]}
            if t.user_tool_calls
            else {}
        ),
        "verdict": {
            "checks": [c.__dict__ for c in verdict.checks],
            "outcome": verdict.outcome.__dict__,
        },
    }
    head, tail = spliced_bytes(before), spliced_bytes(after)
    if head is None or tail is None:
        return None
    # {"case_id":...,"provenance":{...}} and {"sample":...}: never empty objects
    return TranscriptParts(
        head[:-1] + b',"request":', b"null" if request is None else request, b"," + tail[1:]
    )
