"""A README section's example, read as the tests that follow the README run it: its Python file,
its console session, and what each command printed against what the README shows."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def section(heading: str) -> str:
    """The README's text from ``heading`` (a whole heading line, ``## ...`` or ``### ...``) to
    the next heading of any level."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n") + 1
    end = re.search(r"\n#{2,} ", text[start + 1 :])
    return text[start : start + 1 + end.start()] if end else text[start:]


def session(text: str) -> list[tuple[str, list[str]]]:
    """The one console block of ``text``: each ``$ `` command and the lines shown after it."""
    (console,) = re.findall(r"```console\n(.*?)```", text, re.S)
    commands: list[tuple[str, list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    return commands


def python_file(text: str) -> tuple[str, str]:
    """The one Python block of ``text``: (the file name its first line names, its text)."""
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    return code.splitlines()[0].removeprefix("# ").strip(), code


def shown(out: str) -> list[str]:
    """What a command printed, as lines compared with the README's: trailing blanks dropped,
    and the warnings a run prints to stderr on the side left out."""
    lines = [
        line.rstrip() for line in out.splitlines() if not line.startswith("agentic-eval: warning:")
    ]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def line_matches(expected: str, actual: str) -> bool:
    """A line as shown, where ``...`` inside a line stands for any text."""
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` is ``expected``, a line ``...`` standing for any lines (none at the end)."""
    expected = [e.rstrip() for e in expected]
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return (
        bool(actual) and line_matches(expected[0], actual[0]) and matches(expected[1:], actual[1:])
    )
