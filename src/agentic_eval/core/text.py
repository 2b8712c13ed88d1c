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
    r"|token|secret|password|passwd|pwd|pw|passphrase|credentials?|key|sig|signature|auth"
    r"|authorization|bearer|cookie|set-cookie|session(?:[-_]?id)?"
)
"""Words whose value is a secret: query parameter names and ``word=value`` keys in text."""
_SECRET_PARAM = re.compile(rf"(?i)^(?:{SECRET_WORDS})$|(?i:token|secret|passw|api[-_]?key)")

_WORD = rf"(?<![A-Za-z0-9/\\])(?<!request_)(?<!response_)(?:{SECRET_WORDS})(?:\s+provided)?"
"""A secret word as a word (``key provided`` is OpenAI's "Incorrect API key provided: sk-..."),
but not a transcript's ``request_key`` or ``response_key``, which hold sha256 digests, nor a
path's file or folder (``/etc/passwd: File exists``, ``C:\\keys\\key: ...``)."""
_SEP = r"[\"'`]?[ \t]*(?:[:=]|%3[dD]|\\{0,2}u003[dD])[ \t]*"
"""What joins a secret word to its value: ``=``, ``:``, ``%3D``, ``\u003d``, any spacing."""
_OPEN = "\"'`<([{\u00ab\u201c\u2018"
_SCHEME = r"(?:(?:bearer|basic|token|digest)[ \t]+)?"
_NOT_DONE = rf"(?![{_OPEN}]*\[REDACTED\])(?!\*\*\*)"

_URL_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # credentials inside any URL in the text: scheme://user:password@host, scheme://token@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/@?#:]+:)[^\s/@?#]+@"), r"\1\2***@"),
    (
        re.compile(
            r"(?i)\b([a-z][a-z0-9+.\-]*://)(?=[^\s/@?#:]*[0-9])(?=[^\s/@?#:]*[a-z])"
            r"[^\s/@?#:]{12,}@"
        ),
        r"\1***@",
    ),
)
_URL_MARK = "://"
"""What every match of :data:`_URL_PATTERNS` holds: text without it is left as it is by both."""
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # well-known token shapes, wherever they stand
    (
        re.compile(
            r"\b(?:sk-[A-Za-z0-9_\-]{8,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}"
            r"|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}"
            r"|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_\-]{30,}|xox[abprs]-[A-Za-z0-9\-]{8,}"
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}\b"
            r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)"
        ),
        REDACTED,
    ),
    # "Bearer <token>", "Basic <token>": the scheme names what follows
    (
        re.compile(rf"(?i)\b((?:bearer|basic|token)[ \t:=]+){_NOT_DONE}[A-Za-z0-9._~+/\-]{{8,}}=*"),
        rf"\1{REDACTED}",
    ),
)
_WORD_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # word = 'a quoted value, spaces and all'
    (
        re.compile(
            rf"(?i)({_WORD}{_SEP}{_SCHEME}([\"'`\u201c\u2018\u00ab]))(?!\[REDACTED\])"
            r"[^\"'`\u201d\u2019\u00bb\n]{1,200}(?=[\"'`\u201d\u2019\u00bb])"
        ),
        rf"\1{REDACTED}",
    ),
    # word=value, word: value, word: Bearer value, word: <value>; the value up to a delimiter
    (
        re.compile(
            rf"(?i)({_WORD}{_SEP}{_SCHEME}{_NOT_DONE}[{_OPEN}]{{0,2}})"
            rf"[^\s\"'`,;&}}<>\])\u00bb\u201d\u2019]{{3,}}"
        ),
        rf"\1{REDACTED}",
    ),
    # a long random-looking string shortly after a secret word: "token is AbC123...", "key AbC"
    (
        re.compile(
            rf"(?i)({_WORD}\b[^\w\[\n]{{0,3}}(?:(?:is|was|of|for)\s+)?[{_OPEN}]?)"
            r"(?=[A-Za-z0-9_\-./+]*[0-9])(?=[A-Za-z0-9_\-./+]*[A-Za-z])[A-Za-z0-9_\-./+]{16,}=*"
        ),
        rf"\1{REDACTED}",
    ),
)
"""The patterns that match only from a secret word on (each starts with ``_WORD``)."""
_ANY_WORD = re.compile(rf"(?i)(?<![A-Za-z0-9/\\])(?:{SECRET_WORDS})")
"""Where a match of :data:`_WORD_PATTERNS` can start: text without one is left as it is by all
three, and one search costs a third of them (``list cases`` redacts every instruction)."""
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
    if _URL_MARK in text:
        for pattern, replacement in _URL_PATTERNS:
            text = pattern.sub(replacement, text)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    if _ANY_WORD.search(text) is not None:
        for pattern, replacement in _WORD_PATTERNS:
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


def exception_message(exc: BaseException) -> str:
    """``str(exc)`` on one line; never raises (a domain's exception whose ``__str__`` raises is
    said as such, not allowed to crash the code reporting it)."""
    try:
        text = str(exc)
    except Exception as inner:  # hostile or broken __str__
        return f"<its str() raised {type(inner).__name__}>"
    return " ".join(text.split())


def exception_text(exc: BaseException) -> str:
    """``Type: message`` on one line (``Type`` alone when the message is empty); never raises."""
    text = exception_message(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
