"""Building the model file from its chunks, and refusing any file whose checksum differs.

The chunks are concatenated in order into a temporary file while being hashed (1 MiB blocks); the
file is renamed into place only when its size and sha256 are exactly the catalog's, otherwise it
is deleted and the build is refused. A small JSON marker beside the file records what was
verified (size, sha256, modification time), so later starts need not re-hash 1.1 GB; a missing or
stale marker (the file's size or time changed) means the file is hashed again before use.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentic_eval.localmodel.catalog import LocalModelError, ModelSpec
from agentic_eval.localmodel.install import (
    Installer,
    Progress,
    parts_dir,
    pip_install,
)

__all__ = [
    "MARKER_SCHEMA_VERSION",
    "ChecksumMismatch",
    "MissingChunk",
    "VerifiedFile",
    "WeightsError",
    "WeightsState",
    "build_model_file",
    "ensure_weights",
    "hash_file",
    "locate_chunks",
    "marker_path",
    "model_path",
    "read_marker",
    "verify_model_file",
    "weights_state",
]

MARKER_SCHEMA_VERSION = 1
_BLOCK = 1024 * 1024

WeightsState = Literal["missing", "unverified", "stale", "verified"]
"""What is known about a model file without hashing it."""


class WeightsError(LocalModelError):
    """The model file cannot be built or used."""


class ChecksumMismatch(WeightsError):
    """The file's size or sha256 is not the catalog's: it is refused."""


class MissingChunk(WeightsError):
    """An installed chunk package does not hold its chunk where the catalog says."""


@dataclass(frozen=True)
class VerifiedFile:
    """A model file whose size and sha256 match the catalog."""

    path: Path
    """The file."""
    size: int
    """Its size in bytes."""
    sha256: str
    """Its sha256 (lowercase hex)."""
    mtime_ns: int
    """Its modification time when verified."""


def model_path(spec: ModelSpec, root: Path) -> Path:
    """Where the joined model file lives in the cache."""
    return root / "models" / spec.filename


def marker_path(spec: ModelSpec, root: Path) -> Path:
    """The verification marker beside the model file."""
    path = model_path(spec, root)
    return path.with_name(path.name + ".verified.json")


def hash_file(path: Path) -> tuple[int, str]:
    """Size and sha256 of a file, read in 1 MiB blocks.

    Args:
        path: The file.

    Returns:
        ``(size, sha256 hex)``.
    """
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def _refusal(spec: ModelSpec, path: Path, size: int, sha256: str) -> ChecksumMismatch:
    return ChecksumMismatch(
        f"refusing {spec.name}: {path} has size {size} and sha256 {sha256}; "
        f"expected size {spec.size} and sha256 {spec.sha256}"
    )


def locate_chunks(spec: ModelSpec, target: Path) -> list[Path]:
    """The chunk files of an installed model, in order.

    The path comes from the catalog rather than from importing the anonymous package's code.

    Args:
        spec: The model.
        target: Where its chunk packages were installed.

    Returns:
        One path per chunk.

    Raises:
        MissingChunk: A chunk file is absent.
    """
    paths: list[Path] = []
    for index, chunk in enumerate(spec.chunks, start=1):
        path = target.joinpath(*chunk.path.split("/"))
        if not path.is_file():
            raise MissingChunk(
                f"chunk {index}/{len(spec.chunks)} of {spec.name} ({chunk.requirement}) "
                f"is missing: no file at {path}"
            )
        paths.append(path)
    return paths


def build_model_file(
    spec: ModelSpec, chunks: Sequence[Path], dest: Path, progress: Progress | None = None
) -> VerifiedFile:
    """Concatenate chunks into ``dest``, hashing as it goes; keep it only if it verifies.

    Args:
        spec: The model (expected size and sha256).
        chunks: The chunk files, in order.
        dest: The model file to create (replaced only on success).
        progress: Receives one line per chunk.

    Returns:
        The verified file.

    Raises:
        ChecksumMismatch: The joined size or sha256 differs (nothing is left behind).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    tmp.chmod(0o644)  # mkstemp's 0600 would make the cache private by accident
    digest = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for index, chunk in enumerate(chunks, start=1):
                with chunk.open("rb") as fh:
                    while block := fh.read(_BLOCK):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
                if progress is not None:
                    progress(f"joined chunk {index}/{len(chunks)} ({size / 2**20:.0f} MiB)")
        actual = digest.hexdigest()
        if size != spec.size or actual != spec.sha256:
            raise _refusal(spec, dest, size, actual)
        tmp.replace(dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    verified = VerifiedFile(dest, size, actual, dest.stat().st_mtime_ns)
    return verified


def _write_marker(spec: ModelSpec, root: Path, verified: VerifiedFile) -> None:
    marker = marker_path(spec, root)
    payload = {
        "schema_version": MARKER_SCHEMA_VERSION,
        "filename": spec.filename,
        "size": verified.size,
        "sha256": verified.sha256,
        "mtime_ns": verified.mtime_ns,
    }
    fd, tmp = tempfile.mkstemp(dir=marker.parent, prefix=f".{marker.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, sort_keys=True)
            fh.write("\n")
        Path(tmp).replace(marker)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_marker(spec: ModelSpec, root: Path) -> dict[str, Any] | None:
    """The verification marker's content, or None when absent or unreadable."""
    try:
        data = json.loads(marker_path(spec, root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None  # pyright: ignore[reportUnknownVariableType]


def weights_state(spec: ModelSpec, root: Path) -> WeightsState:
    """What is known about the model file without hashing it.

    Args:
        spec: The model.
        root: The cache root.

    Returns:
        ``missing`` (no file), ``unverified`` (no readable marker), ``stale`` (the marker does
        not describe this file or this catalog entry) or ``verified``.
    """
    path = model_path(spec, root)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return "missing"
    marker = read_marker(spec, root)
    if marker is None:
        return "unverified"
    fresh = (
        marker.get("schema_version") == MARKER_SCHEMA_VERSION
        and marker.get("filename") == spec.filename
        and marker.get("size") == stat.st_size == spec.size
        and marker.get("sha256") == spec.sha256
        and marker.get("mtime_ns") == stat.st_mtime_ns
    )
    return "verified" if fresh else "stale"


def verify_model_file(spec: ModelSpec, root: Path) -> VerifiedFile:
    """Hash the model file and record the marker if it matches the catalog.

    Args:
        spec: The model.
        root: The cache root.

    Returns:
        The verified file.

    Raises:
        WeightsError: The file is missing.
        ChecksumMismatch: Its size or sha256 differs (the marker is removed; the file is kept
            for inspection but never used).
    """
    path = model_path(spec, root)
    if not path.is_file():
        raise WeightsError(f"{spec.name} is not installed: no file at {path}")
    before = path.stat().st_mtime_ns
    size, sha256 = hash_file(path)
    if size != spec.size or sha256 != spec.sha256:
        marker_path(spec, root).unlink(missing_ok=True)
        refusal = _refusal(spec, path, size, sha256)
        raise ChecksumMismatch(f"{refusal} (delete the file to rebuild it)")
    verified = VerifiedFile(path, size, sha256, before)
    _write_marker(spec, root, verified)
    return verified


def ensure_weights(
    spec: ModelSpec,
    root: Path,
    *,
    installer: Installer = pip_install,
    progress: Progress | None = None,
) -> Path:
    """The verified model file, installing and joining its chunks first when needed.

    A file with a fresh marker is used as is; an unmarked or stale file is hashed again; a
    missing file is built from the pinned chunk packages (installed into the cache, removed once
    the file verifies).

    Args:
        spec: The model.
        root: The cache root.
        installer: Installs requirements into a folder (tests pass a double).
        progress: Receives progress lines.

    Returns:
        The model file's path.

    Raises:
        ChecksumMismatch: The existing or joined file does not match the catalog.
        MissingChunk: An installed package lacks its chunk.
        InstallError: pip failed.
    """

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    path = model_path(spec, root)
    state = weights_state(spec, root)
    if state == "verified":
        return path
    if state != "missing":
        say(f"verifying {path} (sha256 of {spec.size / 2**30:.2f} GiB)")
        started = time.monotonic()
        verify_model_file(spec, root)
        say(f"verified in {time.monotonic() - started:.1f}s")
        return path
    target = parts_dir(spec, root)
    try:
        chunks = locate_chunks(spec, target)
    except MissingChunk:
        say(f"installing {len(spec.chunks)} weight packages for {spec.name} into {target}")
        started = time.monotonic()
        installer(spec.requirements, target, say)
        say(f"installed in {time.monotonic() - started:.1f}s")
        chunks = locate_chunks(spec, target)
    say(f"joining {len(chunks)} chunks into {path}")
    started = time.monotonic()
    try:
        verified = build_model_file(spec, chunks, path, say)
    except ChecksumMismatch:
        shutil.rmtree(target, ignore_errors=True)  # the next attempt reinstalls from scratch
        raise
    _write_marker(spec, root, verified)
    elapsed = time.monotonic() - started
    say(f"joined and verified in {elapsed:.1f}s: {verified.size} bytes, sha256 {verified.sha256}")
    shutil.rmtree(target, ignore_errors=True)
    return path
