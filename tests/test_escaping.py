"""Everything printed into a document is escaped for that document (issue 17, class 6).

ONE hostile string (a pipe, ``<script>``, ``<img onerror>``, an ampersand, quotes, a backtick,
Markdown emphasis, rich markup and an emoji code, a backslash, a newline, a lone surrogate, an
ANSI escape and a NUL) goes through every command's every format, by the routes it can take in
real use: a ``--label`` (which takes printable text only), a live ``--model`` against the shipped
fake provider whose answers carry it too (the store takes no lone surrogate), and the history
those runs write (read by ``report`` and ``history``). The whole string, lone surrogate included,
then goes through every renderer of the library on report views built from that history. Each
document is parsed as its readers parse it:

- Markdown (markdown-it-py, GFM tables): every row of every table has its header's cell count,
  no raw HTML token carries a tag from the data, the rendered page has no script or img element,
  and the hostile text is shown as text;
- HTML (html.parser): the only script elements are the page's own two, no img element, no
  ``on*`` attribute, the hostile text shown as text;
- JUnit XML: parses with xml.etree and junitparser, no element from the data;
- JSON: parses, holds the text;
- terminal output: no raw ESC, NUL, BEL, CSI or lone surrogate, rich markup and emoji codes shown
  as typed.

The isolated AGENTIC_EVAL_HOME and AGENTIC_EVAL_HISTORY_DIR of every test (conftest) keep the
repository untouched.
"""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from junitparser import JUnitXml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from agentic_eval.agent.tools import SUBMIT_TOOL
from agentic_eval.backends.scripted import respond
from agentic_eval.cli.main import main
from agentic_eval.core import ModelRequest, ModelResponse
from agentic_eval.core.messages import ToolUseBlock
from agentic_eval.domains import get_domain
from agentic_eval.history import load_history
from agentic_eval.report import (
    ReportView,
    RunsView,
    history_json,
    history_markdown,
    history_svg,
    report_from_json,
    report_html,
    report_json,
    report_junit,
    report_markdown,
    runs_json,
    runs_junit,
    runs_markdown,
)
from agentic_eval.report.escape import markdown_cell, markdown_code_cell, markdown_text
from agentic_eval.testing import FakeProvider

HOSTILE = (
    "lab|el <script>alert(1)</script><img src=x onerror=alert(2)> & \"dq\" 'sq' `tick` "
    "*em* _u_ [/b][red]R :thumbs_up: back\\slash nl\nx \ud800 \x1b[31mRED\x00NUL"
)
LABEL = "".join(ch for ch in HOSTILE if ch.isprintable())
"""What ``--label`` accepts of it (a label is printable text)."""
MODEL = LABEL
"""What ``--model`` accepts of it (one line of printable text: a newline or an escape in a model
name is a usage error, see test_a_model_name_that_is_not_one_printable_line_is_refused)."""
OUTPUT = HOSTILE.replace("\ud800", "")
"""What a model's answer can carry of it (the store refuses a lone surrogate)."""
SHOWN = HOSTILE.replace("\ud800", "\ufffd")
"""What a document can hold of it (a lone surrogate cannot be encoded)."""

TAGS = ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>")
"""Must be shown, as text, wherever the hostile string went."""
RAW = ("\x1b", "\x00", "\x07", "\x9b", "\ud800")
"""Must never reach a document or a terminal as they are."""
DOMAIN = "retail_ops"
CASES = ("--cases", "match-001,chase-001")  # naive: one passes, one fails a hard gate
MD = MarkdownIt("commonmark").enable("table")  # raw HTML on, as GitHub passes some through


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- readers --------------------------------------------------------------------------------


def _no_raw(text: str, where: str) -> None:
    for ch in RAW:
        assert ch not in text, (where, repr(ch))
    text.encode("utf-8")  # strict: a lone surrogate raises


class _Page(HTMLParser):
    """Elements, attributes and text of an HTML document, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _no_injected_elements(page: _Page, where: str, scripts: int = 0) -> None:
    tags = [tag for tag, _ in page.elements]
    assert "img" not in tags, where
    assert tags.count("script") == scripts, where
    handlers = [name for _, attrs in page.elements for name, _ in attrs if name.startswith("on")]
    assert handlers == [], where


def _cells(line: str) -> int:
    """Cells of a GFM table row: ``|`` separates them unless a backslash escapes it."""
    body = line.strip()
    separators = [
        m.start()
        for m in re.finditer(r"\|", body)
        if (m.start() - len(body[: m.start()].rstrip("\\"))) % 2 == 0
    ]
    count = len(separators) + 1
    if separators and separators[0] == 0:
        count -= 1
    if separators and separators[-1] == len(body) - 1 and len(body) > 1:
        count -= 1
    return count


def _html_tokens(tokens: list[Token]) -> Iterator[Token]:
    for t in tokens:
        if t.type in ("html_block", "html_inline"):
            yield t
        yield from _html_tokens(t.children or [])


def _markdown(text: str, where: str) -> str:
    """Check a Markdown document; return the text a reader sees."""
    _no_raw(text, where)
    lines = text.splitlines()
    tokens = MD.parse(text)
    tables = [t for t in tokens if t.type == "table_open"]
    assert tables, where
    for t in tables:
        assert t.map is not None
        start, end = t.map
        head = _cells(lines[start])
        for row in lines[start:end]:
            assert _cells(row) == head, (where, row)
    for t in _html_tokens(tokens):
        assert not re.search(r"(?i)<\s*/?\s*(script|img)\b", t.content), (where, t.content)
    page = _page(MD.render(text))
    _no_injected_elements(page, where)
    return "".join(page.text)


def _html(text: str, where: str) -> str:
    """Check an HTML report; return its text."""
    _no_raw(text, where)
    page = _page(text)
    _no_injected_elements(page, where, scripts=2)
    scripts = [attrs for tag, attrs in page.elements if tag == "script"]
    assert scripts == [[("type", "application/json"), ("id", "report-data")], []], where
    return "".join(page.text)


def _junit(text: str, where: str) -> str:
    """Check a JUnit document; return every text and attribute value in it."""
    _no_raw(text, where)
    root = ET.fromstring(text)
    JUnitXml.fromstring(text.encode("utf-8"))
    values: list[str] = []
    for node in root.iter():
        assert node.tag not in ("script", "img"), where
        values += [node.text or "", *node.attrib.values()]
    return "\n".join(values)


def _strings(data: object) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for v in data.values():  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(v)


def _json(text: str, where: str) -> str:
    _no_raw(text, where)
    return "\n".join(_strings(json.loads(text)))


def _terminal(text: str, where: str) -> None:
    _no_raw(text, where)
    assert "\N{THUMBS UP SIGN}" not in text, where  # an emoji code stays text


def _one_line(hostile: str) -> str:
    """The hostile text on one terminal line: whitespace collapsed, ESC and NUL shown."""
    return " ".join(hostile.split()).replace("\x1b", "\\x1b").replace("\x00", "\\x00")


def _shows(seen: str, hostile: str, where: str) -> None:
    """The hostile text reached the document and is shown as the text it is."""
    for tag in TAGS:
        assert tag in seen, (where, tag)
    assert "lab|el" in seen, where
    if "\x1b" in hostile:
        assert "\\x1b[31mRED\\x00NUL" in seen, where  # control characters shown escaped


def _check(fmt: str, document: str, hostile: str, where: str) -> None:
    """Check one document of the given format and that it shows the hostile text."""
    if fmt == "markdown":
        _shows(_markdown(document, where), hostile, where)
    elif fmt == "junit":
        _shows(_junit(document, where), hostile, where)
    elif fmt == "json":
        seen = _json(document, where)
        assert hostile.replace("\ud800", "\ufffd") in seen, where
    elif fmt == "html":
        _shows(_html(document, where), hostile, where)
    else:
        _terminal(document, where)


# --- run ------------------------------------------------------------------------------------

RUN_FORMATS = [
    ("table", ()),
    ("table", ("-v",)),
    ("json", ("--json",)),
    ("json", ("--format", "json")),
    ("markdown", ("--markdown",)),
    ("markdown", ("--format", "markdown")),
    ("junit", ("--format", "junit")),
]
RUN_IDS = ["table", "verbose", "json", "format-json", "markdown", "format-markdown", "junit"]


@pytest.mark.parametrize(("fmt", "flags"), RUN_FORMATS, ids=RUN_IDS)
def test_run_with_a_hostile_label_escapes_every_format(
    fmt: str, flags: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "out.txt"
    argv = ("run", DOMAIN, "--backend", "scripted", "--agent", "naive", *CASES, "--label", LABEL)
    code, out, err = _cli(capsys, *argv, *flags, "--output", str(out_file))
    assert code == 1, err  # the naive agent fails its gate: the run itself went through
    _no_raw(err, "stderr")
    where = f"run {' '.join(flags)}"
    # --output: the document to the file (json for the table), the table to the terminal
    _check("table", out, LABEL, where)
    _check("json" if fmt == "table" else fmt, out_file.read_text(encoding="utf-8"), LABEL, where)
    # the failing run's block names it on one line: rich markup, emoji code and all as typed
    assert f"\n{DOMAIN} / {_one_line(LABEL)}\n" in out, where
    if fmt != "table":  # without --output the document goes to stdout instead
        _check(fmt, _cli(capsys, *argv, *flags)[1], LABEL, where)


def _poison_output(value: Any) -> Any:
    if isinstance(value, str):
        return f"{value} {OUTPUT}"
    if isinstance(value, list):
        return [*(_poison_output(v) for v in value), OUTPUT]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _poison_output(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


def _hostile_model(request: ModelRequest) -> ModelResponse:
    """The naive agent, whose submitted output also carries the hostile text (the checks quote
    it in their messages)."""
    response = respond(get_domain(DOMAIN).agents()["naive"], request)
    content = tuple(
        b.model_copy(update={"input": _poison_output(b.input)})
        if isinstance(b, ToolUseBlock) and b.name == SUBMIT_TOOL
        else b
        for b in response.content
    )
    return response.model_copy(update={"content": content})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")
    with FakeProvider(_hostile_model) as provider:
        yield provider


def _live(fake: FakeProvider, *extra: str) -> tuple[str, ...]:
    return (
        "run",
        DOMAIN,
        "--provider",
        "openai",
        "--base-url",
        fake.openai_base_url,
        "--model",
        MODEL,
        *CASES,
        "--retries",
        "0",
        *extra,
    )


@pytest.mark.parametrize(("fmt", "flags"), RUN_FORMATS, ids=RUN_IDS)
def test_a_live_run_with_a_hostile_model_escapes_every_format(
    fmt: str, flags: tuple[str, ...], fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, *_live(fake, *flags))
    assert code == 1, err
    _no_raw(err, "stderr")
    _check(fmt, out, MODEL, f"live run {' '.join(flags)}")
    if fmt == "table":
        assert f"\n{DOMAIN} / {_one_line(MODEL)}\n" in out


def test_show_of_a_live_recording_with_a_hostile_model_escapes_it(
    fake: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    live = _live(fake, "--agent", LABEL, "--record", "--recordings", str(rec), "-v")
    code, out, err = _cli(capsys, *live)
    assert code == 1, err
    _terminal(out, "live run --record -v")
    code, out, err = _cli(capsys, "show", "chase-001", "--agent", LABEL, "--recordings", str(rec))
    assert code == 0, err
    _terminal(out, "show")
    assert "\\x1b[31mRED\\x00NUL" in out and TAGS[0] in out


# --- report, history ------------------------------------------------------------------------


@pytest.fixture
def hostile_history(fake: FakeProvider, capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs of retail_ops in the history: the reference agent under the hostile label, then
    the live hostile model (its name and the check messages quoting its output carry the hostile
    text); two series, which the report diffs when both runs are named (:func:`_pair`)."""
    main(["run", DOMAIN, "--backend", "scripted", *CASES, "--label", LABEL])
    main(list(_live(fake)))
    capsys.readouterr()
    assert len(load_history(DOMAIN)) == 2


REPORT_FORMATS = ["table", "json", "markdown", "junit"]


def _pair() -> tuple[str, ...]:
    """``--base`` and ``--head``: the two runs, named, so the report diffs them."""
    first, second = load_history(DOMAIN)
    return ("--base", first.entry.run_id, "--head", second.entry.run_id)


@pytest.mark.parametrize("fmt", REPORT_FORMATS)
def test_report_of_a_hostile_history_escapes_every_format(
    fmt: str, hostile_history: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del hostile_history
    page = tmp_path / "report.html"
    code, out, err = _cli(capsys, "report", "--format", fmt, "--html", str(page), *_pair())
    assert code == 0, err
    _no_raw(err, "stderr")
    _check(fmt, out, MODEL, f"report --format {fmt}")
    if fmt == "table":
        assert "\\x1b[31mRED\\x00NUL" in out and TAGS[1] in out
    _check("html", page.read_text(encoding="utf-8"), MODEL, "report --html")
    if fmt != "table":
        doc = tmp_path / f"report.{fmt}"
        again = ("--output", str(doc), "--html", str(tmp_path / "again.html"))
        code, _, err = _cli(capsys, "report", "--format", fmt, *again, *_pair())
        assert code == 0, err
        assert doc.read_text(encoding="utf-8") == out


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_history_of_a_hostile_history_escapes_every_format(
    fmt: str, hostile_history: None, capsys: pytest.CaptureFixture[str]
) -> None:
    del hostile_history
    code, out, err = _cli(capsys, "history", "--format", fmt)
    assert code == 0, err
    _no_raw(err, "stderr")
    _check(fmt, out, MODEL, f"history --format {fmt}")


# --- the renderers themselves, lone surrogate included --------------------------------------

POISONED = {"suite", "producer", "agent", "model", "gate_reason", "message", "reason", "note"}
POISONED |= {"why", "text", "source", "output", "replay"}
POISONED_LISTS = {"causes", "replay_problems"}


def _poison(value: Any) -> Any:
    """A view with the whole hostile string (lone surrogate too) in every text field."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            if f.name in POISONED and isinstance(old, str):
                changes[f.name] = HOSTILE
            elif f.name in POISONED_LISTS:
                changes[f.name] = (HOSTILE,)
            else:
                changes[f.name] = _poison(old)
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(_poison(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return value


def test_every_renderer_escapes_hostile_views_with_a_lone_surrogate(
    hostile_history: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del hostile_history
    args = ("report", "--format", "json", "--html", str(tmp_path / "r"), *_pair())
    code, out, err = _cli(capsys, *args)
    assert code == 0, err
    view: ReportView = _poison(report_from_json(out))
    (suite,) = view.suites
    assert suite.diff is not None and suite.head is not None and suite.transcripts
    checks = {
        "report_markdown": ("markdown", report_markdown(view)),
        "report_junit": ("junit", report_junit(view)),
        "report_json": ("json", report_json(view)),
        "report_html": ("html", report_html(view)),
        "runs_markdown": ("markdown", runs_markdown(RunsView(runs=(suite.head,)))),
        "runs_junit": ("junit", runs_junit(RunsView(runs=(suite.head,)))),
        "runs_json": ("json", runs_json(RunsView(runs=(suite.head,)))),
        "history_markdown": ("markdown", history_markdown(HOSTILE, suite.history)),
        "history_json": ("json", history_json([(HOSTILE, suite.history)])),
    }
    for where, (fmt, document) in checks.items():
        _check(fmt, document, HOSTILE, where)
    report_from_json(report_json(view))  # what it wrote reads back
    svg = history_svg(HOSTILE, suite.history)
    _no_raw(svg, "history_svg")
    page = _page(svg)
    _no_injected_elements(page, "history_svg")
    _shows("".join(page.text), HOSTILE, "history_svg")


# --- what Markdown shows is exactly the text --------------------------------------------------

TRICKY = [
    "# heading",
    "1. item",
    "2) item",
    "> quote",
    "- item",
    "+ item",
    "=== under",
    "*em* **strong** _u_ __init__ a_b snake_case_",
    "`code` ``two``",
    "[x](javascript:alert(1)) ![i](x) [ref]",
    "<b>bold</b> <http://example.com> &amp; &#60;",
    "~~struck~~ ~one~",
    "x | y \\| z",
    "trailing backslash\\",
    HOSTILE,
]
STRUCTURE = {"p", "table", "thead", "tbody", "tr", "th", "td", "br"}
MD_GFM = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _shown_text(text: str) -> str:
    return text.replace("\ud800", "\ufffd").replace("\x1b", "\\x1b").replace("\x00", "\\x00")


@pytest.mark.parametrize("text", TRICKY)
def test_markdown_text_and_cells_show_exactly_the_text(text: str) -> None:
    page = _page(MD_GFM.render(markdown_text(text)))
    assert {tag for tag, _ in page.elements} <= STRUCTURE
    assert "".join(page.text).strip() == _shown_text(" ".join(text.split()))
    shown = _shown_text(text)
    as_cell = "".join(line.strip() for line in shown.splitlines())  # <br> between lines
    as_code = " ".join(shown.split())
    for cell, expected in (
        (markdown_cell(text), {as_cell}),
        (markdown_code_cell(text), {as_cell, as_code}),
    ):
        table = f"| a |\n|---|\n| {cell} |\n"
        assert [_cells(line) for line in table.splitlines()] == [1, 1, 1]
        page = _page(MD_GFM.render(table))
        assert {tag for tag, _ in page.elements} <= STRUCTURE | {"code"}
        assert "".join(page.text).replace("\n", "").removeprefix("a") in expected


def test_an_argument_that_is_not_utf8_text_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A lone surrogate (what Python makes of undecodable argv bytes) is refused at the edge,
    before any run row could fail to store it."""
    code = main(["run", "retail_ops", "--provider", "openai", "--model", "mo\ud800del"])
    err = capsys.readouterr().err
    assert code == 2
    assert "argument 6 (mo\\ud800del) is not valid UTF-8 text" in err


def test_scenarios_rows_keep_their_cells_whatever_the_agent_is_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentic_eval.backends.scripted import respond
    from agentic_eval.testing import FakeProvider
    from agentic_eval.workflow.lead_intel.agents import AGENTS

    def reference(request: ModelRequest) -> ModelResponse:
        return respond(AGENTS["reference"], request)

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    rec, label = tmp_path / "rec", "x|y <b>*bold*</b> `tick`"
    with FakeProvider(reference) as fake:
        code = main(["step", "--scenario", "synthesize.grounded", "--provider", "openai",
                     "--base-url", fake.openai_base_url, "--model", "m", "--record",
                     "--recordings", str(rec), "--agent", label])  # fmt: skip
    assert code == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["scenarios", "--recordings", str(rec)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("|") and "---" not in line]
    html = MarkdownIt("commonmark").enable("table").render("\n".join(out.splitlines()[:-1]))
    assert len(rows) == 2 and "<b>" not in html and "<em>" not in html
    cells = re.findall(r"<td>(.*?)</td>", html, re.S)
    assert len(cells) == 7 and "x|y &lt;b&gt;*bold*&lt;/b&gt; `tick`" in cells[2]


@pytest.mark.parametrize("model", ["mo\ndel", "mo\x1b[31mdel", "mo\x00del", " ", ""])
def test_a_model_name_that_is_not_one_printable_line_is_refused(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["run", "retail_ops"], ["step", "--scenario", "synthesize.grounded"]):
        code = main([*command, "--provider", "openai", "--model", model])
        err = capsys.readouterr().err
        assert code == 2 and "--model" in err and "printable text on one line" in err
