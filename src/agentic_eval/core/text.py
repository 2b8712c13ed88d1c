"""Text that is printed or stored: secrets redacted, URLs made safe, control characters visible.

Two rules, used everywhere a run's text is persisted or printed:

- :func:`safe_url` is the one function through which a URL is stored or shown: a password in
  its userinfo becomes ``***`` (``user:***@``; userinfo with no password that looks like a
  token rather than a user name becomes ``***@``) and the values of secret-looking query parameters
  (``api_key``, ``token``, ``sig``...) become ``[REDACTED]``.
- :func:`redact` removes known secret shapes from free text (provider error bodies, exception
  messages): the values of the provider key variables and of any variable named like a secret
  (``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``...) in the environment, ``sk-...`` keys,
  bearer tokens, ``key=`` / ``token=`` / ``secret=`` / ``password=`` values (any separator, any
  quoting), long random-looking strings right after such words, well-known token prefixes, and
  credentials inside URLs. It is idempotent: redacting redacted text changes nothing.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

SECRET_ENV_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTIC_EVAL_API_KEY")
REDACTED = "[REDACTED]"

SECRET_WORDS = (
    r"(?:x-)?api[-_]?key|apikey|access[-_]?key|secret[-_]?key|private[-_]?key|client[-_]?secret"
    r"|access[-_]?token|refresh[-_]?token|id[-_]?token|auth[-_]?token|session[-_]?token"
    r"|token|secret|password|passwd|pwd|passphrase|credentials?|key|sig|signature|auth"
)
"""Words whose value is a secret: query parameter names and ``word=value`` keys in text."""
_SECRET_PARAM = re.compile(rf"(?i)^(?:{SECRET_WORDS})$|(?i:token|secret|passw|api[-_]?key)")

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # credentials inside any URL in the text: scheme://userinfo@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/@?#:]+:)[^\s/@?#]+@"), r"\1\2***@"),
    (
        re.compile(
            r"(?i)\b([a-z][a-z0-9+.\-]*://)(?=[^\s/@?#:]*[0-9])(?=[^\s/@?#:]*[a-z])"
            r"[^\s/@?#:]{12,}@"
        ),
        r"\1***@",
    ),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|xox[abprs]-[A-Za-z0-9\-]{10,})"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"), REDACTED),
    (
        re.compile(r"(?i)\b((?:bearer|basic|token)\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/\-]{8,}=*"),
        rf"\1{REDACTED}",
    ),
    # word=value, word: value, "word": "value", word%3Dvalue; the value up to a delimiter
    (
        re.compile(
            rf"(?i)(?<![A-Za-z0-9])((?:{SECRET_WORDS})[\"']?\s*(?:[:=]|%3[dD])\s*[\"']?)"
            rf"(?!\[REDACTED\])[^\s\"',;&}}<>\]]{{3,}}"
        ),
        rf"\1{REDACTED}",
    ),
    # a long random-looking string shortly after a secret word: "token is AbC123...", "key AbC"
    (
        re.compile(
            rf"(?i)(?<![A-Za-z0-9])((?:{SECRET_WORDS})\b[^\w\[]{{0,3}}(?:(?:is|was|of|for)\s+)?)"
            r"(?=[A-Za-z0-9_\-./+]*[0-9])(?=[A-Za-z0-9_\-./+]*[A-Za-z])[A-Za-z0-9_\-./+]{16,}=*"
        ),
        rf"\1{REDACTED}",
    ),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


_SECRET_NAME = re.compile(r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")


def _secret_values() -> list[str]:
    """The values of the provider key variables, and of every variable named like a secret
    (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``...) whose value is 16 characters
    or more of letters and digits, longest first."""
    values = {v for v in (os.environ.get(n, "") for n in SECRET_ENV_VARS) if len(v) >= 6}
    for name, value in os.environ.items():  # other secrets: only values no word could be
        if len(value) >= 16 and _SECRET_NAME.search(name) and _mixed(value):
            values.add(value)
    return sorted(values, key=len, reverse=True)


def _mixed(text: str) -> bool:
    return any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def redact(text: str) -> str:
    """``text`` with every known secret shape replaced by ``[REDACTED]`` (see the module)."""
    for value in _secret_values():
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _looks_random(text: str) -> bool:
    """A lone URL userinfo that is a token rather than a user name."""
    return len(text) > 32 or (len(text) >= 12 and _mixed(text)) or redact(text) != text


def safe_url(url: str) -> str:
    """``url`` as it may be stored or shown: the userinfo's password (or a lone token) replaced
    by ``***``, the values of
    secret-looking query parameters by ``[REDACTED]``, and :func:`redact` over the rest.

    ``http://u:pw@h:8080/v1?api_key=k&x=1`` -> ``http://u:***@h:8080/v1?api_key=[REDACTED]&x=1``.
    Text that does not parse as a URL is redacted as free text.
    """
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user, colon, _ = userinfo.partition(":")
            if colon:
                netloc = f"{user}:***@{host}" if user else f"***@{host}"
            elif _looks_random(userinfo):
                netloc = f"***@{host}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(_SECRET_PARAM.search(k) for k, _ in pairs):
                query = urlencode(
                    [(k, REDACTED if _SECRET_PARAM.search(k) else v) for k, v in pairs],
                    safe="[]",
                    quote_via=quote,
                )
        rebuilt = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        rebuilt = url
    return redact(rebuilt)


def printable(text: str) -> str:
    """``text`` safe for a terminal: escape sequences, NUL and other control characters are
    shown as ``\\xNN`` escapes (newlines and tabs kept), and a lone surrogate (half a
    character, which nothing can encode) as U+FFFD."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def one_line(text: str, limit: int = 500) -> str:
    """Secrets redacted, whitespace collapsed, control characters escaped, cut to ``limit``
    characters: the form of every one-line message printed or stored."""
    flat = printable(" ".join(redact(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
