"""Where recordings live: ``<root>/<suite>/<agent folder>/<case id>[@<epoch>][#<attempt>].json``
plus ``scorecard.json`` beside them.

A sample is keyed (case, epoch, attempt): the epoch is the N of a batch (``@1`` is the second
sample), the attempt the rejection round of a workflow step (``#2`` is the retry after the first
rejection). Both are left out at their first value, so ``<case id>.json`` is epoch 0, attempt 1,
and every name written before attempts existed keeps its meaning (``@N`` was always the epoch of
a domain case). Case ids hold only letters, digits, ``.``, ``_`` and ``-`` (never ``@`` or ``#``),
so the two markers cannot be confused with a case id; only the canonical spelling of a key is a
transcript name (no ``@0``, ``#1`` or leading zeros), so two files never hold the same key.

An agent label is any printable text (a model name may hold ``/``); its folder name is the label
percent-encoded to letters, digits, ``.``, ``_`` and ``-`` (a leading ``.`` encoded too), so a
label can never name a path outside the suite's folder, and the encoding is reversible.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple
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


class TranscriptKey(NamedTuple):
    """The key of one sample's transcript: case id, epoch (``sample``) and attempt."""

    case_id: str
    sample: int = 0
    """The epoch: the sample index of a batch, from 0."""
    attempt: int = 1
    """The attempt: the rejection round of a workflow step, from 1."""


_NAME = re.compile(r"([^@#]+)(?:@([1-9][0-9]*))?(?:#([2-9]|[1-9][0-9]+))?")


def sample_name(case_id: str, sample: int = 0, attempt: int = 1) -> str:
    """``<case id>[@<epoch>][#<attempt>]``: the epoch past 0 and the attempt past 1 (how a file
    is named and how a sample is shown)."""
    name = case_id if sample == 0 else f"{case_id}@{sample}"
    return name if attempt == 1 else f"{name}#{attempt}"


def transcript_name(case_id: str, sample: int = 0, attempt: int = 1) -> str:
    """``<case id>.json`` for epoch 0, attempt 1; ``<case id>@<epoch>.json`` for later epochs;
    ``#<attempt>`` before ``.json`` for later attempts (``<case id>@1#2.json``)."""
    return f"{sample_name(case_id, sample, attempt)}.json"


def parse_transcript_name(name: str) -> TranscriptKey | None:
    """The key of a transcript file name, or None for other files (the scorecard, hidden files,
    and any name :func:`transcript_name` would not write)."""
    if not name.endswith(".json") or name == SCORECARD_FILE or name.startswith("."):
        return None
    found = _NAME.fullmatch(name.removesuffix(".json"))
    if found is None:
        return None
    case_id, sample, attempt = found.groups()
    return TranscriptKey(case_id, int(sample or 0), int(attempt or 1))


def transcript_path(
    root: Path, suite: str, agent: str, case_id: str, sample: int = 0, attempt: int = 1
) -> Path:
    """The transcript file of one sample."""
    return agent_dir(root, suite, agent) / transcript_name(case_id, sample, attempt)
