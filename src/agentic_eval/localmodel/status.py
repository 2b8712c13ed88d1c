"""What is installed in the local-model cache, and whether it is verified."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentic_eval.localmodel.catalog import CATALOG, RUNTIME, ModelSpec, RuntimeSpec
from agentic_eval.localmodel.gguf import GGUFError, read_gguf_metadata
from agentic_eval.localmodel.install import runtime_dir, runtime_installed
from agentic_eval.localmodel.label import agent_label
from agentic_eval.localmodel.template import (
    TemplateDerivationError,
    derive_fenced_json_template,
    template_digest,
)
from agentic_eval.localmodel.weights import (
    ChecksumMismatch,
    WeightsState,
    model_path,
    read_marker,
    verify_model_file,
    weights_state,
)

__all__ = ["ModelStatus", "RuntimeStatus", "model_status", "runtime_status"]


@dataclass(frozen=True)
class RuntimeStatus:
    """The runtime's install state."""

    requirement: str
    """The pinned requirement."""
    installed: bool
    """Whether its install target holds the pinned version."""
    path: Path
    """Its install target."""


@dataclass(frozen=True)
class ModelStatus:
    """One catalog model's install state."""

    name: str
    """Catalog name."""
    state: WeightsState | Literal["mismatch"]
    """``missing``, ``unverified``, ``stale``, ``verified``, or ``mismatch`` (hashed: refused)."""
    path: Path
    """Where the model file is (or would be)."""
    size: int | None
    """The file's size when present."""
    sha256: str | None
    """The verified sha256 (from the marker, or from hashing with ``verify``)."""
    expected_sha256: str
    """The catalog's sha256."""
    label: str | None
    """The agent label, when the file is verified and its template derives."""
    detail: str = ""
    """Why the state is not ``verified``, in one line (empty when it is)."""


def runtime_status(root: Path, runtime: RuntimeSpec = RUNTIME) -> RuntimeStatus:
    """Whether the pinned runtime is installed in the cache.

    Args:
        root: The cache root.
        runtime: The runtime.

    Returns:
        Its status.
    """
    return RuntimeStatus(
        requirement=runtime.requirement,
        installed=runtime_installed(runtime, root),
        path=runtime_dir(runtime, root),
    )


def model_status(
    root: Path,
    *,
    catalog: Mapping[str, ModelSpec] | None = None,
    runtime: RuntimeSpec = RUNTIME,
    verify: bool = False,
) -> list[ModelStatus]:
    """Each catalog model's state, hashing the files only when ``verify`` is set.

    Args:
        root: The cache root.
        catalog: The models (default :data:`CATALOG`).
        runtime: The runtime (for the label).
        verify: Hash every present file (and refresh its marker when it matches).

    Returns:
        One status per model, in catalog order.
    """
    entries = CATALOG if catalog is None else catalog
    return [_one(spec, root, runtime, verify) for spec in entries.values()]


def _one(spec: ModelSpec, root: Path, runtime: RuntimeSpec, verify: bool) -> ModelStatus:
    path = model_path(spec, root)
    state: WeightsState | Literal["mismatch"] = weights_state(spec, root)
    detail = ""
    if verify and state != "missing":
        try:
            verify_model_file(spec, root)
            state = "verified"
        except ChecksumMismatch as exc:
            state, detail = "mismatch", str(exc)
    size = path.stat().st_size if state != "missing" else None
    marker = read_marker(spec, root) if state == "verified" else None
    sha256 = str(marker["sha256"]) if marker and "sha256" in marker else None
    label = None
    if state == "verified":
        try:
            meta = read_gguf_metadata(path, keys=("tokenizer.chat_template",))
            original = meta.chat_template or ""
            label = agent_label(
                spec, runtime, template_digest(derive_fenced_json_template(original))
            )
        except (GGUFError, TemplateDerivationError) as exc:
            detail = str(exc)
    elif state == "missing":
        detail = "not installed (model serve installs it)"
    elif state == "unverified":
        detail = "no verification marker (model serve or status --verify hashes it)"
    elif state == "stale":
        detail = "file changed since it was verified (model serve or status --verify re-hashes it)"
    return ModelStatus(
        name=spec.name,
        state=state,
        path=path,
        size=size,
        sha256=sha256,
        expected_sha256=spec.sha256,
        label=label,
        detail=detail,
    )
