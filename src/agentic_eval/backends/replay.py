"""The replay backend: answers from recorded transcripts; needs no key and opens no socket.

Replay is exact or it is loud. Before serving turn N it checks that the recorded response still
matches its hash and that the request the loop sends now equals the recorded one; on any
difference the case ends as ``error`` with a message naming the case, the turn and the first
differing field. It never falls through to a live call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentic_eval.backends.base import BackendInfo, CallContext, ModelBackend, ReplayDivergence
from agentic_eval.backends.recordings import RecordingError, list_transcripts, read_transcript
from agentic_eval.core.canonical import describe_difference, first_difference, value_at
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.results import Outcome
from agentic_eval.core.transcript import Transcript, Verdict, response_key


class ReplayBackend(ModelBackend):
    """Serves the recordings in one agent folder (``<root>/<domain>/<agent>``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.paths = {p.stem: p for p in list_transcripts(directory)}
        if not self.paths:
            raise RecordingError(f"no recordings in {directory}")
        self.transcripts: dict[str, Transcript] = {}
        self.broken: dict[str, str] = {}
        self._first: Transcript | None = None
        for case_id in sorted(self.paths):  # provenance and parameters come from the first
            self._first = self._load(case_id)
            if self._first is not None:
                break
        self.transcripts.clear()

    def _load(self, case_id: str) -> Transcript | None:
        path = self.paths.get(case_id)
        if path is None:
            self.broken[case_id] = f"no recording in {self.directory}"
            return None
        try:
            t = read_transcript(path)
        except RecordingError as exc:
            self.broken[case_id] = str(exc)
            return None
        if t.case_id != case_id:
            self.broken[case_id] = f"{path}: holds case {t.case_id!r}, not {case_id!r}"
            return None
        self.transcripts[case_id] = t
        return t

    def first(self) -> Transcript | None:
        """The first valid transcript by case id (for provenance and run parameters)."""
        return self._first

    def info(self) -> BackendInfo:
        """What produced the recordings, as recorded."""
        t = self.first()
        if t is None:
            return BackendInfo(
                backend="replay", model="?", agent=self.directory.name, agent_kind="scripted"
            )
        p = t.provenance
        return BackendInfo(backend=p.backend, model=p.model, agent=p.agent, agent_kind=p.agent_kind)

    def parameters(self) -> dict[str, Any]:
        """The run parameters the recordings were made with (limits, approval mode...)."""
        t = self.first()
        return dict(t.provenance.parameters) if t else {}

    def recorded(self, case_id: str) -> Transcript | None:
        """The transcript of ``case_id`` while its case runs (None if missing or invalid)."""
        return self.transcripts.get(case_id)

    def transcript_ref(self, domain: str, case_id: str) -> str | None:
        """The recording replayed for the case."""
        del domain
        path = self.paths.get(case_id)
        return str(path) if path is not None else None

    def review(self, transcript: Transcript) -> tuple[Transcript, bool | None]:
        """Compare the live transcript with the recording.

        A trace that leaves the recording (turns, tool calls, policy events, output) turns the
        verdict into ``error`` naming the first differing field; the second value says whether
        the recorded verdict was reproduced exactly.
        """
        recorded = self.transcripts.get(transcript.case_id)
        if recorded is None:
            return transcript, False
        outcome = transcript.verdict.outcome
        if not (outcome.kind == "error" and outcome.reason.startswith("replay")):
            message = _trace_divergence(recorded, transcript)
            if message is not None:
                verdict = Verdict(
                    outcome=Outcome(kind="error", reason=message, where="trace"),
                    checks=transcript.verdict.checks,
                )
                transcript = transcript.model_copy(update={"verdict": verdict})
        return transcript, transcript.verdict == recorded.verdict

    async def start_case(self, domain: str, case_id: str) -> None:
        """Read and validate the case's transcript (one at a time keeps the heap small)."""
        del domain
        self.broken.pop(case_id, None)
        self._load(case_id)

    async def finish_case(self, transcript: Transcript) -> None:
        """Drop the case's transcript."""
        self.transcripts.pop(transcript.case_id, None)

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """The recorded response for this turn, after checking the request equals the recording.

        Raises:
            ReplayDivergence: Naming case, turn and first differing field.
        """
        case, turn = call.case_id, call.turn
        if case in self.broken:
            raise ReplayDivergence(f"replay of case {case}: {self.broken[case]}")
        t = self.transcripts.get(case)
        if t is None:
            raise ReplayDivergence(f"replay of case {case}: not started")
        if turn >= len(t.turns):
            raise ReplayDivergence(
                f"replay diverged: case {case}, turn {turn}: the loop sent a request the recording "
                f"does not have (it holds {len(t.turns)} turns)"
            )
        recorded_turn = t.turns[turn]
        if response_key(recorded_turn.response) != recorded_turn.response_key:
            raise ReplayDivergence(
                f"replay diverged: case {case}, turn {turn}, field turns[{turn}].response: the "
                "recorded response does not match its sha256 (the recording was edited)"
            )
        if (call.request_key or request.key()) != recorded_turn.request_key:
            raise ReplayDivergence(_request_difference(t, turn, request))
        return recorded_turn.response


def _request_difference(t: Transcript, turn: int, request: ModelRequest) -> str:
    recorded = t.request_at(turn)
    path = first_difference(recorded, request)
    head = f"replay diverged: case {t.case_id}, turn {turn}"
    if path is None:
        return (
            f"{head}: the request equals the recording's content but not its recorded key "
            "(the recording was edited)"
        )
    was, now = value_at(recorded, path), value_at(request, path)
    return f"{head}, field request.{path}: {describe_difference(was, now)}"


def _trace_divergence(recorded: Transcript, live: Transcript) -> str | None:
    """The first field where the live trace leaves the recorded one (not the verdict)."""
    for name in ("turns", "tool_calls", "policy_events", "output"):
        path = first_difference(getattr(recorded, name), getattr(live, name), name)
        if path is not None:
            was = value_at(recorded.model_dump(mode="json"), path)
            now = value_at(live.model_dump(mode="json"), path)
            return (
                f"replay diverged: case {live.case_id}, field {path}: "
                f"{describe_difference(was, now)}"
            )
    return None
