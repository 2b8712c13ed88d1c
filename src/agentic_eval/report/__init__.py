"""Reports: view models built from the history, then renderers (Markdown, JUnit XML, JSON, HTML).

Terminal tables live in the CLI; everything here returns text.
"""

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
