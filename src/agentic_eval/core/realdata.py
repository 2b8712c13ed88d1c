"""Real customer data never enters the repository.

Fixtures under ``$EVAL_FIXTURE_DIR`` are real data. Whatever is derived from them (a transcript,
a scorecard, a case file, a history entry) carries the mark ``external_fixtures`` (the fixtures'
sha256) as a key; a real fixture file may declare itself with the key ``real_data`` set to true.
Committed, anonymised data carries neither.

:func:`staged_marked_files` is the guard a test, CI and the pre-commit hook run. It reads what a
commit takes, the staged blob of every path in the git index (not the work-tree copy, which a
``git add`` followed by an edit leaves behind), and judges each blob by its content, whatever its
name. A blob is marked when any of these finds the mark or the declaration:

- Parsed (:mod:`~agentic_eval.core.realdata_formats`), for a blob up to :data:`PARSE_LIMIT`: read
  as JSON or a stream of JSON values, or else by each of YAML, TOML, JSON5 (comments, bare keys,
  single quotes, trailing commas) and the JSON objects on its lines that accepts it, the blob is
  marked when any mapping anywhere has the key ``external_fixtures`` with any value (spelt in
  another case or with ``-`` or no separator, with a digest value), or the key ``real_data`` with
  a true value: the boolean, 1, or the string true, yes, on or 1 in any case (false, 0 and other
  strings are not a declaration). Keys are compared after decoding, with any spacing. A string in
  the parsed data that names a key is judged again as a blob of its own: JSON written into a JSON
  string or a JSON-lines log line, a notebook cell (a list of strings is read as one text).
- Scanned as text (:mod:`~agentic_eval.core.realdata_text`), every blob, in windows: HTML entities,
  ``%XX`` escapes and backslash escapes (any number of backslashes) are undone first and each run of
  whitespace counts as one, so spacing is unbounded (a key's own letters are looked for escaped only
  as ``\\u00XX`` or ``\\xXX``, as JSON and YAML write them). Then the mark is the key (in any case,
  with ``_``, ``-`` or no separator) followed only by separators (spaces, quotes, colon, equals
  sign, bar, comma, semicolon, ``>``, brackets, HTML tags such as table cells) and a 64-digit hex
  digest, ``sha256:`` before it allowed: this covers JSON, YAML, TOML, INI, .env, XML attributes and
  elements and key-value table rows; or the exact key, quoted, in an object (after a brace or comma)
  with a value that starts a JSON value (a non-empty quoted string that does not start with ``<`` or
  ``.``, a number, null, a boolean, a list or an object); or an XML element of that name with
  content. The declaration is the key with a true word: in an object (after a brace or comma; before
  a comma, a brace, a comment or a line end), on a line of its own (YAML, TOML, INI, .env, JSON5: a
  colon or an equals sign, the word quoted or not, a trailing comma or comment), as an XML element
  or attribute, or in an HTML table row. In a table (CSV, TSV, semicolon-separated, Markdown) a
  header cell named like a key makes the cells under it values (a digest; a true word) until a blank
  line, and a row whose cells read key then true counts.
- The text scan needs that context so that code and prose naming the keys (this module, the
  README) are not flagged: the key as a value (``MARK = "..."``), in a sentence, or followed by a
  placeholder or a variable does not count. ``real_data`` is matched in lower case only, as JSON,
  YAML and TOML compare keys: an env-style upper-case ``REAL_DATA`` is a program's switch, not a
  fixture declaring itself (the mark's key counts in upper case, as a .env file writes it, but
  only with a digest). Its assignment to a bare ``True`` on a line is Python's keyword argument,
  not a declaration (quoted, or in another case, it is one).
- Layers: a gzip, bzip2 or xz blob (by its magic bytes) is decompressed and its content judged
  like a blob, up to :data:`INFLATE_LIMIT` bytes per blob (past that it cannot be checked, and
  fails); UTF-16 and UTF-32 are decoded (by the byte-order mark; UTF-16 also by its zero bytes);
  a blob that is not UTF-8 is parsed as Latin-1; a run of base64 (24 characters or more, standard
  or URL-safe, wrapped or not) that decodes to text or compressed bytes is judged like a blob.
  Layers nest up to :data:`MAX_DEPTH` deep and up to twice :data:`PARSE_LIMIT` nested bytes per
  blob; what lies beyond is not decoded.
- A blob over :data:`PARSE_LIMIT` bytes is not parsed, only scanned as text as it streams from git
  (a run of base64 longer than a window, 1 MiB, is decoded only in part).
- Not recognised: other compressions and archives (zip, so .xlsx or .docx), encryption, other
  byte encodings (hex, quoted-printable), a key split by concatenation or across values, a key and
  its value in separate fields of a record, INI sections, XML beyond the forms above.
- A path under ``$EVAL_FIXTURE_DIR`` is refused whatever it holds, and a blob git cannot produce
  is refused too (the guard cannot tell what it holds).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentic_eval.core.realdata_formats import MARK, REAL_DATA_KEY
from agentic_eval.core.realdata_judge import (
    INFLATE_LIMIT,
    MAX_DEPTH,
    PARSE_LIMIT,
    BlobJudge,
    content_marks,
)

__all__ = [
    "INFLATE_LIMIT",
    "MARK",
    "MAX_DEPTH",
    "PARSE_LIMIT",
    "REAL_DATA_KEY",
    "GitIndexError",
    "IndexScan",
    "content_marks",
    "fixture_dir_env",
    "inside_git_work_tree",
    "marked_files",
    "staged_marked_files",
]

_CHUNK = 1 << 20
_GIT_TIMEOUT = 300


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
    blob = BlobJudge()
    for chunk in _stream(out, int(fields[2])):
        blob.feed(chunk)
    _read_exactly(out, 1)  # the newline after every object
    return blob.finish()


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
