"""Inspect eval logs (UK AISI's inspect_ai) from our runs, written without inspect_ai."""

from __future__ import annotations

from pathlib import Path

from agentic_eval.exports.inspect.build import InspectLog, build_log, sample_id
from agentic_eval.exports.inspect.source import (
    ExportError,
    StoredRun,
    StoredSample,
    UnknownRunError,
    load_run,
    open_store,
    pick_run,
)
from agentic_eval.exports.inspect.write import FORMATS, InspectFormat, log_name, write_log
from agentic_eval.store.db import Store


def export_run(
    store: Store,
    run_id: str | None,
    out_dir: Path,
    fmt: InspectFormat = "eval",
    base: Path | None = None,
) -> Path:
    """Write the Inspect eval log of run ``run_id`` (None: the latest run) into ``out_dir``.

    Args:
        store: The store holding the run.
        run_id: The run's id, or None for the store's latest run.
        out_dir: Folder to write into (created).
        fmt: ``eval`` (Inspect's zip format) or ``json``.
        base: Where relative recording paths are read from (default: the working directory).

    Returns:
        The file written.

    Raises:
        UnknownRunError: No such run.
        ExportError: A transcript of the run is missing or changed since the run.
        OSError: The file cannot be written.
    """
    run = pick_run(store, run_id)
    return write_log(build_log(load_run(store, run, base)), out_dir, fmt)


__all__ = [
    "FORMATS",
    "ExportError",
    "InspectFormat",
    "InspectLog",
    "StoredRun",
    "StoredSample",
    "UnknownRunError",
    "build_log",
    "export_run",
    "load_run",
    "log_name",
    "open_store",
    "pick_run",
    "sample_id",
    "write_log",
]
