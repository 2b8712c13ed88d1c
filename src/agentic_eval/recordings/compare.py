"""The committed scorecard of an agent folder: compare a replay with it, or rewrite it after a
recording."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from agentic_eval.core.canonical import (
    canonical_bytes,
    canonical_file_text,
    first_difference,
    indented_bytes,
)
from agentic_eval.core.results import CheckResult, Outcome
from agentic_eval.core.scorecard import CaseResult, Scorecard
from agentic_eval.core.transcript import Transcript
from agentic_eval.recordings.files import (
    RecordingError,
    list_transcript_files,
    parse_json,
    read_bounded,
    read_scorecard,
    read_transcript,
    scorecard_path,
    write_atomic,
)
from agentic_eval.recordings.layout import TranscriptKey, transcript_name

_GROUP = 64
"""Cases serialised per call: one call per case costs more than the serialisation."""


def _case_plain(
    case: CaseResult, seen: dict[int, tuple[tuple[Any, ...], list[Any]]] | None = None
) -> Any:
    """A case result's JSON form: its fields, its outcome's and its checks' (flat models whose
    fields are all JSON data), without pydantic's serialiser; anything else (a subclass, a
    value that is not JSON data) is serialised by pydantic, or refused by orjson. ``seen``:
    the checks' form by the identity of their tuple, which the rows of a run share."""
    if type(case) is CaseResult and type(case.outcome) is Outcome:
        checks = case.checks
        known = seen.get(id(checks)) if seen is not None else None
        if known is not None and known[0] is checks:
            plain = known[1]
        elif all(type(c) is CheckResult for c in checks):
            plain = [c.__dict__ for c in checks]
            if seen is not None:  # the entry holds the tuple: its id is not reused meanwhile
                seen[id(checks)] = (checks, plain)
        else:
            return case.model_dump(mode="json")
        return {**case.__dict__, "outcome": case.outcome.__dict__, "checks": plain}
    return case.model_dump(mode="json")


def scorecard_chunks(scorecard: Scorecard) -> Iterator[bytes]:
    """The scorecard's canonical file text (``canonical_file_text``), in pieces of a few cases.

    Serialising a few cases at a time keeps a large batch from building the whole scorecard as
    Python objects at once; the pieces concatenate to exactly ``canonical_file_text(scorecard)``.
    """
    head = canonical_bytes(scorecard.model_copy(update={"cases": ()}), indent=True)
    before, marker, after = head.partition(b'"cases": []')
    if not marker:  # pragma: no cover - the field is always there
        raise ValueError("scorecard without cases field")
    if not scorecard.cases:
        yield head + b"\n"
        return
    yield before + b'"cases": [\n'
    cases = scorecard.cases
    seen: dict[int, tuple[tuple[Any, ...], list[Any]]] = {}
    for start in range(0, len(cases), _GROUP):
        group = cases[start : start + _GROUP]
        end = b",\n" if start + _GROUP < len(cases) else b"\n"
        listed = indented_bytes([_case_plain(case, seen) for case in group])
        if listed is not None:  # "[\n  {...},\n  {...}\n]": the items, two spaces deeper
            yield b"  " + listed[2:-2].replace(b"\n", b"\n  ") + end
            continue
        for i, case in enumerate(group):  # a value only the fallback encoder writes
            text = b"    " + canonical_bytes(case, indent=True).replace(b"\n", b"\n    ")
            yield text + (b",\n" if i < len(group) - 1 else end)
    yield b"  ]" + after + b"\n"


def scorecard_sha256(scorecard: Scorecard) -> str:
    """sha256 of the scorecard's canonical file text, computed piece by piece."""
    digest = hashlib.sha256()
    for chunk in scorecard_chunks(scorecard):
        digest.update(chunk)
    return digest.hexdigest()


def compare_scorecard(directory: Path, scorecard: Scorecard, full: bool) -> tuple[bool, str]:
    """Whether ``scorecard`` reproduces the committed one (all of it, or only its own samples).

    The committed file is streamed against the scorecard's canonical text, piece by piece; only
    when the bytes differ is it parsed, to accept a reformatted but equal file or to name the
    first differing field.

    Returns:
        (reproduced, the first differing field or why it could not be compared).
    """
    same, problem, _ = compare_scorecard_hashed(directory, scorecard, full)
    return same, problem


def compare_scorecard_hashed(
    directory: Path, scorecard: Scorecard, full: bool
) -> tuple[bool, str, str]:
    """:func:`compare_scorecard`, plus :func:`scorecard_sha256` of the scorecard, from one
    serialisation of it.

    Returns:
        (reproduced, the first differing field or why not, sha256 of the canonical file text).
    """
    digest = hashlib.sha256()

    def hashed() -> Iterator[bytes]:
        for chunk in scorecard_chunks(scorecard):
            digest.update(chunk)
            yield chunk

    chunks = hashed()
    same = full and _same_bytes(scorecard_path(directory), chunks)
    for _ in chunks:  # the rest of the text, when the file differed early (or was not read)
        pass
    if same:
        return True, "", digest.hexdigest()
    same, problem = _compare_parsed(directory, scorecard, full)
    return same, problem, digest.hexdigest()


def _compare_parsed(directory: Path, scorecard: Scorecard, full: bool) -> tuple[bool, str]:
    """The comparison on parsed JSON, for a committed file that is not byte for byte the
    scorecard's canonical text."""
    path = scorecard_path(directory)
    try:
        data = parse_json(path, read_bounded(path))
    except RecordingError as exc:
        text = str(exc)
        return False, (f"no committed scorecard at {path}" if "no recording at" in text else text)
    if full:
        if canonical_bytes(data) == canonical_bytes(scorecard):
            return True, ""
        where = first_difference(data, scorecard.model_dump(mode="json"))
        return False, f"scorecard differs from {path} at {where}"
    try:
        committed = read_scorecard(path)
    except RecordingError as exc:
        return False, str(exc)
    by_key = {(c.case_id, c.sample): c for c in committed.cases}
    for case in scorecard.cases:
        where = first_difference(by_key.get((case.case_id, case.sample)), case)
        if where is not None:
            return False, f"case {case.case_id} differs from the committed scorecard at {where}"
    return True, ""


def _same_bytes(path: Path, chunks: Iterable[bytes]) -> bool:
    """Whether the file holds exactly the concatenated chunks (read as it goes)."""
    try:
        with path.open("rb") as fh:
            if not path.is_file():
                return False
            for chunk in chunks:
                if fh.read(len(chunk)) != chunk:
                    return False
            return fh.read(1) == b""
    except OSError:
        return False


def _planned(key: TranscriptKey, keep: Collection[tuple[str, int] | tuple[str, int, int]]) -> bool:
    """Whether a run's keys hold ``key`` (a (case, epoch) pair stands for the first attempt)."""
    return key in keep or (key.attempt == 1 and (key.case_id, key.sample) in keep)


def rewrite_scorecard(
    directory: Path,
    suite: str,
    agent: str,
    keep: Collection[tuple[str, int] | tuple[str, int, int]] | None,
    build: Callable[[Iterable[CaseResult]], Scorecard],
    result_of: Callable[[Transcript], CaseResult],
) -> tuple[Path, list[Path]]:
    """Rewrite the folder's scorecard from every transcript in it.

    Args:
        directory: The agent folder.
        suite: The suite the folder belongs to.
        agent: The agent label.
        keep: For a full recording, the keys of the run, (case, epoch) or (case, epoch,
            attempt) (a pair stands for the first attempt): transcripts of this suite and agent
            for other keys are stale and removed. Nothing else is ever deleted.
        build: Builds the scorecard from case results.
        result_of: A transcript's case result.

    Returns:
        The scorecard's path, and the files left alone that are not this agent's transcripts.

    Raises:
        RecordingError: When a transcript of the folder cannot be read.
    """
    results: list[CaseResult] = []
    foreign: list[Path] = []
    for key, path in list_transcript_files(directory).items():
        try:
            t = read_transcript(path)
        except RecordingError:
            foreign.append(path)
            continue
        ours = t.domain == suite and t.provenance.agent == agent
        if not ours:
            foreign.append(path)
            continue
        if keep is not None and not _planned(key, keep):
            if path.name == transcript_name(t.case_id, t.sample, t.attempt):
                path.unlink()  # a stale transcript this agent's recording wrote
            else:
                foreign.append(path)  # a copy under another name: not ours to delete
            continue
        results.append(result_of(t))
    path = scorecard_path(directory)
    write_atomic(path, canonical_file_text(build(results)))
    return path, foreign
