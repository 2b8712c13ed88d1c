"""Recordings: transcript folders, record and replay backends, scorecard comparison."""

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
