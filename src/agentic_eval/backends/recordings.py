"""Where recordings live and how they are read and written.

Layout: ``<root>/<domain>/<agent>/<case id>.json`` (one transcript per case) and
``<root>/<domain>/<agent>/scorecard.json`` (the committed scorecard). Files are written
atomically; a file that cannot be parsed or validated is an error, never "empty".
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.core.scorecard import Scorecard
from agentic_eval.core.transcript import Transcript

SCORECARD_FILE = "scorecard.json"
DEFAULT_RECORDINGS = Path("evals") / "recordings"


class RecordingError(Exception):
    """A recording is missing, unreadable or invalid."""


def agent_dir(root: Path, domain: str, agent: str) -> Path:
    """The folder holding one agent's recordings for one domain."""
    return root / domain / agent


def transcript_path(root: Path, domain: str, agent: str, case_id: str) -> Path:
    """The transcript file of one case."""
    return agent_dir(root, domain, agent) / f"{case_id}.json"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves either the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        Path(tmp).chmod(0o644)  # mkstemp makes it private; recordings are shared files
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_transcript(root: Path, transcript: Transcript) -> Path:
    """Write one case's transcript; returns its path."""
    agent = transcript.provenance.agent
    path = transcript_path(root, transcript.domain, agent, transcript.case_id)
    write_atomic(path, canonical_file_text(transcript))
    return path


def read_transcript(path: Path) -> Transcript:
    """Read and validate a transcript (recordings are untrusted input).

    Raises:
        RecordingError: When it is missing, not JSON, or does not fit the schema.
    """
    try:
        return Transcript.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise RecordingError(f"no recording at {path}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise RecordingError(f"{path}: invalid transcript at {loc}: {err['msg']}") from None


def list_transcripts(directory: Path) -> list[Path]:
    """Transcript files in an agent folder, sorted by case id."""
    return sorted(p for p in directory.glob("*.json") if p.name != SCORECARD_FILE)


def list_agents(root: Path, domain: str) -> list[str]:
    """Agents with recordings for ``domain``, sorted."""
    base = root / domain
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))


def read_scorecard(path: Path) -> Scorecard:
    """Read and validate a committed scorecard.

    Raises:
        RecordingError: When it is missing or invalid.
    """
    try:
        return Scorecard.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise RecordingError(f"no committed scorecard at {path}") from None
    except ValidationError as exc:
        raise RecordingError(f"{path}: invalid scorecard: {exc.errors()[0]['msg']}") from None
