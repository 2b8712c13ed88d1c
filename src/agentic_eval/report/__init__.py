"""Reports: view models built from the history, then renderers (Markdown, JUnit XML, JSON, HTML).

Terminal tables live in the CLI; everything here returns text.

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.report.build import (
        TranscriptLookup,
        case_view,
        change_view,
        diff_view,
        point_view,
        run_view,
        runs_view,
        suite_report,
        summary_view,
    )
    from agentic_eval.report.escape import script_json
    from agentic_eval.report.html import report_html
    from agentic_eval.report.jsonfmt import (
        ReportFormatError,
        history_json,
        report_data,
        report_from_json,
        report_json,
        runs_from_json,
        runs_json,
    )
    from agentic_eval.report.junit import report_junit, runs_junit
    from agentic_eval.report.markdown import history_markdown, report_markdown, runs_markdown
    from agentic_eval.report.plot import history_svg
    from agentic_eval.report.text import (
        counts_line,
        flip_lines,
        headline,
        rate,
        run_line,
        short_id,
        when,
    )
    from agentic_eval.report.transcripts import TranscriptFinder, open_store, transcript_view
    from agentic_eval.report.views import (
        REPORT_SCHEMA_VERSION,
        BlockView,
        CaseView,
        ChangeView,
        CheckView,
        DiffView,
        FlipView,
        PointView,
        ReportView,
        RunSummaryView,
        RunsView,
        RunView,
        SuiteReport,
        TranscriptView,
        TurnView,
    )

_WHERE: dict[str, tuple[str, str]] = {
    "TranscriptLookup": ("agentic_eval.report.build", "TranscriptLookup"),
    "case_view": ("agentic_eval.report.build", "case_view"),
    "change_view": ("agentic_eval.report.build", "change_view"),
    "diff_view": ("agentic_eval.report.build", "diff_view"),
    "point_view": ("agentic_eval.report.build", "point_view"),
    "run_view": ("agentic_eval.report.build", "run_view"),
    "runs_view": ("agentic_eval.report.build", "runs_view"),
    "suite_report": ("agentic_eval.report.build", "suite_report"),
    "summary_view": ("agentic_eval.report.build", "summary_view"),
    "script_json": ("agentic_eval.report.escape", "script_json"),
    "report_html": ("agentic_eval.report.html", "report_html"),
    "ReportFormatError": ("agentic_eval.report.jsonfmt", "ReportFormatError"),
    "history_json": ("agentic_eval.report.jsonfmt", "history_json"),
    "report_data": ("agentic_eval.report.jsonfmt", "report_data"),
    "report_from_json": ("agentic_eval.report.jsonfmt", "report_from_json"),
    "report_json": ("agentic_eval.report.jsonfmt", "report_json"),
    "runs_from_json": ("agentic_eval.report.jsonfmt", "runs_from_json"),
    "runs_json": ("agentic_eval.report.jsonfmt", "runs_json"),
    "report_junit": ("agentic_eval.report.junit", "report_junit"),
    "runs_junit": ("agentic_eval.report.junit", "runs_junit"),
    "history_markdown": ("agentic_eval.report.markdown", "history_markdown"),
    "report_markdown": ("agentic_eval.report.markdown", "report_markdown"),
    "runs_markdown": ("agentic_eval.report.markdown", "runs_markdown"),
    "history_svg": ("agentic_eval.report.plot", "history_svg"),
    "counts_line": ("agentic_eval.report.text", "counts_line"),
    "flip_lines": ("agentic_eval.report.text", "flip_lines"),
    "headline": ("agentic_eval.report.text", "headline"),
    "rate": ("agentic_eval.report.text", "rate"),
    "run_line": ("agentic_eval.report.text", "run_line"),
    "short_id": ("agentic_eval.report.text", "short_id"),
    "when": ("agentic_eval.report.text", "when"),
    "TranscriptFinder": ("agentic_eval.report.transcripts", "TranscriptFinder"),
    "open_store": ("agentic_eval.report.transcripts", "open_store"),
    "transcript_view": ("agentic_eval.report.transcripts", "transcript_view"),
    "REPORT_SCHEMA_VERSION": ("agentic_eval.report.views", "REPORT_SCHEMA_VERSION"),
    "BlockView": ("agentic_eval.report.views", "BlockView"),
    "CaseView": ("agentic_eval.report.views", "CaseView"),
    "ChangeView": ("agentic_eval.report.views", "ChangeView"),
    "CheckView": ("agentic_eval.report.views", "CheckView"),
    "DiffView": ("agentic_eval.report.views", "DiffView"),
    "FlipView": ("agentic_eval.report.views", "FlipView"),
    "PointView": ("agentic_eval.report.views", "PointView"),
    "ReportView": ("agentic_eval.report.views", "ReportView"),
    "RunSummaryView": ("agentic_eval.report.views", "RunSummaryView"),
    "RunsView": ("agentic_eval.report.views", "RunsView"),
    "RunView": ("agentic_eval.report.views", "RunView"),
    "SuiteReport": ("agentic_eval.report.views", "SuiteReport"),
    "TranscriptView": ("agentic_eval.report.views", "TranscriptView"),
    "TurnView": ("agentic_eval.report.views", "TurnView"),
}

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "BlockView",
    "CaseView",
    "ChangeView",
    "CheckView",
    "DiffView",
    "FlipView",
    "PointView",
    "ReportFormatError",
    "ReportView",
    "RunSummaryView",
    "RunView",
    "RunsView",
    "SuiteReport",
    "TranscriptFinder",
    "TranscriptLookup",
    "TranscriptView",
    "TurnView",
    "case_view",
    "change_view",
    "counts_line",
    "diff_view",
    "flip_lines",
    "headline",
    "history_json",
    "history_markdown",
    "history_svg",
    "open_store",
    "point_view",
    "rate",
    "report_data",
    "report_from_json",
    "report_html",
    "report_json",
    "report_junit",
    "report_markdown",
    "run_line",
    "run_view",
    "runs_from_json",
    "runs_json",
    "runs_junit",
    "runs_markdown",
    "runs_view",
    "script_json",
    "short_id",
    "suite_report",
    "summary_view",
    "transcript_view",
    "when",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
