"""A one-file domain's case rows are JSON values, as the agent sees them and the case file keeps
them: anything else (an object, bytes, a set, a tuple, a Decimal, NaN, a key that is not text, a
lone surrogate) is one line naming the case and the path inside the row, exit 2, never an
internal error and never a silent change (NaN to null, a set to a list)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.domains import unregister_domain

EVAL = """
from decimal import Decimal
from pydantic import BaseModel
import agentic_eval


class Out(BaseModel):
    n: int


rows = agentic_eval.domain(
    "rows", system_prompt="s", instruction="i", output=Out, cases={cases}
)


@rows.answer_key
def key(inputs):
    return {{"n": 1}}
"""


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    yield
    unregister_domain("rows")


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str]:
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    return code, out + err


ONLY = "(text, finite numbers, true/false, null, lists and objects with text keys only)"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("object()", "case a, v: object is not a JSON value"),
        ('b"x"', "case a, v: bytes is not a JSON value"),
        ('{1: "a"}', "case a, v: the key 1 is not text"),
        ('Decimal("1.5")', "case a, v: Decimal is not a JSON value"),
        ("(1, 2)", "case a, v: tuple is not a JSON value"),
        ('float("inf")', "case a, v: inf is not a JSON number"),
        ('[1, {"k": float("nan")}]', "case a, v[1].k: nan is not a JSON number"),
        ('{"a": {"b": set()}}', "case a, v.a.b: set is not a JSON value"),
        ('"\\ud800"', "case a, v: text with a lone surrogate is not JSON text"),
        ("lambda: 1", "case a, v: function is not a JSON value"),
    ],
)
def test_a_row_value_that_is_not_json_is_one_line_naming_case_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, says: str
) -> None:
    path = tmp_path / "rows_eval.py"
    path.write_text(EVAL.format(cases=f'[{{"id": "a", "v": {value}}}]'), encoding="utf-8")
    code, out = _cli(capsys, f"agentic-eval goldens write {path}")
    assert code == 2, out
    (line,) = out.strip().splitlines()
    assert line == (
        f"agentic-eval: error: {path}:11: importing the eval file raised ValueError: "
        f"domain rows: {says} {ONLY}"
    )
    assert not (tmp_path / "rows.cases.json").exists()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"id": "x", "v": NaN}', "1: not JSON: NaN is not a JSON number"),
        ('{"id": "x", "v": -Infinity}', "1: not JSON: -Infinity is not a JSON number"),
        ('{"id": "x", "v": 1e999}', "1: case x, v: inf is not a JSON number"),
        (
            '{"id": "x", "v": "\\ud800"}',
            "1: case x, v: text with a lone surrogate is not JSON text",
        ),
    ],
)
def test_a_jsonl_row_that_is_not_strict_json_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, says: str
) -> None:
    (tmp_path / "rows.jsonl").write_text(line + "\n", encoding="utf-8")
    path = tmp_path / "rows_eval.py"
    path.write_text(EVAL.format(cases='"rows.jsonl"'), encoding="utf-8")
    code, out = _cli(capsys, f"agentic-eval goldens write {path}")
    assert code == 2, out
    assert out.strip().splitlines() == [f"agentic-eval: error: {tmp_path / 'rows.jsonl'}:{says}"]


def test_json_values_pass_as_they_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = '{"id": "a", "v": [1, 2.5, -3, true, null, "é", {"k": [10000000000000000000000]}]}'
    path = tmp_path / "rows_eval.py"
    path.write_text(EVAL.format(cases=f"[{row}]").replace("true", "True").replace("null", "None"))
    assert _cli(capsys, f"agentic-eval goldens write {path}")[0] == 0
    code, out = _cli(capsys, f"agentic-eval goldens check {path}")
    assert code == 0, out
