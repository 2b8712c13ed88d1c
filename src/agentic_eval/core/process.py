"""How a process names itself on the rows it holds (runs, claims), and whether it still lives."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

_TAG = re.compile(r"^(?P<host>.+) pid (?P<pid>\d+)$")


def this_process() -> str:
    """Host and pid: ``<host> pid <pid>``."""
    return f"{socket.gethostname()} pid {os.getpid()}"


def process_gone(tag: str | None) -> bool:
    """True only when ``tag`` names a process of this host that no longer exists (a process
    elsewhere, or a tag of another form, is never taken as gone)."""
    m = _TAG.match(tag or "")
    if m is None or m["host"] != socket.gethostname():
        return False
    pid = int(m["pid"])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # it exists, under another user
        return False
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed child its parent has not reaped yet is gone too."""
    try:
        with Path(f"/proc/{pid}/stat").open(encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
