"""Write an Inspect eval log as ``.json`` (one document) or ``.eval`` (a zip of JSON members).

The ``.eval`` layout is the one Inspect's own recorder leaves when a run finishes:
``_journal/start.json`` (version, eval spec, plan), one ``samples/<id>_epoch_<n>.json`` per
sample, ``summaries.json`` (one summary per sample) and ``header.json`` (the log without its
samples). The bytes are stable: members in a fixed order, stamped with the run's start time.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from agentic_eval.exports.inspect.build import InspectLog
from agentic_eval.exports.inspect.source import ExportError

InspectFormat = Literal["eval", "json"]
FORMATS: tuple[InspectFormat, ...] = ("eval", "json")


def _json(value: Any, indent: int | None = None) -> bytes:
    """Strict JSON (Inspect's reader refuses NaN and infinities, so they are refused here)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError as exc:
        raise ExportError(f"the log cannot be written as strict JSON: {exc}") from None
    return text.encode("utf-8")


def log_name(log: InspectLog, fmt: InspectFormat) -> str:
    """Inspect's file name for a log: ``<created>_<task>_<run id>.<format>`` (the time with
    ``-`` for ``:``, as Inspect names its own logs)."""
    spec = log.header["eval"]
    created = str(spec["created"]).split(".")[0].replace(":", "-")
    task = str(spec["task"]).replace("_", "-").replace("/", "-")
    return f"{created}_{task}_{spec['run_id']}.{fmt}"


def _zip_time(log: InspectLog) -> tuple[int, int, int, int, int, int]:
    moment = datetime.fromisoformat(str(log.header["eval"]["created"]))
    year = max(moment.year, 1980)  # the zip format starts in 1980
    return (year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


def eval_bytes_members(log: InspectLog) -> list[tuple[str, bytes]]:
    """The members of the ``.eval`` zip, in the order they are written."""
    header = log.header
    start = {"version": header["version"], "eval": header["eval"], "plan": header["plan"]}
    members = [("_journal/start.json", _json(start))]
    for sample in log.samples:
        members.append((f"samples/{sample['id']}_epoch_{sample['epoch']}.json", _json(sample)))
    members.append(("summaries.json", _json(list(log.summaries))))
    members.append(("header.json", _json(header)))
    return members


def _atomic(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_log(log: InspectLog, out_dir: Path, fmt: InspectFormat = "eval") -> Path:
    """Write ``log`` into ``out_dir`` (created) in format ``fmt``; return the file written.

    Raises:
        ExportError: A value is not strict JSON (NaN or an infinity).
        OSError: The folder or the file cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / log_name(log, fmt)
    if fmt == "json":
        data = _json(log.whole(), indent=2)
        _atomic(path, lambda out: out.write(data))
        return path
    stamp = _zip_time(log)
    members = eval_bytes_members(log)

    def write_zip(out: IO[bytes]) -> None:
        with zipfile.ZipFile(out, "w") as z:
            for name, data in members:
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                z.writestr(info, data)

    _atomic(path, write_zip)
    return path
