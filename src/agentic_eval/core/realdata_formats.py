"""The structural half of the real-data guard: a blob's text, parsed, and the mark looked up.

:func:`decode_text` finds a blob's text (UTF-8, UTF-16 or UTF-32 by their byte-order mark or, for
UTF-16 without one, by its zero bytes, else Latin-1); :func:`parse` reads it as every format that
accepts it (JSON or a stream of JSON values; else YAML, TOML, JSON5 with its comments, and the
JSON objects on its lines); :func:`walk` looks through what was read for a mapping that carries
the mark or declares real data, and hands every string that names a key back to the caller (a
JSON log line inside a JSON string, a notebook cell's lines) to be judged in turn.
:mod:`agentic_eval.core.realdata` holds the rules in prose.
"""

from __future__ import annotations

import codecs
import json
import re
import tomllib
from collections.abc import Callable, Iterator
from typing import Any, cast

import yaml

MARK = "external_fixtures"
"""The key every file derived from real fixtures carries, with the fixtures' sha256."""
REAL_DATA_KEY = "real_data"
"""A real fixture file may declare itself with this key set to true; it must not be tracked."""

TRUE_WORDS = ("true", "yes", "on", "1")
"""What counts as true for ``real_data`` (any case): JSON's and YAML 1.1's words, and 1."""
DIGEST = re.compile(r"(?:[Ss][Hh][Aa]-?256[:=-]?)?[0-9a-fA-F]{64}")
"""A sha256 hex digest, optionally prefixed ``sha256:``."""
_FIXTURES = MARK.rsplit("_", 1)[-1]  # every spelling of the mark's key ends so


def mentions_a_key(text: str) -> bool:
    """Whether ``text`` may hold a key (spelt out or escaped): only such strings are judged
    again."""
    return REAL_DATA_KEY in text or "\\u" in text or _FIXTURES in text.lower()


_PROBE = 8000  # git's own test for binary: a NUL byte in the first 8000 bytes
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: its mark starts like UTF-16 LE's
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def is_truthy(value: object) -> bool:
    """Whether a ``real_data`` value declares real data: true, 1, or a true word as a string."""
    if value is True or (type(value) is int and value == 1):
        return True
    return isinstance(value, str) and value.strip().lower() in TRUE_WORDS


def is_mark_key(key: str, value: object) -> bool:
    """Whether ``key: value`` is the mark: the key itself with any value, or the key spelt
    otherwise (``EXTERNAL_FIXTURES``, ``external-fixtures``, ``externalFixtures``) with a digest."""
    if key == MARK:
        return True
    if len(key) not in _SPELT or not isinstance(value, str):
        return False
    if key.replace("-", "").replace("_", "").lower() != MARK.replace("_", ""):
        return False
    return DIGEST.fullmatch(value.strip()) is not None


def text_encoding(head: bytes) -> str | None:
    """The wide encoding a blob's first bytes show (``utf-16``, ``utf-16-le``...), or None."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    half = len(head) // 2
    if half >= 2 and b"\0" in head:  # ASCII text in UTF-16 without a mark: every other byte 0
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if odd >= half * 0.6 and even <= half * 0.05:
            return "utf-16-le"
        if even >= half * 0.6 and odd <= half * 0.05:
            return "utf-16-be"
    return None


def decode_text(data: bytes) -> tuple[str, str] | None:
    """The text of a blob and its encoding, or None for binary (a NUL byte, not UTF-16/32)."""
    wide = text_encoding(data[:_PROBE])
    if wide is not None:
        return data.decode(wide, "replace"), wide
    if b"\0" in data[:_PROBE]:
        return None
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"  # every byte is a character: read, not skipped


def parse(text: str) -> Iterator[tuple[str, list[Any]]]:
    """Every reading of ``text``: ``(how, values)`` for each format that accepts it."""
    values = _json_stream(text)
    if values is not None:  # JSON is definite: no other reading adds anything
        yield ("read as JSON" if len(values) <= 1 else "read as JSON lines"), values
        return
    containers = False
    try:  # any exception: the parser could not read it, which is no reason to pass or crash
        docs = list(yaml.load_all(text, Loader=_YAML_LOADER))
    except Exception:
        docs = None
    if docs is not None:
        containers = any(isinstance(d, dict | list) for d in docs)
        yield "read as YAML", docs
    try:
        table = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        table = None
    if table:
        containers = True
        yield "read as TOML", [table]
    json5 = _json5(text)
    if json5 is not None:
        containers = True
        yield "read as JSON5", json5
    if not containers:
        lines = _json_on_lines(text)
        if lines:
            yield "read from its JSON lines", lines


def walk(
    values: list[Any], on_text: Callable[[str], None], *, top_strings: bool = False
) -> tuple[bool, bool]:
    """Whether any mapping in ``values`` carries the mark; whether one declares real data.

    Every string inside a container that :func:`mentions_a_key` goes to ``on_text`` (a list of
    strings goes as one text, its lines joined); a top-level string only with ``top_strings``
    (a JSON string; YAML reads nearly any text as one string, which is the text itself).
    """
    mark = real = False
    stack: list[Any] = [v for v in values if top_strings or not isinstance(v, str)]
    seen: set[int] = set()  # YAML anchors share (and may nest) containers: visit each once
    while stack and not (mark and real):
        value: object = stack.pop()
        if isinstance(value, str):
            _text(value, on_text)
        elif isinstance(value, list):
            items = cast("list[Any]", value)
            if id(items) in seen:
                continue
            seen.add(id(items))
            if items and isinstance(items[0], str) and all(isinstance(i, str) for i in items):
                lines = cast("list[str]", items)
                glue = "" if all(i.endswith("\n") for i in lines) else "\n"
                _text(glue.join(lines), on_text)  # a notebook cell's source, a log's lines
            else:
                stack.extend(items)
        elif isinstance(value, dict):
            mapping = cast("dict[Any, Any]", value)
            if id(mapping) in seen:
                continue
            seen.add(id(mapping))
            for key, item in mapping.items():
                if isinstance(key, str):
                    mark = mark or is_mark_key(key, item)
                    real = real or (key == REAL_DATA_KEY and is_truthy(item))
                if isinstance(item, str):
                    _text(item, on_text)
                elif isinstance(item, dict | list):
                    stack.append(item)
    return mark, real


_SPELT = (len(MARK), len(MARK) - 1)  # external_fixtures, externalFixtures


def _text(value: str, on_text: Callable[[str], None]) -> None:
    if len(value) >= len(REAL_DATA_KEY) and mentions_a_key(value):
        on_text(value)


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


def _json_on_lines(text: str) -> list[Any]:
    """The JSON value at the start of each line, or after the first ``{`` of a line naming a key
    (a log line ``12:00 wrote {...}``)."""
    found: list[Any] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped[:1] in ("{", "["):
            at = 0
        elif "{" in stripped and mentions_a_key(stripped):
            at = stripped.index("{")
        else:
            continue
        try:
            found.append(_DECODER.raw_decode(stripped, at)[0])
        except (ValueError, RecursionError):
            continue
    return found


_COMMENT_OR_STRING = re.compile(r"[\"'/]")
_STRINGS = {'"': re.compile(r'"(?:[^"\\\n]|\\.)*"'), "'": re.compile(r"'(?:[^'\\\n]|\\.)*'")}


def _json5(text: str) -> list[Any] | None:
    """JSON5 (comments, bare keys, single quotes, trailing commas): its comments removed, read
    by the YAML parser (whose flow style accepts the rest); None when it has no comments."""
    head = text.lstrip()[:2]
    if not (head[:1] in ("{", "[") or head in ("//", "/*")) or "/" not in text:
        return None
    bare = _strip_comments(text)
    if bare is None or bare == text:
        return None
    try:
        return list(yaml.load_all(bare, Loader=_YAML_LOADER))
    except Exception:
        return None


def _strip_comments(text: str) -> str | None:
    """``text`` without its ``//`` and ``/* */`` comments (strings kept whole), in one pass."""
    out: list[str] = []
    at = 0
    while True:
        found = _COMMENT_OR_STRING.search(text, at)
        if found is None:
            out.append(text[at:])
            return "".join(out)
        i = found.start()
        char, after = text[i], text[i + 1 : i + 2]
        if char == "/" and after in ("/", "*"):
            out.append(text[at:i])
            if after == "/":
                end = text.find("\n", i)
                at = len(text) if end < 0 else end
            else:
                end = text.find("*/", i + 2)
                if end < 0:
                    return None
                out.append(" ")
                at = end + 2
        elif char == "/":
            out.append(text[at : i + 1])
            at = i + 1
        else:
            string = _STRINGS[char].match(text, i)
            if string is None:
                return None
            out.append(text[at : string.end()])
            at = string.end()
