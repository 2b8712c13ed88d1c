"""Find the transcript of a run's sample: in its recording (only while the recording is still the
one the run used) or in the store's sample row; and turn it into a view.

A replay's or recorded run's transcripts live in the recording folder; the history entry holds
the folder's content hash, so a recording changed since the run is never shown as that run's.
Unrecorded runs keep their transcripts in the store (``eval_sample.transcript``).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.messages import ContentBlock, TextBlock, ToolResultBlock
from agentic_eval.core.transcript import Transcript, says_stop
from agentic_eval.history.entry import HistoryEntry
from agentic_eval.history.fingerprints import recording_ref
from agentic_eval.recordings.files import RecordingError, read_transcript
from agentic_eval.recordings.layout import transcript_name
from agentic_eval.report.views import BlockView, TranscriptView, TurnView
from agentic_eval.store.db import Store, StoreError, database_url

MAX_BLOCK_CHARS = 4000
"""Longer texts are cut in the report (the transcript file holds them whole)."""


def _cut(text: str) -> str:
    if len(text) <= MAX_BLOCK_CHARS:
        return text
    return f"{text[:MAX_BLOCK_CHARS]}... ({len(text) - MAX_BLOCK_CHARS} more characters)"


def _block(b: ContentBlock, speaker: str, names: dict[str, str]) -> BlockView:
    if isinstance(b, TextBlock):
        return BlockView(role=speaker, text=_cut(b.text))
    if isinstance(b, ToolResultBlock):
        role = "tool error" if b.is_error else "tool result"
        name = names.get(b.tool_use_id)
        return BlockView(role=f"{role} ({name})" if name else role, text=_cut(b.content))
    names[b.id] = b.name
    return BlockView(role="tool call", text=_cut(f"{b.name} {canonical_json(b.input)}"))


def transcript_view(t: Transcript, source: str) -> TranscriptView:
    """A transcript's turns as the report shows them (tool results name their tool)."""
    names: dict[str, str] = {}
    turns: list[TurnView] = []
    for turn in t.turns:
        sent = tuple(_block(b, "user", names) for m in turn.appended for b in m.content)
        reply = tuple(_block(b, "assistant", names) for b in turn.response.content)
        turns.append(TurnView(index=turn.index, sent=sent, reply=reply))
    last = closing_line(t)
    if last is not None:  # the user's last word ended the conversation: no turn carries it
        said = (BlockView(role="user", text=_cut(last)),)
        turns.append(TurnView(index=len(t.turns), sent=said, reply=()))
    output = "" if t.output is None else json.dumps(t.output, indent=2, ensure_ascii=False)
    return TranscriptView(
        case_id=t.case_id,
        sample=t.sample,
        available=True,
        source=source,
        turns=tuple(turns),
        output=_cut(output),
    )


def closing_line(t: Transcript) -> str | None:
    """The simulated user's last reply when it ended the conversation (it was never sent to the
    agent, so no turn's messages hold it); None otherwise."""
    if not t.user_turns:
        return None
    text = t.user_turns[-1].response.text()
    return text if says_stop(text) else None


def _missing(case_id: str, sample: int, why: str) -> TranscriptView:
    return TranscriptView(
        case_id=case_id, sample=sample, available=False, source=why, turns=(), output=""
    )


def open_store() -> Store | None:
    """The configured store, or None when it does not exist yet (an SQLite file is never
    created just to look for transcripts) or cannot be opened."""
    url = database_url()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return None
    try:
        return Store(url)
    except StoreError:
        return None


class TranscriptFinder:
    """Looks up transcripts of history runs (call it with an entry, a case id, an epoch and,
    past the first, an attempt)."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self._digests: dict[str, str | None] = {}
        self._rows: dict[str, dict[tuple[str, int, int], str | None]] = {}

    def _recorded(
        self, entry: HistoryEntry, case_id: str, sample: int, attempt: int
    ) -> TranscriptView:
        rec = entry.producer.recording
        assert rec is not None
        if rec.folder not in self._digests:
            self._digests[rec.folder] = recording_ref(Path(rec.folder)).transcripts_sha256
        if rec.transcripts_sha256 is None or self._digests[rec.folder] != rec.transcripts_sha256:
            return _missing(
                case_id, sample, f"the recording {rec.folder} has changed since this run"
            )
        path = Path(rec.folder) / transcript_name(case_id, sample, attempt)
        try:
            return transcript_view(read_transcript(path), path.as_posix())
        except RecordingError as exc:
            return _missing(case_id, sample, str(exc))

    def _stored(
        self, entry: HistoryEntry, case_id: str, sample: int, attempt: int
    ) -> TranscriptView:
        why = f"run {entry.run_id} was not recorded and the store holds no transcript of it"
        if self.store is None:
            return _missing(case_id, sample, why)
        if entry.run_id not in self._rows:
            try:
                rows = self.store.samples(entry.run_id)
            except (StoreError, SQLAlchemyError):  # e.g. a store without the tables yet
                rows = []
            self._rows[entry.run_id] = {
                (r.case_id, r.sample, r.attempt): r.transcript for r in rows
            }
        text = self._rows[entry.run_id].get((case_id, sample, attempt))
        if text is None:
            return _missing(case_id, sample, why)
        try:
            t = Transcript.model_validate_json(text)
        except ValidationError as exc:
            return _missing(
                case_id, sample, f"the stored transcript is invalid: {exc.errors()[0]['msg']}"
            )
        return transcript_view(t, f"store (run {entry.run_id})")

    def __call__(
        self, entry: HistoryEntry, case_id: str, sample: int, attempt: int = 1
    ) -> TranscriptView:
        """The sample's transcript, or a view saying why it is not available."""
        if entry.producer.recording is not None:
            return self._recorded(entry, case_id, sample, attempt)
        return self._stored(entry, case_id, sample, attempt)
