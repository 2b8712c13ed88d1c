"""Other tools' formats: our runs as Inspect eval logs (``exports.inspect``)."""

from __future__ import annotations

from agentic_eval.exports.inspect import ExportError, InspectFormat, UnknownRunError, export_run

__all__ = ["ExportError", "InspectFormat", "UnknownRunError", "export_run"]
