"""Where recordings live: ``<root>/<suite>/<agent folder>/<case id>[@<sample>].json`` plus
``scorecard.json`` beside them.

An agent label is any printable text (a model name may hold ``/``); its folder name is the label
percent-encoded to letters, digits, ``.``, ``_`` and ``-`` (a leading ``.`` encoded too), so a
label can never name a path outside the suite's folder, and the encoding is reversible.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, unquote

SCORECARD_FILE = "scorecard.json"
DEFAULT_RECORDINGS = Path("evals") / "recordings"
MAX_LABEL_CHARS = 200
_SAFE = re.compile(r"^[A-Za-z0-9._%~-]+$")
MAX_FOLDER_BYTES = 240
"""File systems allow 255 bytes a name; a label's encoded folder name stays under that."""


class LabelError(ValueError):
    """A label that cannot name a recording."""


def check_label(label: str) -> str:
    """Validate an agent label (printable, 1-200 characters, not blank).

    Raises:
        LabelError: Saying what is wrong.
    """
    if not label.strip():
        raise LabelError("a label must not be empty")
    if len(label) > MAX_LABEL_CHARS:
        raise LabelError(f"a label must be at most {MAX_LABEL_CHARS} characters")
    if any(not ch.isprintable() for ch in label):
        raise LabelError(f"a label must be printable text, got {label!r}")
    if len(quote(label, safe="-_.")) > MAX_FOLDER_BYTES:
        raise LabelError(
            f"a label must encode to at most {MAX_FOLDER_BYTES} bytes as a folder name"
        )
    return label


def label_folder(label: str) -> str:
    """The folder name of a label (reversible with :func:`folder_label`)."""
    check_label(label)
    encoded = quote(label, safe="-_.")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    return encoded


def folder_label(folder: str) -> str | None:
    """The label a folder name encodes, or None when it is not one of ours."""
    if not _SAFE.match(folder) or folder.startswith("."):
        return None
    label = unquote(folder)
    try:
        return label if label_folder(label) == folder else None
    except LabelError:
        return None


def agent_dir(root: Path, suite: str, agent: str) -> Path:
    """The folder holding one agent's recordings for one suite."""
    return root / suite / label_folder(agent)


def transcript_name(case_id: str, sample: int = 0) -> str:
    """``<case id>.json`` for sample 0, ``<case id>@<n>.json`` for later samples."""
    return f"{case_id}.json" if sample == 0 else f"{case_id}@{sample}.json"


def parse_transcript_name(name: str) -> tuple[str, int] | None:
    """(case id, sample) of a transcript file name, or None for other files."""
    if not name.endswith(".json") or name == SCORECARD_FILE or name.startswith("."):
        return None
    stem = name.removesuffix(".json")
    case_id, _, sample = stem.partition("@")
    if not case_id:
        return None
    if not sample:
        return case_id, 0
    return (case_id, int(sample)) if sample.isdigit() and sample[0] != "0" else None


def transcript_path(root: Path, suite: str, agent: str, case_id: str, sample: int = 0) -> Path:
    """The transcript file of one sample."""
    return agent_dir(root, suite, agent) / transcript_name(case_id, sample)
