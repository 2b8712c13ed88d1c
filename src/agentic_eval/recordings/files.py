"""Reading and writing recording files: atomically, and treating what is read as untrusted.

A file that is missing, not a regular file, too large, not JSON, of an unknown format version or
not valid against its schema is a :class:`RecordingError` naming it, never "empty".
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson

from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.recordings.layout import (
    SCORECARD_FILE,
    TranscriptKey,
    folder_label,
    parse_transcript_name,
    transcript_path,
)

if TYPE_CHECKING:  # the models are imported where a file is validated: listing needs none
    from pydantic import BaseModel

    from agentic_eval.core.scorecard import Scorecard
    from agentic_eval.core.shapes import Obj
    from agentic_eval.core.transcript import Transcript

MAX_FILE_BYTES = 64 * 1024 * 1024
"""No recording file is larger; a bigger one (or a device such as /dev/zero) is refused."""

M = TypeVar("M", bound="BaseModel")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
"""orjson reads an integer of 19 or more digits as a float; files with such a digit run anywhere
(rare: a hash may have one) are read by the standard library instead, exactly."""


class RecordingError(Exception):
    """A recording is missing, unreadable or invalid."""


_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[A-Za-z0-9_]+\.tmp$")
"""A temporary file of :func:`write_atomic`: ``.<file name>.<writer's pid>.<random>.tmp``."""


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves either the old file or the new one
    (and, after a SIGKILL, a temporary file naming its writer, which
    :func:`remove_orphaned_temp_files` removes once that writer is gone)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        Path(tmp).chmod(0o644)  # mkstemp makes it private; recordings are shared files
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_orphaned_temp_files(directory: Path) -> list[Path]:
    """Remove the temporary files :func:`write_atomic` left in ``directory`` when its writer was
    killed mid-write (their writer process no longer exists); returns them. A temporary file
    whose writer is alive (another process recording beside this one) is left alone, and so is
    every file not of that exact shape."""
    removed: list[Path] = []
    try:
        with os.scandir(directory) as listing:
            names = [e.name for e in listing if e.name.endswith(".tmp") and e.is_file()]
    except OSError:
        return removed
    for name in names:
        m = _TEMP_NAME.match(name)
        if m is None or _alive(int(m.group("pid"))):
            continue
        try:
            (directory / name).unlink()
        except OSError:
            continue
        removed.append(directory / name)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    if pid <= 0:
        return True  # not a real writer id: leave the file alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Opened non-blocking (a FIFO must not hang the run) and checked to be a regular file before
    anything is read (a device such as /dev/zero is refused, not read without end).

    Raises:
        RecordingError: When it is missing, not a regular file, unreadable or too large.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise RecordingError(f"no recording at {path}") from None
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RecordingError(f"{path}: not a regular file")
        if info.st_size > limit:
            raise RecordingError(f"{path}: larger than {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:  # a regular file normally comes back in one read
            want = info.st_size + 1 - size if size <= info.st_size else 1
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > info.st_size:
                raise RecordingError(f"{path}: changed while it was read")
            if len(chunk) < want:  # a short read of a regular file ends at its end
                break
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def has_long_number(raw: bytes) -> bool:
    """Whether the text may hold a number token of 19 digits or more.

    A run of 19 digits inside a string (a sha256 hex digest has one in about one file in
    twenty) is no number: a number token starts a value, so only whitespace, and a minus sign,
    separate it from the ``:``, ``[`` or ``,`` before it (or from the start of the text). Any
    other run is inside a string, or the text is not JSON (orjson then says so).
    """
    digits = raw.translate(_DIGITS_AS_ZERO)
    at = digits.find(_LONG_RUN)
    while at >= 0:
        before = raw[:at].rstrip(b"-").rstrip(b" \t\r\n")
        if not before or before[-1:] in b":[,":
            return True
        at = digits.find(_LONG_RUN, at + len(_LONG_RUN))
    return False


def parse_json(path: Path, raw: bytes) -> Any:
    """JSON data of a file's bytes.

    orjson reads an integer beyond 64 bits as a float: a file that may hold one (a number of
    19 digits or more, :func:`has_long_number`) is read again by the standard library, which
    reads it exactly, once orjson has held it to strict JSON (the standard library alone would
    take a lone surrogate, or read ``1e999`` as infinity).

    Raises:
        RecordingError: When it is not UTF-8 JSON.
    """
    try:
        data = orjson.loads(raw)
        if has_long_number(raw):
            return json.loads(raw, parse_constant=_no_constant)
        return data
    except (ValueError, RecursionError) as exc:
        detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise RecordingError(f"{path}: not JSON ({detail})") from None


def validate(model: type[M], path: Path, data: Any, what: str) -> M:
    """Validate parsed data against a versioned model.

    Raises:
        RecordingError: Naming the file and the first invalid field (or the unknown version).
    """
    from pydantic import ValidationError

    mapping = cast(dict[str, Any], data) if isinstance(data, dict) else {}
    version = mapping.get("schema_version")
    expected = model.model_fields["schema_version"].default
    if version != expected:
        raise RecordingError(
            f"{path}: {what} format version {version!r} is not the supported {expected} "
            "(re-record it with this version of agentic-eval)"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise RecordingError(f"{path}: invalid {what} at {loc}: {err['msg']}") from None
    except RecursionError:
        raise RecordingError(f"{path}: invalid {what}: nested too deeply") from None


def write_transcript(root: Path, transcript: Transcript) -> Path:
    """Write one sample's transcript; returns its path."""
    t = transcript
    path = transcript_path(root, t.domain, t.provenance.agent, t.case_id, t.sample, t.attempt)
    write_atomic(path, canonical_file_text(transcript))
    return path


def read_transcript(path: Path) -> Transcript:
    """Read and validate a transcript (recordings are untrusted input).

    Raises:
        RecordingError: When it is missing, not JSON, or does not fit the schema.
    """
    from agentic_eval.core.transcript import Transcript

    return validate(Transcript, path, parse_json(path, read_bounded(path)), "transcript")


def read_transcript_data(path: Path) -> dict[str, Any]:
    """A transcript as JSON data, for a reader that only shows it: what :func:`read_transcript`
    reads, as ``model_dump(mode="json")`` has it, with every field (none left out at its
    default); read without building the models when the file is as our writer wrote it
    (:func:`read_data`).

    Raises:
        RecordingError: When it is missing, not JSON, or does not fit the schema.
    """
    from agentic_eval.core.file_shapes import TRANSCRIPT

    return read_data(path, read_bounded(path), TRANSCRIPT, "transcript")


def read_data(path: Path, raw: bytes, shape: Obj, what: str) -> dict[str, Any]:
    """A recording file's JSON data, as the model's ``model_dump(mode="json")`` has it, with
    every field (none left out at its default).

    Data of the supported version that fits ``shape`` exactly (what our own writer writes) is
    taken as it is, without building the models; anything else is validated by the model, so
    a file is refused, or coerced, exactly as :func:`validate` does.

    Args:
        path: The file (for messages).
        raw: Its bytes.
        shape: :data:`~agentic_eval.core.file_shapes.TRANSCRIPT` or
            :data:`~agentic_eval.core.file_shapes.SCORECARD`.
        what: ``transcript`` or ``scorecard``.

    Raises:
        RecordingError: When it is not JSON, or does not fit the schema.
    """
    data = parse_json(path, raw)
    version = shape.fields["schema_version"].default
    if isinstance(data, dict) and data.get("schema_version") == version:  # pyright: ignore[reportUnknownMemberType]
        plain = shape.fill(data)
        if plain is not None:
            return plain
    model: type[BaseModel]
    if what == "transcript":
        from agentic_eval.core.transcript import Transcript

        model = Transcript
    else:
        from agentic_eval.core.scorecard import Scorecard

        model = Scorecard
    dumped = validate(model, path, data, what).model_dump(mode="json")
    return shape.fill(dumped) or dumped  # the fields the dump leaves out at their default


def list_transcript_files(directory: Path) -> dict[TranscriptKey, Path]:
    """Every transcript file of an agent folder by its key (case id, epoch, attempt), sorted;
    other entries ignored.

    Raises:
        RecordingError: When a ``*.json`` entry is not a regular file.
    """
    found: dict[TranscriptKey, Path] = {}
    if not directory.is_dir():
        return found
    with os.scandir(directory) as listing:  # its entries know their type: no stat per file
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        key = parse_transcript_name(entry.name)
        if key is None:
            continue
        if not entry.is_file():
            raise RecordingError(f"{directory / entry.name}: not a regular file")
        found[key] = directory / entry.name
    return dict(sorted(found.items()))


def list_transcripts(directory: Path) -> dict[tuple[str, int], Path]:
    """The first attempt of every sample of an agent folder by (case id, epoch), sorted: what
    a domain run replays (its samples have one attempt). :func:`list_transcript_files` lists
    the later attempts (rejection rounds) too.

    Raises:
        RecordingError: When a ``*.json`` entry is not a regular file.
    """
    return {
        (key.case_id, key.sample): path
        for key, path in list_transcript_files(directory).items()
        if key.attempt == 1
    }


def list_agents(root: Path, suite: str) -> list[str]:
    """Agent labels with recordings for ``suite``, sorted (folders we did not name are skipped)."""
    base = root / suite
    if not base.is_dir():
        return []
    labels = [folder_label(p.name) for p in base.iterdir() if p.is_dir()]
    return sorted(label for label in labels if label is not None)


def unnamed_folders(root: Path, suite: str) -> list[tuple[str, int]]:
    """Folders under ``root/suite`` that hold transcript-like files (``*.json``) but are not
    named as agent labels are encoded (a copy, a hidden folder, a hand-made name), with how many
    such files each holds: nothing would replay them, so a replay says so."""
    base = root / suite
    if not base.is_dir():
        return []
    found: list[tuple[str, int]] = []
    for p in sorted(base.iterdir()):
        if p.is_dir() and folder_label(p.name) is None:
            files = sum(1 for f in p.glob("*.json") if f.is_file())
            if files:
                found.append((p.name, files))
    return found


def read_scorecard(path: Path) -> Scorecard:
    """Read and validate a committed scorecard.

    Raises:
        RecordingError: When it is missing or invalid.
    """
    from agentic_eval.core.scorecard import Scorecard

    return validate(Scorecard, path, parse_json(path, _scorecard_bytes(path)), "scorecard")


def _scorecard_bytes(path: Path) -> bytes:
    try:
        return read_bounded(path)
    except RecordingError as exc:
        if "no recording at" in str(exc):
            raise RecordingError(f"no committed scorecard at {path}") from None
        raise


def read_scorecard_data(path: Path) -> dict[str, Any]:
    """A committed scorecard as JSON data, for a reader that only shows it: what
    :func:`read_scorecard` reads, as :func:`read_data` gives it.

    Raises:
        RecordingError: When it is missing or invalid.
    """
    from agentic_eval.core.file_shapes import SCORECARD

    return read_data(path, _scorecard_bytes(path), SCORECARD, "scorecard")


def scorecard_path(directory: Path) -> Path:
    """The committed scorecard of an agent folder."""
    return directory / SCORECARD_FILE
