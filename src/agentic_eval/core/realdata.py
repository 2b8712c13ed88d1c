"""Real customer data never enters the repository.

Fixtures under ``$EVAL_FIXTURE_DIR`` are real data. Whatever is derived from them (a transcript,
a scorecard, a case file, a history entry) carries the mark ``external_fixtures`` (the fixtures'
sha256) as a key; a real fixture file may declare itself with the key ``real_data`` set to true.
Committed, anonymised data carries neither.

:func:`staged_marked_files` is the guard a test, CI and the pre-commit hook run. It reads what a
commit takes, the staged blob of every path in the git index (not the work-tree copy, which a
``git add`` followed by an edit leaves behind), and judges each blob by its content, whatever its
name:

- a blob that parses as JSON, a stream of JSON values (JSON lines), YAML or, failing those, has
  lines that parse as JSON, is marked when any mapping anywhere in it has the key
  ``external_fixtures`` (any value) or the key ``real_data`` with the boolean true; keys are
  compared after decoding, so ``\\u0065xternal_fixtures`` counts and so does any spacing;
- every blob's bytes are also scanned for the mark as text, because YAML reads nearly any prose
  as one string and a marked object pasted into prose, a log or a truncated copy parses as
  nothing: ``external_fixtures`` (quoted, bare, JSON-escaped) followed by a colon and a 64-digit
  hex digest, or ``real_data`` followed by a colon and ``true`` (any case) either inside an object
  (after ``{`` or ``,``, before ``,`` or ``}``) or alone on a YAML line. The text scan needs that
  context so that code and prose naming the keys (this module, the README) are not flagged; keys
  are matched case-sensitively, as JSON and YAML compare them. Up to 32 whitespace characters are
  allowed around the colon (the structural check allows any).
- blobs over :data:`PARSE_LIMIT` bytes are not parsed but still scanned as text, in chunks; a blob
  with a NUL byte in its first 8000 bytes (git's test for binary) or that is not UTF-8 is not
  parsed either (a compressed or UTF-16 copy is not recognised).
- a path under ``$EVAL_FIXTURE_DIR`` is refused whatever it holds, and a blob git cannot produce
  is refused too (the guard cannot tell what it holds).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import yaml

MARK = "external_fixtures"
"""The key every file derived from real fixtures carries, with the fixtures' sha256."""
REAL_DATA_KEY = "real_data"
"""A real fixture file may declare itself with this key set to true; it must not be tracked."""
PARSE_LIMIT = 16 * 1024 * 1024
"""Blobs larger than this (bytes) are scanned as text only: parsing them costs too much."""

_BINARY_PROBE = 8000  # git's own test: a NUL byte in the first 8000 bytes means binary
_CHUNK = 1 << 20
_OVERLAP = 4096  # longer than any text-scan match plus its lookaround
_GIT_TIMEOUT = 300
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it


class GitIndexError(Exception):
    """The git index cannot be read: not inside a git work tree, or git missing or failing."""


@dataclass(frozen=True)
class IndexScan:
    """What :func:`staged_marked_files` found."""

    top: Path
    """The work tree's top folder."""
    files: int
    """How many paths the index holds (each checked)."""
    findings: tuple[str, ...]
    """One line per offending path, ``"<path>: <why>"``; empty when none holds real data."""


def inside_git_work_tree(path: Path) -> bool:
    """Whether ``path`` (existing or not) lies inside a git work tree."""
    current = path.absolute()
    while True:
        if (current / ".git").exists():
            return True
        if current.parent == current:
            return False
        current = current.parent


def fixture_dir_env() -> Path | None:
    """``$EVAL_FIXTURE_DIR`` when set."""
    value = os.environ.get("EVAL_FIXTURE_DIR", "").strip()
    return Path(value) if value else None


def staged_marked_files(repo: Path, fixture_dir: Path | None) -> IndexScan:
    """Paths in the git index whose staged copy holds real data: what a commit would take.

    Blobs are read with one ``git ls-files`` and one ``git cat-file --batch`` process; both
    inherit ``GIT_INDEX_FILE``, so inside a hook the index being committed is the one read (the
    temporary index of ``git commit PATH`` too).

    Args:
        repo: A folder inside the git work tree.
        fixture_dir: ``$EVAL_FIXTURE_DIR``, when set: every path under it is refused.

    Returns:
        The top folder, the number of paths checked and one line per offending path.

    Raises:
        GitIndexError: Not inside a git work tree, or git fails.
    """
    top = Path(
        _git(repo.absolute(), "rev-parse", "--show-toplevel")
        .decode("utf-8", "surrogateescape")
        .strip()
    )
    real_root = fixture_dir.resolve() if fixture_dir is not None else None
    outside: dict[str, str] = {}  # paths under EVAL_FIXTURE_DIR: refused whatever they hold
    reasons: dict[str, list[str]] = {}
    wanted: dict[bytes, list[str]] = {}  # one read per distinct blob
    for mode, oid, raw_path in _index_entries(top):
        rel = raw_path.decode("utf-8", "backslashreplace")
        reasons.setdefault(rel, [])
        if real_root is not None and _under(top / os.fsdecode(raw_path), real_root):
            outside[rel] = f"lies under EVAL_FIXTURE_DIR ({fixture_dir})"
        elif mode != b"160000":  # a submodule's commit: its files are another repository's
            wanted.setdefault(oid, []).append(rel)
    for oid, found in _blob_reasons(top, list(wanted)):
        for rel in wanted[oid]:
            reasons[rel].extend(why for why in found if why not in reasons[rel])
    findings: list[str] = []
    for rel, found in reasons.items():
        if rel in outside:
            findings.append(f"{rel}: {outside[rel]}")
        elif found:
            findings.append(f"{rel}: staged copy {'; '.join(found)}")
    return IndexScan(top=top, files=len(reasons), findings=tuple(findings))


def marked_files(root: Path, tracked: Iterable[str], fixture_dir: Path | None) -> list[str]:
    """Tracked files whose work-tree copy holds real data (the guard reads the index instead).

    Args:
        root: The repository's top folder.
        tracked: Paths git tracks, relative to ``root``.
        fixture_dir: ``$EVAL_FIXTURE_DIR``, when set.

    Returns:
        One line per offending file, saying why.
    """
    found: list[str] = []
    real_root = fixture_dir.resolve() if fixture_dir is not None else None
    for rel in tracked:
        path = root / rel
        if real_root is not None and _under(path, real_root):
            found.append(f"{rel}: lies under EVAL_FIXTURE_DIR ({fixture_dir})")
            continue
        if not path.is_file():
            continue
        try:
            why = content_marks(path.read_bytes())
        except OSError as exc:
            why = [f"cannot be read ({exc.strerror or exc})"]
        if why:
            found.append(f"{rel}: work-tree copy {'; '.join(why)}")
    return found


def content_marks(data: bytes) -> list[str]:
    """Why the bytes of one file hold real data (see the module's rules); empty when they don't.

    Args:
        data: A file's whole content.

    Returns:
        Reasons such as ``"carries 'external_fixtures' (derived from external fixtures; read
        as JSON)"``, the mark first.
    """
    return _reasons(_structure_marks(data), _text_marks([data]), len(data) > PARSE_LIMIT)


def _reasons(
    structural: tuple[str | None, str | None], text: tuple[bool, bool], big: bool
) -> list[str]:
    mark_how, real_how = structural
    in_text = "found in its bytes, too large to parse" if big else "found in its text"
    out: list[str] = []
    if mark_how or text[0]:
        out.append(f"carries {MARK!r} (derived from external fixtures; {mark_how or in_text})")
    if real_how or text[1]:
        out.append(f'declares "{REAL_DATA_KEY}": true ({real_how or in_text})')
    return out


def _under(path: Path, real_root: Path) -> bool:
    resolved = path.resolve()
    return resolved == real_root or real_root in resolved.parents


# -- git ------------------------------------------------------------------------------------------


def _git(where: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, timeout=_GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitIndexError(f"cannot run git in {where}: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[0] if said else f"exit {done.returncode}"
        if "not a git repository" in detail or "must be run in a work tree" in detail:
            raise GitIndexError(f"{where} is not inside a git work tree ({detail})")
        raise GitIndexError(f"git {args[0]} failed in {where}: {detail}")
    return done.stdout


def _index_entries(top: Path) -> list[tuple[bytes, bytes, bytes]]:
    """``(mode, object id, path)`` of every index entry (every stage of a conflicted path)."""
    entries: list[tuple[bytes, bytes, bytes]] = []
    for record in _git(top, "ls-files", "--stage", "-z").split(b"\0"):
        if not record:
            continue
        meta, tab, path = record.partition(b"\t")
        fields = meta.split(b" ")
        if not tab or len(fields) != 3:
            raise GitIndexError(
                f"git ls-files --stage printed an unexpected line: {record[:200]!r}"
            )
        entries.append((fields[0], fields[1], path))
    return entries


def _blob_reasons(top: Path, oids: list[bytes]) -> Iterator[tuple[bytes, list[str]]]:
    """Each blob's reasons, every blob read by one ``git cat-file --batch`` process."""
    if not oids:
        return
    with tempfile.TemporaryFile() as request, tempfile.TemporaryFile() as errors:
        request.write(b"".join(oid + b"\n" for oid in oids))
        request.seek(0)  # a file, not a pipe: no deadlock between our writes and git's
        try:
            proc = subprocess.Popen(
                ["git", "-C", str(top), "cat-file", "--batch", "--buffer"],
                stdin=request,
                stdout=subprocess.PIPE,
                stderr=errors,
            )
        except OSError as exc:
            raise GitIndexError(f"cannot run git in {top}: {exc}") from None
        assert proc.stdout is not None
        try:
            for oid in oids:
                yield oid, _next_blob(proc.stdout, oid)
            proc.stdout.read()
            code = proc.wait(timeout=_GIT_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if code != 0:
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise GitIndexError(f"git cat-file failed in {top}: {said[0] if said else code}")


def _next_blob(out: IO[bytes], oid: bytes) -> list[str]:
    header = out.readline()
    fields = header.split()
    if not fields or fields[0] != oid:
        raise GitIndexError(f"git cat-file answered {header[:200]!r} for {oid.decode()}")
    if len(fields) != 3:  # "<oid> missing": the index names an object git cannot produce
        return ["cannot be read from git (missing object), so cannot be checked"]
    size = int(fields[2])
    if size <= PARSE_LIMIT:
        data = _read_exactly(out, size)
        found = content_marks(data)
    else:
        chunks = _stream(out, size)
        found = _reasons((None, None), _text_marks(chunks), True)
        for _ in chunks:  # drain whatever the scan left
            pass
    _read_exactly(out, 1)  # the newline after every object
    return found


def _read_exactly(out: IO[bytes], size: int) -> bytes:
    data = out.read(size)
    if len(data) != size:
        raise GitIndexError("git cat-file ended in the middle of an object")
    return data


def _stream(out: IO[bytes], size: int) -> Iterator[bytes]:
    left = size
    while left:
        chunk = _read_exactly(out, min(left, _CHUNK))
        left -= len(chunk)
        yield chunk


# -- content --------------------------------------------------------------------------------------


def _structure_marks(data: bytes) -> tuple[str | None, str | None]:
    """How the mark and the real-data declaration were found by parsing (None: not found)."""
    if len(data) > PARSE_LIMIT or b"\0" in data[:_BINARY_PROBE]:
        return None, None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, None
    parsed = _parse(text)
    if parsed is None:
        return None, None
    how, values = parsed
    mark, real = _walk(values)
    return (how if mark else None), (how if real else None)


def _parse(text: str) -> tuple[str, list[Any]] | None:
    values = _json_stream(text)
    if values is not None:
        return ("read as JSON" if len(values) <= 1 else "read as JSON lines"), values
    try:  # any exception: the parser could not read it, which is no reason to pass or crash
        return "read as YAML", list(yaml.load_all(text, Loader=_YAML_LOADER))
    except Exception:
        pass
    lines: list[Any] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped[:1] in ("{", "["):
            try:
                lines.append(json.loads(stripped))
            except (ValueError, RecursionError):
                continue
    return ("read from its JSON lines", lines) if lines else None


_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_space(text: str, at: int) -> int:
    space = _JSON_SPACE.match(text, at)
    return space.end() if space else at


def _json_stream(text: str) -> list[Any] | None:
    """The JSON values ``text`` holds one after another (one, or JSON lines), None if not JSON."""
    values: list[Any] = []
    at = _skip_space(text, 0)
    while at < len(text):
        try:
            value, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None
        values.append(value)
        at = _skip_space(text, at)
    return values


def _walk(values: list[Any]) -> tuple[bool, bool]:
    """Whether any mapping in ``values`` has the mark; whether one declares real data."""
    mark = real = False
    stack: list[Any] = list(values)
    seen: set[int] = set()  # YAML anchors share (and may nest) containers: visit each once
    while stack and not (mark and real):
        value: object = stack.pop()
        if isinstance(value, list):
            items = cast("list[Any]", value)
            if id(items) not in seen:
                seen.add(id(items))
                stack.extend(items)
        elif isinstance(value, dict):
            mapping = cast("dict[Any, Any]", value)
            if id(mapping) not in seen:
                seen.add(id(mapping))
                for key, item in mapping.items():
                    if isinstance(key, str):
                        mark = mark or key == MARK
                        real = real or (key == REAL_DATA_KEY and item is True)
                    if isinstance(item, dict | list):
                        stack.append(item)
    return mark, real


def _key(name: str) -> str:
    """A pattern for ``name`` where any character may be a JSON ``\\uXXXX`` escape."""
    parts: list[str] = []
    for char in name:
        code = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in f"{ord(char):04x}")
        parts.append(f"(?:{re.escape(char)}|\\\\u{code})")
    key = "".join(parts)
    return f"(?:\"{key}\"|'{key}'|(?<![\\w\"'\\\\]){key}(?![\\w\"']))"


_WS = "[ \\t\\r\\n]{0,32}"
_TRUE = "(?i:true)"
_MARK_TEXT = re.compile(f"{_key(MARK)}{_WS}:{_WS}[\"']?[0-9a-fA-F]{{64}}(?![0-9a-fA-F])".encode())
_REAL_IN_OBJECT = re.compile(
    f"[{{,]{_WS}{_key(REAL_DATA_KEY)}{_WS}:{_WS}{_TRUE}{_WS}[,}}]".encode()
)
_REAL_YAML_LINE = re.compile(
    f"^[ \\t]{{0,256}}(?:-[ \\t]+)?{_key(REAL_DATA_KEY)}[ \\t]*:[ \\t]*{_TRUE}"
    "[ \\t]*(?:#[^\\r\\n]{0,256})?\\r?$".encode(),
    re.MULTILINE,
)


def _text_marks(chunks: Iterable[bytes]) -> tuple[bool, bool]:
    """Whether the bytes hold the mark as text; whether they declare real data as text.

    The bytes come in chunks; each window is scanned for matches that start in its first part,
    and the last ``_OVERLAP`` bytes (plus one byte of context) carry over to the next.
    """
    found = [False, False, False]
    mark, real = MARK.encode(), REAL_DATA_KEY.encode()
    rules = ((_MARK_TEXT, mark), (_REAL_IN_OBJECT, real), (_REAL_YAML_LINE, real))
    buf = b""
    pos = 0

    def scan(cut: int) -> None:
        escaped = b"\\u" in buf  # else a key can only match literally: a cheap find first
        for i, (rule, literal) in enumerate(rules):
            if not found[i] and (escaped or literal in buf):
                match = rule.search(buf, pos)
                found[i] = match is not None and match.start() < cut

    for chunk in chunks:
        keep = max(pos - 1, 0)
        buf = buf[keep:] + chunk
        pos -= keep
        cut = len(buf) - _OVERLAP
        if cut > pos:
            scan(cut)
            pos = cut
    scan(len(buf) + 1)
    return found[0], found[1] or found[2]
