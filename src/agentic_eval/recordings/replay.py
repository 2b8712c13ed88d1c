"""The replay backend: answers from recorded transcripts; needs no key and opens no socket.

Replay is exact or it is loud. Before serving turn N it checks that the recorded response still
matches its hash and that the request the loop sends now equals the recorded one; once the
sample is judged, every field of the live transcript (request template, turns, tool calls,
policy events, output, provenance, verdict) is compared with the recording. A difference in the
trace ends the sample as ``error`` naming the case, the turn and the first differing field; a
difference in the verdict leaves the recomputed verdict and marks the sample not reproduced. It
never falls through to a live call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from pydantic import TypeAdapter, ValidationError

from agentic_eval.backends.base import (
    BackendInfo,
    CallContext,
    ModelBackend,
    ReplayDivergence,
    Review,
)
from agentic_eval.core.canonical import (
    ABSENT,
    canonical_bytes,
    describe_difference,
    first_difference,
    unsorted_bytes,
    value_at,
)
from agentic_eval.core.messages import Frozen, Message
from agentic_eval.core.model import ModelRequest, ModelResponse, encode_response
from agentic_eval.core.results import Outcome
from agentic_eval.core.settings import RunParameters
from agentic_eval.core.transcript import (
    TRANSCRIPT_SCHEMA_VERSION,
    Provenance,
    RequestTemplate,
    Transcript,
    UserTurn,
    Verdict,
)
from agentic_eval.recordings.files import (
    RecordingError,
    list_transcript_files,
    parse_json,
    read_bounded,
    read_transcript,
)
from agentic_eval.recordings.layout import TranscriptKey, folder_label


class _ServedTurn(Frozen):
    """A recorded :class:`Turn` as replay serves it: the response is validated, since the loop
    acts on it; the appended messages are kept as the file's JSON. The loop builds those
    itself, the request key proves them equal before each response is served, and the final
    comparison holds every byte of them to the recording (validating them again on every
    load cost more than a third of reading a recording)."""

    index: int
    request_key: str
    appended: tuple[Any, ...]
    response: ModelResponse
    response_key: str


_TURNS = TypeAdapter(tuple[_ServedTurn, ...])
_USER_TURNS = TypeAdapter(tuple[UserTurn, ...])
_MESSAGES = TypeAdapter(tuple[Message, ...])
Key = tuple[str, int, int]
"""(case id, epoch, attempt), a plain tuple on the hot path (equal to its TranscriptKey)."""


class _Loaded:
    """One sample's recording while it replays: the file's data and its turns."""

    __slots__ = ("data", "path", "turns", "user_turns")

    def __init__(
        self,
        path: Path,
        data: dict[str, Any],
        turns: tuple[_ServedTurn, ...],
        user_turns: tuple[UserTurn, ...] = (),
    ) -> None:
        self.path, self.data, self.turns, self.user_turns = path, data, turns, user_turns


def _read(path: Path, raw: bytes, key: TranscriptKey) -> _Loaded | str:
    """A recording's data and turns, or the problem that stops it from being replayed."""
    try:
        parsed = parse_json(path, raw)
        if not isinstance(parsed, dict):
            raise RecordingError(f"{path}: not a transcript object")
        data = cast(dict[str, Any], parsed)
        if data.get("schema_version") != TRANSCRIPT_SCHEMA_VERSION:
            raise RecordingError(
                f"{path}: transcript format version {data.get('schema_version')!r} is not "
                f"the supported {TRANSCRIPT_SCHEMA_VERSION}"
            )
        held = (data.get("case_id"), data.get("sample", 0), data.get("attempt", 1))
        if held != key:
            raise RecordingError(f"{path}: holds case {_describe(*held)}, not {_describe(*key)}")
        turns = _TURNS.validate_python(data.get("turns"))
        users = data.get("user_turns")
        user_turns = () if users is None else _user_turns(users, path)
    except RecordingError as exc:
        return str(exc)
    except ValidationError as exc:
        return f"{path}: invalid transcript at {_at('turns', exc)}"
    except RecursionError:
        return f"{path}: invalid transcript: nested too deeply"
    return _Loaded(path, data, turns, user_turns)


def _user_turns(users: Any, path: Path) -> tuple[UserTurn, ...]:
    """A recording's user turns (its errors located under ``user_turns``)."""
    try:
        return _USER_TURNS.validate_python(users)
    except ValidationError as exc:
        raise RecordingError(f"{path}: invalid transcript at {_at('user_turns', exc)}") from None


def _at(field: str, exc: ValidationError) -> str:
    """``field.loc: message`` of a validation error's first problem (``field: ...`` when it is
    the field itself)."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    return f"{field}{'.' + loc if loc else ''}: {err['msg']}"


def _describe(case_id: Any, sample: Any, attempt: Any) -> str:
    """``'x' sample 1`` (and ``attempt 2`` past the first): a key as the errors name it."""
    text = f"{case_id!r} sample {sample!r}"
    return text if attempt == 1 else f"{text} attempt {attempt!r}"


class ReplayBackend(ModelBackend):
    """Serves the recordings in one agent folder (``<root>/<suite>/<agent folder>``).

    Raises:
        RecordingError: When the folder holds no transcript, or the first one is unreadable
            (it names the agent and the run parameters every other one is held to).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files: dict[TranscriptKey, Path] = list_transcript_files(directory)
        """Every recording of the folder by (case id, epoch, attempt)."""
        self.paths: dict[tuple[str, int], Path] = {
            (k.case_id, k.sample): p for k, p in self.files.items() if k.attempt == 1
        }
        """The first attempt of every sample by (case id, epoch): what a domain run replays."""
        if not self.files:
            raise RecordingError(f"no recordings in {directory}")
        self.broken: dict[Key, str] = {}
        self._loaded: dict[Key, _Loaded] = {}
        paths = iter(self.files.values())
        first_path = next(paths)
        first = read_transcript(first_path)
        # The first transcript's provenance sets the replay's settings: hold it to the folder's
        # label and to a second transcript, so an edit of it alone cannot pass unnoticed.
        label = folder_label(directory.name)
        if label is not None and first.provenance.agent != label:
            raise RecordingError(
                f"{first_path}: provenance.agent {first.provenance.agent!r} is not the folder's "
                f"agent {label!r}"
            )
        second_path = next(paths, None)
        if second_path is not None:
            second = read_transcript(second_path)
            where = first_difference(first.provenance, second.provenance)
            if where is not None:
                raise RecordingError(
                    f"{first_path}: provenance.{where} differs from {second_path.name} "
                    "(the transcripts of one agent folder share their provenance)"
                )
        self._provenance: Provenance = first.provenance
        p = first.provenance
        self._info = BackendInfo(
            backend=p.backend, model=p.model, agent=p.agent, agent_kind=p.agent_kind
        )

    @property
    def provenance(self) -> Provenance:
        """What produced the recordings, as the first transcript records it."""
        return self._provenance

    def info(self) -> BackendInfo:
        """What produced the recordings, as recorded."""
        return self._info

    def parameters(self) -> RunParameters:
        """The run parameters the recordings were made with (limits, approval mode...)."""
        return self._provenance.parameters

    def transcript_ref(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> str | None:
        """The recording replayed for the sample."""
        del domain
        path = self.files.get(TranscriptKey(case_id, sample, attempt))
        return str(path) if path is not None else None

    def _load(self, key: TranscriptKey) -> None:
        path = self.files.get(key)
        if path is None:
            self.broken[key] = f"no recording in {self.directory}"
            return
        try:
            raw = read_bounded(path)
        except RecordingError as exc:
            self.broken[key] = str(exc)
            return
        found = _read(path, raw, key)
        if isinstance(found, str):
            self.broken[key] = found
        else:
            self._loaded[key] = found

    async def start_case(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> None:
        """Read the sample's recording (one at a time keeps the heap small)."""
        del domain
        key = TranscriptKey(case_id, sample, attempt)
        self.broken.pop(key, None)
        self._load(key)

    async def finish_case(self, transcript: Transcript) -> None:
        """Drop the sample's recording."""
        t = transcript
        self._loaded.pop((t.case_id, t.sample, t.attempt), None)

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """The recorded response for this turn, after checking the request equals the recording.

        Raises:
            ReplayDivergence: Naming case, turn and first differing field.
        """
        key = (call.case_id, call.sample, call.attempt)
        case, turn = call.case_id, call.turn
        if key in self.broken:
            raise ReplayDivergence(f"replay of case {case}: {self.broken[key]}")
        loaded = self._loaded.get(key)
        if loaded is None:
            raise ReplayDivergence(f"replay of case {case}: not started")
        if call.participant == "user":
            return _user_reply(loaded, case, turn, call.request_key or request.key())
        turns = loaded.turns
        if turn >= len(turns):
            raise ReplayDivergence(
                f"replay diverged: case {case}, turn {turn}: the loop sent a request the recording "
                f"does not have (it holds {len(turns)} turns)"
            )
        recorded_turn = turns[turn]
        if encode_response(recorded_turn.response).key != recorded_turn.response_key:
            raise ReplayDivergence(
                f"replay diverged: case {case}, turn {turn}, field turns[{turn}].response: the "
                "recorded response does not match its sha256 (the recording was edited)"
            )
        if (call.request_key or request.key()) != recorded_turn.request_key:
            raise ReplayDivergence(_request_difference(loaded, case, turn, request))
        return recorded_turn.response

    def user_backend(self, user: ModelBackend) -> ModelBackend:
        """Replay answers the simulated user's turns too, from the recording (keyless)."""
        del user
        return self

    def review(self, transcript: Transcript) -> Review:
        """Compare the judged live transcript with the recording, field by field."""
        return self.review_encoded(transcript, lambda: canonical_bytes(transcript))

    def review_encoded(self, transcript: Transcript, encoded: Callable[[], bytes]) -> Review:
        """:meth:`review`, with the live transcript's canonical JSON given by the runner."""
        key = (transcript.case_id, transcript.sample, transcript.attempt)
        outcome = transcript.verdict.outcome
        if outcome.kind == "error" and outcome.reason.startswith("replay"):
            return Review(transcript, False, outcome.reason)
        loaded = self._loaded.get(key)
        if loaded is None:
            return Review(transcript, False, self.broken.get(key, "no recording"))
        live = encoded()
        # A file we wrote has its keys sorted: its data written in file order is then already
        # canonical, and equal bytes prove it (sorting every object costs more).
        if live == unsorted_bytes(loaded.data) or live == canonical_bytes(loaded.data):
            return Review(transcript, True)
        now = json.loads(live)
        path = first_difference(loaded.data, now) or "<root>"
        was, is_ = value_at(loaded.data, path, ABSENT), value_at(now, path, ABSENT)
        change = describe_difference(was, is_)
        if path.startswith("verdict"):
            problem = f"case {transcript.case_id}: verdict not reproduced, field {path}: {change}"
            return Review(transcript, False, problem)
        message = f"replay diverged: case {transcript.case_id}, field {path}: {change}"
        verdict = Verdict(
            outcome=Outcome(kind="error", reason=message, where=path.split(".")[0].split("[")[0]),
            checks=transcript.verdict.checks,
        )
        return Review(transcript.model_copy(update={"verdict": verdict}), False, message)


def _user_reply(loaded: _Loaded, case: str, turn: int, request_key: str) -> ModelResponse:
    """The recorded reply of the user at user turn ``turn``, after the same checks as an agent
    turn's (its hash, then the request).

    Raises:
        ReplayDivergence: Naming the case, the user turn and the field.
    """
    head = f"replay diverged: case {case}, user turn {turn}"
    users = loaded.user_turns
    if turn >= len(users):
        raise ReplayDivergence(
            f"{head}: the loop asked the user for a reply the recording does not have (it "
            f"holds {len(users)} user turns)"
        )
    recorded = users[turn]
    if encode_response(recorded.response).key != recorded.response_key:
        raise ReplayDivergence(
            f"{head}, field user_turns[{turn}].response: the recorded reply does not match its "
            "sha256 (the recording was edited)"
        )
    if request_key != recorded.request_key:
        raise ReplayDivergence(
            f"{head}, field user_turns[{turn}].request_key (the user's request differs from "
            "the recording: the dialogue so far, the user's instructions or prompt changed)"
        )
    return recorded.response


def _request_difference(loaded: _Loaded, case: str, turn: int, request: ModelRequest) -> str:
    head = f"replay diverged: case {case}, turn {turn}"
    try:
        template = RequestTemplate.model_validate(loaded.data.get("request"))
    except ValidationError:
        return f"{head}: the request differs from the recording (its request template is invalid)"
    messages: list[Any] = []
    for t in loaded.turns[: turn + 1]:
        try:
            messages.extend(_MESSAGES.validate_python(t.appended))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            return (
                f"{head}, field request.messages: the recording's turns[{t.index}].appended.{loc} "
                f"is invalid: {err['msg']}"
            )
        if t.index < turn:
            messages.append(t.response.message())
    recorded = ModelRequest(
        model=template.model,
        system=template.system,
        messages=tuple(messages),
        tools=template.tools,
        max_tokens=template.max_tokens,
        temperature=template.temperature,
    )
    path = first_difference(recorded, request)
    if path is None:
        return (
            f"{head}, field turns[{turn}].request_key (the request equals the recording's "
            "content but not its recorded key, so the recording was edited)"
        )
    was, now = value_at(recorded, path, ABSENT), value_at(request, path, ABSENT)
    return f"{head}, field request.{path}: {describe_difference(was, now)}"
