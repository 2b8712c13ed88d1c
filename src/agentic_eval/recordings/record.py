"""The record backend: wraps any backend and writes one transcript per sample.

The transcript holds only allow-listed content (requests as keys plus harness-appended messages,
responses, tool calls, policy events, output, verdict, provenance). Headers, API keys and tokens
never reach it: the wrapped backend's client is never serialised.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentic_eval.backends.base import (
    BackendInfo,
    CallContext,
    ModelBackend,
    Review,
    start_sample,
)
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.transcript import Transcript
from agentic_eval.recordings.files import (
    RecordingError,
    list_transcripts,
    read_transcript,
    remove_orphaned_temp_files,
    write_transcript,
)
from agentic_eval.recordings.layout import agent_dir, transcript_path


class ProducerMismatch(RecordingError):
    """The folder holds another producer's recordings (choose another label)."""


class RecordingBackend(ModelBackend):
    """Delegates to ``inner`` and writes each finished sample's transcript under ``root``."""

    def __init__(self, inner: ModelBackend, root: Path) -> None:
        self.inner = inner
        self.root = root
        self.written: set[Path] = set()
        """Transcript files this backend wrote (recording never deletes anything else)."""
        self.skipped: list[tuple[str, str, int]] = []
        """(suite, case, epoch) of transient samples, not written (see :meth:`finish_case`); a
        domain run's samples have one attempt each."""
        self._checked: set[str] = set()

    def check_folder(self, suite: str) -> None:
        """Refuse to record into a folder whose transcripts another producer made (a model's
        run filed under a scripted agent's name, or another model's): replay holds every file
        of a folder to one provenance, so the mix could never replay.

        Raises:
            ProducerMismatch: Naming the folder and who recorded it.
            RecordingError: When the folder cannot be listed.
        """
        if suite in self._checked:
            return
        info = self.info()
        folder = agent_dir(self.root, suite, info.agent)
        if folder.is_dir():  # a run killed mid-write (then resumed) left its temporary files
            remove_orphaned_temp_files(folder)
        existing = list_transcripts(folder) if folder.is_dir() else {}
        for path in existing.values():
            if path in self.written:
                continue
            try:
                p = read_transcript(path).provenance
            except RecordingError:
                continue  # not a transcript (a user's file): recording leaves it alone
            if (p.agent_kind, p.backend, p.model) != (info.agent_kind, info.backend, info.model):
                raise ProducerMismatch(
                    f"{folder} holds recordings by {p.model} ({p.agent_kind}, {p.backend}), not "
                    f"{info.model} ({info.agent_kind}, {info.backend}); record under another "
                    "--agent or --label"
                )
            break
        self._checked.add(suite)

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """Ask the wrapped backend."""
        return await self.inner.complete(request, call)

    def info(self) -> BackendInfo:
        """The wrapped backend's identity (recording does not change what produced the run)."""
        return self.inner.info()

    async def start_case(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> None:
        """Check the folder (once per suite) and forward to the wrapped backend."""
        self.check_folder(domain)
        await start_sample(self.inner, domain, case_id, sample, attempt)

    def user_backend(self, user: ModelBackend) -> ModelBackend:
        """Forward to the wrapped backend."""
        return self.inner.user_backend(user)

    def review(self, transcript: Transcript) -> Review:
        """Forward to the wrapped backend."""
        return self.inner.review(transcript)

    def review_encoded(self, transcript: Transcript, encoded: Callable[[], bytes]) -> Review:
        """Forward to the wrapped backend."""
        return self.inner.review_encoded(transcript, encoded)

    def transcript_ref(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> str | None:
        """The transcript file this backend writes for the sample."""
        agent = self.info().agent
        return str(transcript_path(self.root, domain, agent, case_id, sample, attempt))

    async def finish_case(self, transcript: Transcript) -> None:
        """Write the transcript (atomically); a transient sample's is not written.

        Raises:
            RecordingError: When it cannot be written (one line naming the file).
        """
        await self.inner.finish_case(transcript)
        if transcript.verdict.outcome.kind == "transient":
            # The provider failed: the file could never replay, and must not replace a good one.
            self.skipped.append((transcript.domain, transcript.case_id, transcript.sample))
            return
        try:
            self.written.add(write_transcript(self.root, transcript))
        except OSError as exc:
            t = transcript
            where = self.transcript_ref(t.domain, t.case_id, t.sample, t.attempt)
            raise RecordingError(f"cannot write {where}: {exc.strerror or exc}") from None

    async def aclose(self) -> None:
        """Close the wrapped backend."""
        await self.inner.aclose()
