"""Scorecard history per suite, run-to-run diffs and baselines.

Every run writes a :class:`HistoryEntry` (the scorecard, the run configuration, what produced it
and fingerprints of what else its verdicts depend on) to
``$AGENTIC_EVAL_HISTORY_DIR/<suite>/<UTC timestamp>_<run id>.json``; :func:`diff_runs` compares
two of them case by case and says what else changed.

The names are loaded on first use (PEP 562): importing one submodule does not import the
rest of the package with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval.core.lazy import lazy_exports

if TYPE_CHECKING:
    from agentic_eval.history.baseline import (
        Baseline,
        baseline_ids,
        baseline_path,
        promote,
        read_baselines,
    )
    from agentic_eval.history.build import entry_from_session, record_session
    from agentic_eval.history.diff import (
        CHANGE_KINDS,
        CaseChange,
        ChangeKind,
        CheckFlip,
        RunDiff,
        check_flips,
        diff_runs,
        explained_by_checks,
    )
    from agentic_eval.history.entry import (
        HISTORY_SCHEMA_VERSION,
        Fingerprints,
        HistoryEntry,
        Producer,
        RecordingRef,
        ReplayResult,
        RunConfig,
        describe_producer,
    )
    from agentic_eval.history.explain import explain, replay_note, same_recording
    from agentic_eval.history.files import (
        HISTORY_DIR_ENV,
        HISTORY_FOLDER,
        HistoryError,
        StoredEntry,
        entry_name,
        history_dir,
        history_suites,
        load_history,
        read_entry,
        write_entry,
    )
    from agentic_eval.history.fingerprints import fingerprints, recording_ref, tool_specs_seen
    from agentic_eval.history.gitinfo import git_commit
    from agentic_eval.history.resolve import find_run
    from agentic_eval.history.series import (
        BASELINE_REF,
        SeriesPick,
        check_agents,
        group_series,
        pick_series,
        series_label,
    )

_WHERE: dict[str, tuple[str, str]] = {
    "Baseline": ("agentic_eval.history.baseline", "Baseline"),
    "baseline_ids": ("agentic_eval.history.baseline", "baseline_ids"),
    "baseline_path": ("agentic_eval.history.baseline", "baseline_path"),
    "promote": ("agentic_eval.history.baseline", "promote"),
    "read_baselines": ("agentic_eval.history.baseline", "read_baselines"),
    "entry_from_session": ("agentic_eval.history.build", "entry_from_session"),
    "record_session": ("agentic_eval.history.build", "record_session"),
    "CHANGE_KINDS": ("agentic_eval.history.diff", "CHANGE_KINDS"),
    "CaseChange": ("agentic_eval.history.diff", "CaseChange"),
    "ChangeKind": ("agentic_eval.history.diff", "ChangeKind"),
    "CheckFlip": ("agentic_eval.history.diff", "CheckFlip"),
    "RunDiff": ("agentic_eval.history.diff", "RunDiff"),
    "check_flips": ("agentic_eval.history.diff", "check_flips"),
    "diff_runs": ("agentic_eval.history.diff", "diff_runs"),
    "explained_by_checks": ("agentic_eval.history.diff", "explained_by_checks"),
    "HISTORY_SCHEMA_VERSION": ("agentic_eval.history.entry", "HISTORY_SCHEMA_VERSION"),
    "Fingerprints": ("agentic_eval.history.entry", "Fingerprints"),
    "HistoryEntry": ("agentic_eval.history.entry", "HistoryEntry"),
    "Producer": ("agentic_eval.history.entry", "Producer"),
    "RecordingRef": ("agentic_eval.history.entry", "RecordingRef"),
    "ReplayResult": ("agentic_eval.history.entry", "ReplayResult"),
    "RunConfig": ("agentic_eval.history.entry", "RunConfig"),
    "describe_producer": ("agentic_eval.history.entry", "describe_producer"),
    "explain": ("agentic_eval.history.explain", "explain"),
    "replay_note": ("agentic_eval.history.explain", "replay_note"),
    "same_recording": ("agentic_eval.history.explain", "same_recording"),
    "HISTORY_DIR_ENV": ("agentic_eval.history.files", "HISTORY_DIR_ENV"),
    "HISTORY_FOLDER": ("agentic_eval.history.files", "HISTORY_FOLDER"),
    "HistoryError": ("agentic_eval.history.files", "HistoryError"),
    "StoredEntry": ("agentic_eval.history.files", "StoredEntry"),
    "entry_name": ("agentic_eval.history.files", "entry_name"),
    "history_dir": ("agentic_eval.history.files", "history_dir"),
    "history_suites": ("agentic_eval.history.files", "history_suites"),
    "load_history": ("agentic_eval.history.files", "load_history"),
    "read_entry": ("agentic_eval.history.files", "read_entry"),
    "write_entry": ("agentic_eval.history.files", "write_entry"),
    "fingerprints": ("agentic_eval.history.fingerprints", "fingerprints"),
    "recording_ref": ("agentic_eval.history.fingerprints", "recording_ref"),
    "tool_specs_seen": ("agentic_eval.history.fingerprints", "tool_specs_seen"),
    "git_commit": ("agentic_eval.history.gitinfo", "git_commit"),
    "find_run": ("agentic_eval.history.resolve", "find_run"),
    "BASELINE_REF": ("agentic_eval.history.series", "BASELINE_REF"),
    "SeriesPick": ("agentic_eval.history.series", "SeriesPick"),
    "check_agents": ("agentic_eval.history.series", "check_agents"),
    "group_series": ("agentic_eval.history.series", "group_series"),
    "pick_series": ("agentic_eval.history.series", "pick_series"),
    "series_label": ("agentic_eval.history.series", "series_label"),
}

__all__ = [
    "BASELINE_REF",
    "CHANGE_KINDS",
    "HISTORY_DIR_ENV",
    "HISTORY_FOLDER",
    "HISTORY_SCHEMA_VERSION",
    "Baseline",
    "CaseChange",
    "ChangeKind",
    "CheckFlip",
    "Fingerprints",
    "HistoryEntry",
    "HistoryError",
    "Producer",
    "RecordingRef",
    "ReplayResult",
    "RunConfig",
    "RunDiff",
    "SeriesPick",
    "StoredEntry",
    "baseline_ids",
    "baseline_path",
    "check_agents",
    "check_flips",
    "describe_producer",
    "diff_runs",
    "entry_from_session",
    "entry_name",
    "explain",
    "explained_by_checks",
    "find_run",
    "fingerprints",
    "git_commit",
    "group_series",
    "history_dir",
    "history_suites",
    "load_history",
    "pick_series",
    "promote",
    "read_baselines",
    "read_entry",
    "record_session",
    "recording_ref",
    "replay_note",
    "same_recording",
    "series_label",
    "tool_specs_seen",
    "write_entry",
]


__getattr__ = lazy_exports(__name__, _WHERE, globals())
