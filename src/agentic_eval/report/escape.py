"""The one place where text becomes part of a document: one escaping function per format.

Every renderer (terminal, Markdown, HTML, SVG, JUnit XML, JSON) puts text that comes from data
(a label, a model name, a check message, a transcript) into its document only through a function
here, and never escapes by hand. The rules every function shares:

- A lone surrogate (``"\\ud800"``, what Python makes of bytes that are not UTF-8 in a file name
  or an argument) is not text and cannot be written as UTF-8: it becomes U+FFFD.
- Control characters (ESC, NUL, BEL, C1...) are shown as ``\\xNN`` escapes
  (:func:`agentic_eval.core.text.printable`), so what a terminal shows, a page shows too;
  newlines and tabs are kept where the format can hold them.

Then each format gets what it needs: table cells whose ``|`` cannot split a row and whose
newlines cannot end it, inline Markdown that cannot open emphasis, a link, a code span or HTML,
HTML text and attribute values that cannot open a tag, JSON that cannot close a ``<script>``,
and XML 1.0 that parses whatever the text held.
"""

from __future__ import annotations

import html
import re
from typing import Any, cast

from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.text import one_line, printable

_SURROGATE = re.compile("[\ud800-\udfff]")
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MAX_CELL = 400
"""Characters of a Markdown table cell; longer text is cut with ``...``."""


# --- text that can be encoded at all --------------------------------------------------------


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (it can then be encoded)."""
    return _SURROGATE.sub("\ufffd", text)


def valid_data(data: Any) -> Any:
    """JSON data with :func:`valid_text` applied to every string in it (keys too)."""
    if isinstance(data, str):
        return valid_text(data)
    if isinstance(data, dict):
        items = cast(dict[Any, Any], data).items()
        return {valid_data(k): valid_data(v) for k, v in items}
    if isinstance(data, list | tuple):
        return [valid_data(v) for v in cast(list[Any] | tuple[Any, ...], data)]
    return data


def _shown(text: str) -> str:
    return printable(valid_text(text))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- terminal ---------------------------------------------------------------------------------


def terminal_text(text: str) -> str:
    """Text for a terminal: control characters (escape sequences, NUL...) as ``\\xNN``,
    newlines and tabs kept. Print it as a ``rich.text.Text`` (or with ``markup=False`` and
    ``emoji=False``), so ``[red]`` and ``:smile:`` stay text too."""
    return _shown(text)


def terminal_line(text: str, limit: int = 500) -> str:
    """:func:`terminal_text` on one line: whitespace collapsed, cut to ``limit`` characters."""
    return one_line(valid_text(text), limit)


# --- Markdown (GitHub-flavoured) ---------------------------------------------------------------

_MARKDOWN = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "~": "\\~",
    "[": "\\[",  # no link or image can start (a lone "]" or ">" opens nothing)
    "|": "\\|",
    "<": "&lt;",
    "&": "&amp;",
}
_BLOCK_START = re.compile(r"^(?:[#+=>\-]|\d+(?=[.)]))")


def _markdown_inline(text: str) -> str:
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch == "_":
            # An underscore between two letters or digits can neither open nor close emphasis
            # (CommonMark's flanking rules), so names like retail_ops stay readable.
            inner = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            out.append("_" if inner else "\\_")
        else:
            out.append(_MARKDOWN.get(ch, ch))
    return "".join(out)


def markdown_text(text: str) -> str:
    """Inline Markdown text on one line (a heading, a paragraph, a quote): whitespace collapsed,
    every character that could start emphasis, a link, a code span, HTML or an entity escaped,
    and a leading ``#``, ``>``, ``-``, ``+``, ``=`` or ``1.`` escaped so it starts no block."""
    flat = _markdown_inline(" ".join(_shown(text).split()))
    match = _BLOCK_START.match(flat)
    if match is None:
        return flat
    end = match.end()
    return flat[:end] + "\\" + flat[end:] if flat[0].isdigit() else "\\" + flat


def markdown_cell(text: str, limit: int = MAX_CELL) -> str:
    """One table cell: inline-escaped like :func:`markdown_text`, ``|`` as ``\\|`` (it cannot
    split the row), each line stripped and joined with ``<br>`` (a newline cannot end the row),
    cut to ``limit`` characters; a blank cell is one space."""
    lines = _cut(_shown(text), limit).splitlines()
    return "<br>".join(_markdown_inline(line.strip()) for line in lines) or " "


_PLAIN_CODE = re.compile(r"[^`|\\<>&\s]+(?: [^`|\\<>&\s]+)*")


def markdown_code_cell(text: str, limit: int = MAX_CELL) -> str:
    """A table cell showing ``text`` as code (an id, a case name). Text a code span cannot hold
    safely in a table (a backtick, a pipe, a backslash, a line break) or that would put ``<``,
    ``>`` or ``&`` raw into the document is shown as an escaped :func:`markdown_cell` instead;
    inside a code span nothing else is interpreted."""
    shown = _cut(_shown(text).strip(), limit)
    if _PLAIN_CODE.fullmatch(shown):
        return f"`{shown}`"
    return markdown_cell(shown, limit)


# --- HTML (and the SVG inside it) ----------------------------------------------------------


def html_text(text: str) -> str:
    """HTML text, safe both between tags and inside a quoted attribute value (``<``, ``>``,
    ``&``, ``"`` and ``'`` become entities); newlines kept (``<pre>`` shows them)."""
    return html.escape(_shown(text), quote=True)


def html_line(text: str) -> str:
    """:func:`html_text` on one line (whitespace collapsed): for an HTML element inside a
    Markdown document, where a blank line would end the HTML block."""
    return html_text(" ".join(valid_text(text).split()))


_SCRIPT_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def script_json(data: object) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element: ``<``, ``>``
    and ``&`` are ``\\u`` escapes, so no text can close the element or open a comment."""
    text = json_text(data)
    return "".join(_SCRIPT_JSON_ESCAPES.get(ch, ch) for ch in text)


# --- JSON ---------------------------------------------------------------------------------------


def json_text(data: object, *, indent: bool = False) -> str:
    """Canonical JSON text of ``data`` (control characters are JSON ``\\u`` escapes already;
    lone surrogates become U+FFFD, so the text can be written)."""
    return canonical_json(valid_data(data), indent=2 if indent else None)


# --- XML (JUnit) ---------------------------------------------------------------------------------


def xml_text(text: str) -> str:
    """Text for an XML 1.0 element or attribute (the serializer adds the entities): control
    characters as ``\\xNN``, and what XML 1.0 cannot hold at all (lone surrogates, U+FFFE,
    U+FFFF) as U+FFFD, so the document parses whatever the text held."""
    return _XML_ILLEGAL.sub("\ufffd", _shown(text))
