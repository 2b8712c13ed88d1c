"""The text half of the real-data guard: a blob's bytes scanned for the mark as text.

:class:`TextScan` takes a blob in pieces (a blob may be far larger than memory should hold) and
reads it through a normalising pipeline before its rules see it: ASCII code escapes
(``\\u0065``, ``\\x65``) are undone everywhere, since they may spell a key; where a key is named,
HTML entities, ``%XX`` escapes and backslash escapes (``\\"``, ``\\n``, however many backslashes)
are undone too and every run of whitespace becomes one character, so no rule needs to bound a run
of spaces (elsewhere no rule can match, and the text is left as it is). The rules
(:mod:`agentic_eval.core.realdata` lists them in prose) are regular expressions without nested
unbounded repetition, so a scan is linear in the blob's size; a line-based pass reads tables (CSV,
TSV, Markdown and pipe tables) by their header; runs of base64 are decoded and handed back to the
caller to be judged in turn.
"""

from __future__ import annotations

import base64
import binascii
import csv
import functools
import html
import re
from collections.abc import Callable

from agentic_eval.core.realdata_formats import DIGEST, MARK, REAL_DATA_KEY, TRUE_WORDS, is_truthy

OVERLAP = 1 << 16
"""Bytes each window of the scan shares with the next: longer than any rule's match."""
_PIECE = 1 << 20  # the size of a window's new part
_LINE_LIMIT = 1 << 20  # a table line longer than this is not read as one
_BASE64_MIN = 24  # the shortest marked JSON object, 18 bytes, is 24 base64 characters

REAL = REAL_DATA_KEY.encode()
FIXTURES = MARK.rsplit("_", 1)[-1].encode()  # every spelling of the mark's key ends so

# -- normalising ----------------------------------------------------------------------------------

_ENTITY = re.compile(rb"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_PERCENT = re.compile(rb"%[0-9A-Fa-f]{2}")
# Each escape starts only where a run of backslashes starts: tried at every backslash of a long
# run, it would cost the square of the run's length.
_CODE_ESCAPE = re.compile(rb"(?<!\\)\\+(?:u00([2-7][0-9a-fA-F])|x([2-7][0-9a-fA-F]))")  # ASCII
_ESCAPES = (  # plain replacements: re.sub runs them in C, without a call per match
    (re.compile(rb'(?<!\\)\\+"'), b'"'),
    (re.compile(rb"(?<!\\)\\+'"), b"'"),
    (re.compile(rb"(?<!\\)\\+/"), b"/"),
    (re.compile(rb"(?<!\\)\\+[nr]"), b"\n"),
    (re.compile(rb"(?<!\\)\\+t"), b"\t"),
)
_RUN_OF_SPACES = re.compile(rb"[ \t]{2,}")
_RUN_OF_LINES = re.compile(rb"(?:[ \t]?[\r\n])+[ \t]?")  # after spaces: one line break remains


def _entity(found: re.Match[bytes]) -> bytes:
    return _unescaped(found.group())


@functools.lru_cache(maxsize=1024)
def _unescaped(entity: bytes) -> bytes:
    return html.unescape(entity.decode("ascii")).encode("utf-8", "surrogatepass")


def _code(found: re.Match[bytes]) -> bytes:
    return bytes((int(found.group(1) or found.group(2), 16),))


def _unescape_html(data: bytes) -> bytes:
    return _ENTITY.sub(_entity, data) if b"&" in data else data


def _unquote(data: bytes) -> bytes:
    return _PERCENT.sub(lambda m: bytes((int(m.group()[1:], 16),)), data) if b"%" in data else data


def _uncode(data: bytes) -> bytes:
    return _CODE_ESCAPE.sub(_code, data) if b"\\" in data else data


def _unbackslash(data: bytes) -> bytes:
    if b"\\" in data:
        for pattern, plain in _ESCAPES:
            data = pattern.sub(plain, data)
    return data


def _names_a_key(data: bytes) -> bool:
    return REAL in data or FIXTURES in data.lower()


def _collapse(data: bytes) -> bytes:
    return _RUN_OF_LINES.sub(b"\n", _RUN_OF_SPACES.sub(b" ", data))


_STAGES: tuple[tuple[Callable[[bytes], bytes], bytes, int], ...] = (
    (_uncode, b"\\", 12),  # (undo, the byte an escape starts with, its longest length)
    (_unescape_html, b"&", 48),
    (_unquote, b"%", 3),
)


class _Normaliser:
    """The pipeline over a stream: each stage holds back an escape a piece may have cut.

    ``\\u0065`` may spell a key's letter, so ASCII code escapes are undone everywhere; the rest
    (entities, ``%XX``, ``\\"``, whitespace) only in a piece that names a key (or follows one
    that ended naming it): elsewhere no rule can match, and the text is left as it is for free.
    """

    def __init__(self) -> None:
        self._held = [b""] * len(_STAGES)
        self._space = b""  # trailing whitespace, collapsed, carried to the next piece
        self._tail = b""

    def feed(self, data: bytes) -> tuple[bytes, bytes]:
        """The piece unescaped (whitespace kept, for tables) and also collapsed (for the rules)."""
        near_key = False
        for i, (undo, start, reach) in enumerate(_STAGES):
            data = self._held[i] + data
            cut = data.rfind(start, max(0, len(data) - reach))
            cut = len(data) if cut < 0 else cut
            self._held[i] = data[cut:]
            data = data[:cut]
            if i == 0:
                data = undo(data)
                near_key, self._tail = _names_a_key(self._tail + data), data[-64:]
            elif near_key:
                data = undo(data)
        if not near_key:
            spaced, self._space = self._space + data, b""
            return data, spaced
        data = _unbackslash(data)
        spaced = _collapse(self._space + data)
        end = len(spaced.rstrip(b" \t\n"))
        self._space = spaced[end:]
        return data, spaced[:end]

    def finish(self) -> tuple[bytes, bytes]:
        """What the stages held back."""
        data = b""
        for i, (undo, _, _) in enumerate(_STAGES):
            data = undo(self._held[i] + data)
            self._held[i] = b""
        data = _unbackslash(data)
        spaced, self._space = _collapse(self._space + data), b""
        return data, spaced


# -- the rules ------------------------------------------------------------------------------------


def _named(key: str) -> str:
    """``key`` quoted, or bare where no word or quote goes on either side of it."""
    k = re.escape(key)
    return f"(?:\"{k}\"|'{k}'|(?<![\\w\"'`.-]){k}(?![\\w\"'`-]))"


def _quoted(key: str) -> str:
    k = re.escape(key)
    return f"(?:\"{k}\"|'{k}')"


def _bare(key: str) -> str:
    k = re.escape(key)
    return f"(?<![\\w\"'`.-]){k}(?![\\w\"'`-])"


_S = "[ \\t\\r\\n]*"  # any spacing: a run of whitespace is one character once collapsed
_WORD = f"(?i:{'|'.join(TRUE_WORDS)})(?![\\w.])"
_TRUE = f"(?:\"{_WORD}\"|'{_WORD}'|{_WORD})"
_TRUE_ASSIGNED = f"(?:\"{_WORD}\"|'{_WORD}'|(?!True\\b){_WORD})"  # k=True is Python's keyword
_ANY_MARK = "(?<![A-Za-z0-9])(?i:external[-_]?fixtures)(?![A-Za-z0-9])"  # EXTERNAL-FIXTURES too
_TAG = "</?[A-Za-z][A-Za-z0-9]{0,15}(?:[ \\t\\n][^<>\\n]{0,128})?>"
_SEPARATOR = f"(?:[ \\t\\r\\n\"'`:=|,;>(\\[{{\\\\]|{_TAG}){{0,64}}"
_DIGEST = f"{DIGEST.pattern}(?![0-9a-fA-F])"
_OPEN_TAG_ATTRS = (
    "<[A-Za-z_][\\w:.-]{0,64}"
    "(?:[ \\t\\n][\\w:.-]{1,64}[ \\t\\n]?=[ \\t\\n]?(?:\"[^\"<>]{0,256}\"|'[^'<>]{0,256}')){0,32}"
    "[ \\t\\n]"
)
_END = "(?:[,}\\n]|//|/\\*|#)"
_OBJECT = f"[{{,(\\[]{_S}(?:/\\*[^*\\n]{{0,256}}\\*/{_S})?"  # a key's place in an object or array()
_ASSIGN = "(?:=>|[:=])"
_STRING = "(?:\"[^\"\\n<.]|'[^'\\n<.])"  # a non-empty string that is not a <placeholder>...
_VALUE = f"(?:{_STRING}|(?:null|true|false)(?![\\w])|-?[0-9]|[\\[{{])"  # ...or any JSON value
_PREFIX = "(?:[\\w.-]{1,64}:)?"  # an XML namespace
_COMMENT = "(?:/\\*[^*\\n]{0,256}\\*/[ \\t]*)?"

_MARK_RULES = tuple(
    re.compile(rule.encode())
    for rule in (
        f"{_ANY_MARK}{_SEPARATOR}{_DIGEST}",  # JSON, YAML, TOML, INI, .env, CSV, XML, tables
        f"{_OBJECT}(?:{_quoted(MARK)}{_S}{_ASSIGN}{_S}{_VALUE}|{_bare(MARK)}{_S}:{_S}{_STRING})",
        f"<{_PREFIX}{re.escape(MARK)}(?:[ \\t\\n][^<>]{{0,256}})?>{_S}[^<\\s]",  # an XML element
    )
)
_REAL_RULES = tuple(
    re.compile(rule.encode(), re.MULTILINE)
    for rule in (
        f"{_OBJECT}(?:{_quoted(REAL_DATA_KEY)}{_S}{_ASSIGN}|{_bare(REAL_DATA_KEY)}{_S}:)"
        f"{_S}{_TRUE}{_S}{_END}",  # in an object: JSON, JSON5, YAML flow, Python, PHP, Ruby
        f"\\{{{_S}{_bare(REAL_DATA_KEY)}{_S}={_S}{_TRUE_ASSIGNED}{_S}[,}}]",  # a TOML inline table
        f"^[ \\t]*{_COMMENT}(?:[-*][ \\t]+)?(?:export[ \\t]+)?{_named(REAL_DATA_KEY)}[ \\t]*"
        f"(?::[ \\t]*{_TRUE}[ \\t]*,?|=[ \\t]*{_TRUE_ASSIGNED})"  # a line: YAML, TOML, INI, .env
        "[ \\t]*(?:(?:#|//|;)[^\\n]{0,1024})?$",
        f"<{_PREFIX}{re.escape(REAL_DATA_KEY)}(?:[ \\t\\n][^<>]{{0,256}})?>{_S}{_WORD}{_S}</",
        f"{_OPEN_TAG_ATTRS}{_PREFIX}{re.escape(REAL_DATA_KEY)}{_S}={_S}(?:\"{_WORD}\"|'{_WORD}')",
        f">{_S}{re.escape(REAL_DATA_KEY)}{_S}</t[dh]{_S}>{_S}<t[dh](?:[ \\t\\n][^<>]{{0,128}})?>"
        f"{_S}{_WORD}{_S}<",  # an HTML table row
    )
)

_BASE64 = re.compile(  # wrapped at 64 or 76 columns (and indented, in YAML), a short last line
    rb"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}(?:={0,2}\r?\n[ \t]*[A-Za-z0-9+/_-]{20,})*"
    rb"(?:={0,2}\r?\n[ \t]*[A-Za-z0-9+/_-]{1,19})?={0,2}"
)
_NOT_BASE64 = re.compile(rb"[\s=]+")


def _decode_base64(run: bytes) -> bytes | None:
    run = _NOT_BASE64.sub(b"", run)
    if len(run) < _BASE64_MIN or run.lower() == run or run.upper() == run:
        return None  # base64 of text mixes cases; a digest, a word, a run of one letter do not
    urlsafe = b"-" in run or b"_" in run
    if urlsafe and (b"+" in run or b"/" in run):
        return None
    if len(run) % 4 == 1:
        run = run[:-1]
    try:
        return base64.b64decode(
            run + b"=" * (-len(run) % 4), altchars=b"-_" if urlsafe else None, validate=True
        )
    except (binascii.Error, ValueError):
        return None


class TextScan:
    """The text rules over one stream of bytes, fed in pieces (or as one).

    Args:
        on_base64: Called with the bytes of every run of base64 (24 characters or more) found.
    """

    def __init__(self, on_base64: Callable[[bytes], None] | None = None) -> None:
        self.mark = False
        self.real = False
        self._normaliser = _Normaliser()
        self._tables = _Tables()
        self._buf = b""
        self._pos = 0
        self._on_base64 = on_base64

    def feed(self, data: bytes) -> None:
        """Scan the next piece of the stream."""
        for at in range(0, len(data), _PIECE):
            lines, text = self._normaliser.feed(data[at : at + _PIECE])
            self._tables.feed(lines)
            self._window(text, final=False)

    def finish(self) -> tuple[bool, bool]:
        """Whether the stream held the mark as text; whether it declared real data as text."""
        lines, text = self._normaliser.finish()
        self._tables.feed(lines)
        self._tables.finish()
        self._window(text, final=True)
        return self.mark or self._tables.mark, self.real or self._tables.real

    def _window(self, text: bytes, *, final: bool) -> None:
        """Scan for matches that start in the window's new part; the last :data:`OVERLAP` bytes
        (and one byte of context before them) carry over to the next window."""
        keep = max(self._pos - 1, 0)
        self._buf = self._buf[keep:] + text
        self._pos -= keep
        cut = len(self._buf) + 1 if final else len(self._buf) - OVERLAP
        if cut <= self._pos:
            return
        buf, pos = self._buf, self._pos
        if not self.mark and FIXTURES in buf.lower():
            self.mark = any(_starts_before(rule, buf, pos, cut) for rule in _MARK_RULES)
        if not self.real and REAL in buf:
            self.real = any(_starts_before(rule, buf, pos, cut) for rule in _REAL_RULES)
        if self._on_base64 is not None:
            for run in _BASE64.finditer(buf, pos):
                if run.start() >= cut:
                    break
                decoded = _decode_base64(run.group())
                if decoded is not None:
                    self._on_base64(decoded)
        self._pos = cut


def _starts_before(rule: re.Pattern[bytes], buf: bytes, pos: int, cut: int) -> bool:
    found = rule.search(buf, pos)
    return found is not None and found.start() < cut


# -- tables ---------------------------------------------------------------------------------------

_KEY_CELL = re.compile(  # a key alone between delimiters: a line that may be a table's header
    rb"(?:^|[,\t;|])[ \"']*(?:(?i:external[-_]?fixtures)|" + re.escape(REAL) + rb")"
    rb"[ \"']*(?:[,\t;|]|\r?$)",  # no tab among the spaces: a run of tabs is read once
    re.MULTILINE,
)
_DELIMITERS = (",", "\t", ";", "|")


def _cell_kind(cell: str) -> str | None:
    if cell == REAL_DATA_KEY:
        return "real"
    return "mark" if cell.replace("-", "").replace("_", "").lower() == "externalfixtures" else None


def _cells(line: bytes, delimiter: str) -> list[str]:
    text = line.decode("utf-8", "replace").strip()
    if delimiter == "|":  # Markdown: | a | b |
        text = text.removeprefix("|").removesuffix("|")
        return [cell.strip() for cell in text.split("|")]
    if '"' not in text:  # nothing quoted: no need for the csv module's parser
        return [cell.strip().strip("'") for cell in text.split(delimiter)]
    try:
        row = next(csv.reader([text], delimiter=delimiter, skipinitialspace=True), None)
    except csv.Error:
        return []
    if row is None:
        return []
    return [cell.strip().strip("\"'") for cell in row]


class _Tables:
    """Tables read line by line: a header cell named like a key makes its column's cells values
    (a digest for the mark, a true word for real data); a row ``real_data | true`` counts too."""

    def __init__(self) -> None:
        self.mark = False
        self.real = False
        self._held = b""
        self._header: tuple[str, dict[int, str]] | None = None
        self._last: bytes = b""

    def feed(self, data: bytes) -> None:
        if self.mark and self.real:
            return
        data = self._held + data
        end = data.rfind(b"\n") + 1
        self._held = data[end:] if len(data) - end <= _LINE_LIMIT else b""
        self._lines(data[:end])

    def finish(self) -> None:
        self._lines(self._held)
        self._held = b""

    def _lines(self, block: bytes) -> None:
        at = 0
        while at < len(block) and not (self.mark and self.real):
            if self._header is None:  # jump to the next line with a key as a cell
                hit = _KEY_CELL.search(block, at)
                if hit is None:
                    return
                at = block.rfind(b"\n", 0, hit.start()) + 1
            end = block.find(b"\n", at)
            end = len(block) if end < 0 else end
            self._line(block[at:end].rstrip(b"\r"))
            at = end + 1

    def _line(self, line: bytes) -> None:
        if not line.strip():
            self._header = None
            return
        if line != self._last and _KEY_CELL.search(line):
            self._last = line  # the same header again (or a hostile repeat) is read once
            for delimiter in _DELIMITERS:
                if delimiter.encode() not in line:
                    continue
                cells = _cells(line, delimiter)
                for i, cell in enumerate(cells[:-1]):
                    self.real = self.real or (cell == REAL_DATA_KEY and is_truthy(cells[i + 1]))
                kinds = {i: kind for i, cell in enumerate(cells) if (kind := _cell_kind(cell))}
                if len(cells) >= 2 and kinds:
                    self._header = (delimiter, kinds)
                    return
        if self._header is None:
            return
        delimiter, kinds = self._header
        cells = _cells(line, delimiter)
        for i, kind in list(kinds.items()):
            value = cells[i] if i < len(cells) else ""
            if kind == "mark" and DIGEST.fullmatch(value):
                self.mark = True
            elif kind == "real" and is_truthy(value):
                self.real = True
            else:
                continue
            del kinds[i]
        if not kinds:
            self._header = None
