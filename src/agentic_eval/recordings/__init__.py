"""Recordings: transcript folders, record and replay backends, scorecard comparison.

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.recordings.compare import compare_scorecard, rewrite_scorecard
    from agentic_eval.recordings.files import (
        RecordingError,
        list_agents,
        list_transcript_files,
        list_transcripts,
        read_scorecard,
        read_transcript,
        write_atomic,
        write_transcript,
    )
    from agentic_eval.recordings.layout import (
        DEFAULT_RECORDINGS,
        SCORECARD_FILE,
        LabelError,
        TranscriptKey,
        agent_dir,
        check_label,
        folder_label,
        label_folder,
        parse_transcript_name,
        sample_name,
        transcript_name,
        transcript_path,
    )
    from agentic_eval.recordings.record import RecordingBackend
    from agentic_eval.recordings.replay import ReplayBackend

_WHERE: dict[str, tuple[str, str]] = {
    "compare_scorecard": ("agentic_eval.recordings.compare", "compare_scorecard"),
    "rewrite_scorecard": ("agentic_eval.recordings.compare", "rewrite_scorecard"),
    "RecordingError": ("agentic_eval.recordings.files", "RecordingError"),
    "list_agents": ("agentic_eval.recordings.files", "list_agents"),
    "list_transcript_files": ("agentic_eval.recordings.files", "list_transcript_files"),
    "list_transcripts": ("agentic_eval.recordings.files", "list_transcripts"),
    "read_scorecard": ("agentic_eval.recordings.files", "read_scorecard"),
    "read_transcript": ("agentic_eval.recordings.files", "read_transcript"),
    "write_atomic": ("agentic_eval.recordings.files", "write_atomic"),
    "write_transcript": ("agentic_eval.recordings.files", "write_transcript"),
    "DEFAULT_RECORDINGS": ("agentic_eval.recordings.layout", "DEFAULT_RECORDINGS"),
    "SCORECARD_FILE": ("agentic_eval.recordings.layout", "SCORECARD_FILE"),
    "LabelError": ("agentic_eval.recordings.layout", "LabelError"),
    "TranscriptKey": ("agentic_eval.recordings.layout", "TranscriptKey"),
    "agent_dir": ("agentic_eval.recordings.layout", "agent_dir"),
    "check_label": ("agentic_eval.recordings.layout", "check_label"),
    "folder_label": ("agentic_eval.recordings.layout", "folder_label"),
    "label_folder": ("agentic_eval.recordings.layout", "label_folder"),
    "parse_transcript_name": ("agentic_eval.recordings.layout", "parse_transcript_name"),
    "sample_name": ("agentic_eval.recordings.layout", "sample_name"),
    "transcript_name": ("agentic_eval.recordings.layout", "transcript_name"),
    "transcript_path": ("agentic_eval.recordings.layout", "transcript_path"),
    "RecordingBackend": ("agentic_eval.recordings.record", "RecordingBackend"),
    "ReplayBackend": ("agentic_eval.recordings.replay", "ReplayBackend"),
}

__all__ = [
    "DEFAULT_RECORDINGS",
    "SCORECARD_FILE",
    "LabelError",
    "RecordingBackend",
    "RecordingError",
    "ReplayBackend",
    "TranscriptKey",
    "agent_dir",
    "check_label",
    "compare_scorecard",
    "folder_label",
    "label_folder",
    "list_agents",
    "list_transcript_files",
    "list_transcripts",
    "parse_transcript_name",
    "read_scorecard",
    "read_transcript",
    "rewrite_scorecard",
    "sample_name",
    "transcript_name",
    "transcript_path",
    "write_atomic",
    "write_transcript",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
