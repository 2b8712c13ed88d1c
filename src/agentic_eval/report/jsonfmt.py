"""JSON: the view models as they are, and back (``report_from_json(report_json(v)) == v``).

Text is written through :func:`agentic_eval.report.escape.json_text` (canonical JSON; a lone
surrogate, which no UTF-8 document can hold, becomes U+FFFD)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from agentic_eval.report.escape import json_text
from agentic_eval.report.views import REPORT_SCHEMA_VERSION, PointView, ReportView, RunsView

T = TypeVar("T")
_REPORT = TypeAdapter(ReportView)
_RUNS = TypeAdapter(RunsView)
_POINTS = TypeAdapter(tuple[PointView, ...])


class ReportFormatError(ValueError):
    """A JSON document that is not a report of this version."""


def _text(data: Any) -> str:
    return json_text(data, indent=True) + "\n"


def report_data(view: ReportView) -> dict[str, Any]:
    """The report as JSON data (what ``--format json`` prints and the HTML page embeds)."""
    return _REPORT.dump_python(view, mode="json")


def report_json(view: ReportView) -> str:
    """The report as canonical JSON text."""
    return _text(report_data(view))


def _load(adapter: TypeAdapter[T], text: str | bytes, what: str) -> T:
    try:
        return adapter.validate_json(text)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise ReportFormatError(f"not a {what} document: {loc}: {err['msg']}") from None


def _check_version(view: ReportView | RunsView, what: str) -> None:
    if view.schema_version != REPORT_SCHEMA_VERSION:
        raise ReportFormatError(
            f"{what} format version {view.schema_version} is not the supported "
            f"{REPORT_SCHEMA_VERSION}"
        )


def report_from_json(text: str | bytes) -> ReportView:
    """Read a report back.

    Raises:
        ReportFormatError: When the text is not a report of this version.
    """
    view = _load(_REPORT, text, "report")
    _check_version(view, "report")
    return view


def runs_json(view: RunsView) -> str:
    """The runs of one ``run`` command as canonical JSON text."""
    return _text(_RUNS.dump_python(view, mode="json"))


def runs_from_json(text: str | bytes) -> RunsView:
    """Read ``runs_json`` output back.

    Raises:
        ReportFormatError: When the text is not a runs document of this version.
    """
    view = _load(_RUNS, text, "runs")
    _check_version(view, "runs")
    return view


def history_json(listing: Sequence[tuple[str, Sequence[PointView]]]) -> str:
    """Suites' histories (each newest first) as one canonical JSON document::

    {"schema_version": 1, "suites": [{"suite": ..., "runs": [...]}]}
    """
    data = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "suites": [
            {"suite": suite, "runs": _POINTS.dump_python(tuple(points), mode="json")}
            for suite, points in listing
        ],
    }
    return _text(data)
