"""Text that is printed or stored: secrets redacted, control characters made visible."""

from __future__ import annotations

import os
import re

SECRET_ENV_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTIC_EVAL_API_KEY")
_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"(?i)((?:x-)?api[-_]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def redact(text: str) -> str:
    """``text`` with API keys and bearer tokens replaced by ``[REDACTED]``.

    Redacts the values of the provider key variables in the environment, ``sk-...`` keys,
    ``Bearer`` tokens and ``api_key=...`` / ``x-api-key: ...`` values.
    """
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name, "")
        if len(value) >= 6 and value in text:
            text = text.replace(value, "[REDACTED]")
    for i, pattern in enumerate(_PATTERNS):
        text = pattern.sub("[REDACTED]" if i == 0 else r"\1[REDACTED]", text)
    return text


def printable(text: str) -> str:
    """``text`` safe for a terminal: escape sequences, NUL and other control characters are
    shown as ``\\xNN`` escapes (newlines and tabs kept)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def one_line(text: str, limit: int = 500) -> str:
    """Whitespace collapsed, control characters escaped, cut to ``limit`` characters."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
