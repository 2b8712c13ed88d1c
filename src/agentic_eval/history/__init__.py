"""Scorecard history per suite, run-to-run diffs and baselines.

Every run writes a :class:`HistoryEntry` (the scorecard, the run configuration, what produced it
and fingerprints of what else its verdicts depend on) to
``$AGENTIC_EVAL_HISTORY_DIR/<suite>/<UTC timestamp>_<run id>.json``; :func:`diff_runs` compares
two of them case by case and says what else changed.
"""

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
