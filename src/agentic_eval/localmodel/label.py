"""The agent label a locally served model's recordings are filed under.

Everything that changes what the model answers goes into the label: the model, its
quantisation, the runtime and its version, the chat template's digest and the temperature. Two
recordings with the same label were made by the same agent.
"""

from __future__ import annotations

import re

from agentic_eval.localmodel.catalog import ModelSpec, RuntimeSpec

__all__ = ["LABEL_PATTERN", "agent_label"]

LABEL_PATTERN = re.compile(r"^[A-Za-z0-9._-]+$")
"""What a label may contain: letters, digits, ``.``, ``_`` and ``-`` (safe as a folder name)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe(part: str) -> str:
    return _UNSAFE.sub("-", part).strip("-") or "x"


def _temperature(value: float) -> str:
    text = f"{value:g}"
    return "0" if text in ("0", "-0") else text


def agent_label(
    spec: ModelSpec, runtime: RuntimeSpec, template_digest: str, temperature: float = 0.0
) -> str:
    """The label, e.g. ``qwen2.5-coder-1.5b-q4_k_m_xllamacpp-2026.10.11549_tpl-<12 hex>_t0``.

    Args:
        spec: The model.
        runtime: The runtime serving it.
        template_digest: The chat template's digest (:func:`template_digest`).
        temperature: Sampling temperature of the recorded runs.

    Returns:
        A label made only of letters, digits, ``.``, ``_`` and ``-``.
    """
    parts = (
        f"{_safe(spec.name)}-{_safe(spec.quantization)}",
        f"{_safe(runtime.package)}-{_safe(runtime.version)}",
        f"tpl-{_safe(template_digest)}",
        f"t{_safe(_temperature(temperature))}",
    )
    return "_".join(parts)
