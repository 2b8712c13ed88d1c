"""Judging one blob for the real-data guard: its layers, its structure, its text.

:class:`BlobJudge` takes a blob in pieces, as it streams from git: a blob that fits
:data:`PARSE_LIMIT` is gathered and judged whole (decompressed, decoded, parsed by
:mod:`~agentic_eval.core.realdata_formats`, scanned by :mod:`~agentic_eval.core.realdata_text`),
a larger one is scanned as text as it comes. Strings inside parsed data, decompressed content and
decoded base64 are judged again like blobs, within a :class:`_Budget` and :data:`MAX_DEPTH`.
:mod:`agentic_eval.core.realdata` states the rules.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import lzma
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentic_eval.core.realdata_formats import (
    MARK,
    REAL_DATA_KEY,
    decode_text,
    parse,
    text_encoding,
    walk,
)
from agentic_eval.core.realdata_text import TextScan

PARSE_LIMIT = 16 * 1024 * 1024
"""Blobs larger than this (bytes) are scanned as text only: parsing them costs too much."""
INFLATE_LIMIT = 256 * 1024 * 1024
"""A compressed blob whose content is larger than this (bytes) cannot be checked: it fails."""
MAX_DEPTH = 4
"""How deep layers nest (a string in a string, base64 in gzip...) before they are not decoded."""

_PROBE = 8000  # git's own test for binary: a NUL byte in the first 8000 bytes
_CHUNK = 1 << 20
_WORTH_DECODING = re.compile(rb"(?i:fixtures)|real_data|[\\&%]|[A-Za-z0-9+/_-]{24}")


class BlobJudge:
    """Judges one blob fed in pieces; :meth:`finish` says why it holds real data."""

    def __init__(self) -> None:
        self._found = _Found()
        self._stream = _Stream(self._found, _Budget(), depth=0, via="")

    def feed(self, piece: bytes) -> None:
        """The next piece of the blob."""
        self._stream.feed(piece)

    def finish(self) -> list[str]:
        """Reasons such as ``"carries 'external_fixtures' (derived from external fixtures; read
        as JSON)"``, the mark first; empty when the blob holds no real data."""
        self._stream.finish()
        return self._found.reasons()


def content_marks(data: bytes) -> list[str]:
    """Why the bytes of one file hold real data (see :mod:`agentic_eval.core.realdata`); empty
    when they don't.

    Args:
        data: A file's whole content.

    Returns:
        The reasons of :meth:`BlobJudge.finish`.
    """
    blob = BlobJudge()
    for at in range(0, len(data), _CHUNK):
        blob.feed(data[at : at + _CHUNK])
    return blob.finish()


@dataclass
class _Found:
    """How the mark and the declaration were first found in one blob (None: not found)."""

    mark: str | None = None
    real: str | None = None
    failures: list[str] = field(default_factory=lambda: [])

    def note(self, mark: bool, real: bool, how: str) -> None:
        if mark and self.mark is None:
            self.mark = how
        if real and self.real is None:
            self.real = how

    @property
    def settled(self) -> bool:
        return self.mark is not None and self.real is not None

    def reasons(self) -> list[str]:
        out: list[str] = []
        if self.mark:
            out.append(f"carries {MARK!r} (derived from external fixtures; {self.mark})")
        if self.real:
            out.append(f'declares "{REAL_DATA_KEY}": true ({self.real})')
        return out + self.failures


@dataclass
class _Budget:
    """What one blob may still cost: nested bytes judged again, bytes decompressed."""

    nested: int = field(default_factory=lambda: 2 * PARSE_LIMIT)
    inflated: int = field(default_factory=lambda: INFLATE_LIMIT)

    def take(self, size: int) -> bool:
        if size > self.nested:
            return False
        self.nested -= size
        return True


def _packing(head: bytes) -> str | None:
    """The compression a blob's magic bytes name: gzip, bzip2, xz, or None."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    return None


class _Stream:
    """A blob (or the content of a compressed one) fed in pieces: judged whole, parsed and
    scanned, while it fits :data:`PARSE_LIMIT`; else scanned as text as it comes."""

    def __init__(self, found: _Found, budget: _Budget, depth: int, via: str) -> None:
        self._found, self._budget, self._depth, self._via = found, budget, depth, via
        self._parts: list[bytes] = []
        self._size = 0
        self._sinks: list[_TextSink | _Inflate] | None = None

    def feed(self, piece: bytes) -> None:
        if self._sinks is None:
            self._parts.append(piece)
            self._size += len(piece)
            if self._size <= PARSE_LIMIT:
                return
            piece, self._parts = b"".join(self._parts), []
            self._sinks = [_TextSink(self._found, self._budget, self._depth, self._via, None)]
            encoding = text_encoding(piece[:_PROBE])
            if encoding is not None:  # scanned as it is too: a binary blob may look like UTF-16
                sink = _TextSink(self._found, self._budget, self._depth, self._via, encoding)
                self._sinks.append(sink)
            kind = _packing(piece)
            if kind is not None and self._depth < MAX_DEPTH:
                inner = _Stream(self._found, self._budget, self._depth + 1, _layer(self._via, kind))
                self._sinks.append(_Inflate(kind, inner, self._found, self._budget))
        for sink in self._sinks:
            sink.feed(piece)

    def finish(self) -> None:
        if self._sinks is None:
            _judge(b"".join(self._parts), self._found, self._budget, self._depth, self._via)
            return
        for sink in self._sinks:
            sink.finish()


def _layer(via: str, kind: str) -> str:
    return f"{via}, {kind}-decompressed"


class _TextSink:
    """The text scan of a blob too large to parse (decoded on the way from UTF-16 or UTF-32)."""

    def __init__(
        self, found: _Found, budget: _Budget, depth: int, via: str, encoding: str | None
    ) -> None:
        self._found = found
        self._decoder = codecs.getincrementaldecoder(encoding)("replace") if encoding else None
        self._via = f"{via}, decoded as {encoding.upper()}" if encoding else via
        self._scan = TextScan(on_base64=_base64_judge(found, budget, depth, self._via))

    def feed(self, piece: bytes) -> None:
        if self._decoder is not None:
            piece = self._decoder.decode(piece).encode("utf-8", "surrogatepass")
        self._scan.feed(piece)

    def finish(self) -> None:
        if self._decoder is not None:
            self._scan.feed(self._decoder.decode(b"", True).encode("utf-8", "surrogatepass"))
        mark, real = self._scan.finish()
        self._found.note(mark, real, f"found in its bytes, too large to parse{self._via}")


class _Inflate:
    """A compressed stream inflated piece by piece into a :class:`_Stream`, within the budget;
    a corrupt or truncated one ends where it breaks (what came out is judged)."""

    def __init__(self, kind: str, inner: _Stream, found: _Found, budget: _Budget) -> None:
        self._kind, self._inner, self._found, self._budget = kind, inner, found, budget
        self._engine: Any = self._new()

    def _new(self) -> Any:
        if self._kind == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return bz2.BZ2Decompressor() if self._kind == "bzip2" else lzma.LZMADecompressor()

    def feed(self, data: bytes) -> None:
        while self._engine is not None:
            engine = self._engine
            try:
                out: bytes = engine.decompress(data, _CHUNK)
            except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError):
                self._engine = None
                return
            if self._kind == "gzip":
                data = engine.unconsumed_tail
                more = bool(data)
            else:
                data, more = b"", not engine.needs_input
            if out and not self._emit(out):
                return
            if engine.eof:  # a next member (gzip and bzip2 files may hold several)
                data = engine.unused_data
                self._engine = self._new() if _packing(data) == self._kind else None
                more = self._engine is not None
            if not more:
                return

    def _emit(self, out: bytes) -> bool:
        if len(out) > self._budget.inflated:
            self._found.failures.append(
                f"cannot be checked: its {self._kind} content decompresses past "
                f"{INFLATE_LIMIT >> 20} MiB"
            )
            self._engine = None
            return False
        self._budget.inflated -= len(out)
        self._inner.feed(out)
        return True

    def finish(self) -> None:
        if self._kind == "gzip" and self._engine is not None:
            with contextlib.suppress(zlib.error):
                self._emit(self._engine.flush())
        self._engine = None
        self._inner.finish()


def _judge(data: bytes, found: _Found, budget: _Budget, depth: int, via: str) -> None:
    """Judge one blob held whole: the content of its compression, its structure, its text."""
    if found.settled:
        return
    if len(data) > PARSE_LIMIT:  # nested bytes past the limit: scanned as text as well
        big = _Stream(found, budget, depth, via)
        big.feed(data)
        big.finish()
        return
    kind = _packing(data)
    if kind is not None and depth < MAX_DEPTH:
        inner = _Stream(found, budget, depth + 1, _layer(via, kind))
        inflate = _Inflate(kind, inner, found, budget)
        inflate.feed(data)
        inflate.finish()
    texts = [(data, via)]  # what the text scan reads
    decoded = decode_text(data)
    if decoded is not None:
        text, encoding = decoded
        if encoding not in ("utf-8", "latin-1"):  # a binary blob may look like UTF-16: both
            via = f"{via}, decoded as {encoding.upper()}"
            texts.append((text.encode("utf-8", "surrogatepass"), via))
        for how, values in parse(text):
            judge = _string_judge(found, budget, depth, via)
            mark, real = walk(values, judge, top_strings=how.startswith("read as JSON"))
            found.note(mark, real, how + via)
    for scanned, scan_via in texts:
        if found.settled:
            return
        scan = TextScan(on_base64=_base64_judge(found, budget, depth, scan_via))
        scan.feed(scanned)
        mark, real = scan.finish()
        found.note(mark, real, f"found in its text{scan_via}")


def _string_judge(found: _Found, budget: _Budget, depth: int, via: str) -> Callable[[str], None]:
    """Judges a string inside parsed data as a blob of its own."""

    def judge(text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        if depth < MAX_DEPTH and not found.settled and budget.take(len(data)):
            _judge(data, found, budget, depth + 1, f", inside a string value{via}")

    return judge


def _base64_judge(found: _Found, budget: _Budget, depth: int, via: str) -> Callable[[bytes], None]:
    """Judges a decoded run of base64 as a blob of its own, when it is text or compressed."""

    def judge(data: bytes) -> None:
        if depth >= MAX_DEPTH or found.settled:
            return
        if _packing(data) is None and text_encoding(data[:_PROBE]) is None:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return
            if not _WORTH_DECODING.search(data):
                return
        if budget.take(len(data)):
            _judge(data, found, budget, depth + 1, f"{via}, base64-decoded")

    return judge
