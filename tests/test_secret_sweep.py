"""No secret reaches a file or a printout (issue 17, class 1).

One password planted in the provider base URL (userinfo), one key in its query string, one token
in a provider error body and one key in the environment. After a live ``run`` (recorded, in every
format), ``report`` (every format, and the HTML report), ``history``, ``show`` and a live ``step``,
no file under the history, recordings and store folders, no written document and no line printed
holds any of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.backends.scripted import respond
from agentic_eval.cli.main import main
from agentic_eval.core import ModelRequest, ModelResponse
from agentic_eval.core.text import one_line, redact, safe_url
from agentic_eval.domains import get_domain
from agentic_eval.testing import FakeProvider, Fault

PASSWORD = "PwSweep7f3a9Q"
QUERY_KEY = "QkeySweep19b2Z"
ERROR_TOKEN = "V3ProxyTok88sweepX"
ENV_KEY = "sk-envSweepKey-5151515151"
PROVIDED_KEY = "Kx7Kx7Kx7Kx7Kx7Kx7Kx7"
COOKIE = "Cs5Cs5Cs5Cs5Cs5Cs5"
SECRETS = (PASSWORD, QUERY_KEY, ERROR_TOKEN, ENV_KEY, PROVIDED_KEY, COOKIE)


def _responder(request: ModelRequest) -> ModelResponse:
    return respond(get_domain("retail_ops").agents()["reference"], request)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(_responder) as provider:
        yield provider


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _sweep_files(*roots: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes().decode("utf-8", "replace")
            if leaks := _leaks(data):
                found[str(path)] = leaks
    return found


def test_no_planted_secret_is_stored_or_printed(
    fake: FakeProvider,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home, history, rec, docs = (tmp_path / n for n in ("home", "history", "rec", "docs"))
    docs.mkdir()
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(home))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(history))
    monkeypatch.delenv("AGENTIC_EVAL_DATABASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    port = fake.openai_base_url.split(":")[2].split("/")[0]
    url = f"http://sweeper:{PASSWORD}@127.0.0.1:{port}/v1"
    printed: list[str] = []

    def cli(*args: str) -> int:
        code = main(list(args))
        out = capsys.readouterr()
        printed.append(out.out + out.err)
        return code

    live = ["--provider", "openai", "--base-url", url, "--model", "fake-model"]
    live += ["--retries", "0", "--timeout", "5"]
    fake.inject(
        Fault.status(
            400,
            f"proxy rejected token={ERROR_TOKEN} for this route; Incorrect API key provided: "
            f"{PROVIDED_KEY}; Cookie: session={COOKIE}",
        )
    )
    code = cli("run", "retail_ops", *live, "--cases", "match-00[12]", "--record",
               "--recordings", str(rec), "--agent", "swept")  # fmt: skip
    assert code == 1  # the 400 is an error outcome: the gate fails
    assert "proxy rejected token=[REDACTED] for this route" in printed[-1]  # kept, redacted
    for fmt in ("json", "markdown", "junit"):
        cli("run", "retail_ops", *live, "--cases", "match-001", "--format", fmt,
            "--output", str(docs / f"run.{fmt}"))  # fmt: skip
    query = ["--base-url", f"{url}?api_key={QUERY_KEY}"]  # the SDK then posts to an unknown route
    assert cli("run", "retail_ops", *live, *query, "--cases", "match-003", "--markdown") == 1
    cli("run", "retail_ops", "--recordings", str(rec), "--agent", "swept", "--cases", "match-00*")
    for fmt in ("table", "json", "markdown", "junit"):
        out = ["--output", str(docs / f"report.{fmt}")] if fmt != "table" else []
        cli("report", "retail_ops", "--format", fmt, *out, "--html", str(docs / f"{fmt}.html"))
    for fmt in ("table", "json", "markdown"):
        cli("history", "--format", fmt)
    cli("show", "match-001", "--agent", "swept", "--recordings", str(rec))
    cli("show", "match-002", "--agent", "swept", "--recordings", str(rec))
    cli("step", "--scenario", "synthesize.grounded", *live[:6], "--record",
        "--recordings", str(rec), "--agent", "swept-step")  # fmt: skip

    assert len(fake.requests) > 3  # the live calls went through
    assert (history / "retail_ops").is_dir() and any(rec.rglob("*.json"))
    assert not _sweep_files(home, history, rec, docs)
    leaked = {i: _leaks(text) for i, text in enumerate(printed) if _leaks(text)}
    assert not leaked, leaked


_SHAPES = [
    ("proxy rejected token=V3ProxyAbc123", "V3ProxyAbc123"),
    ("proxy rejected token: 'V3ProxyAbc123'", "V3ProxyAbc123"),
    ('{"error": {"secret": "s3cr3t-value"}}', "s3cr3t-value"),
    ("password=hunter22 and more", "hunter22"),
    ("Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
    ("upstream said: your key is Zq81xLm2Pw93Ks7Tn4", "Zq81xLm2Pw93Ks7Tn4"),
    ("retry http://bob:hunter22@proxy:3128/v1 later", "hunter22"),
    ("GET /v1?api_key=AAAABBBB1234&x=1 failed", "AAAABBBB1234"),
    ("ghp_0123456789abcdefABCDEF0123 rejected", "ghp_0123456789abcdefABCDEF0123"),
    # a hostile review's second round: each shape once
    ("Incorrect API key provided: abcd1234efgh5678ijkl", "abcd1234efgh5678ijkl"),
    ("authorization: abcdefgh12345678", "abcdefgh12345678"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
    ("Bearer: abcdefgh12345678", "abcdefgh12345678"),
    ("Cookie: session=9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("Set-Cookie: sessionid=abcdef1234567890abcdef", "abcdef1234567890abcdef"),
    ("pw=hunter2xx", "hunter2xx"),
    ("password = 'hunter two'", "hunter two"),
    ("token\\u003dabc1234567", "abc1234567"),
    ("api_key: [AbCdEf0123456789xyz]", "AbCdEf0123456789xyz"),
    ("api_key=<AbCdEf0123456789xyz>", "AbCdEf0123456789xyz"),
    ("api_key=\u201cAbCdEf0123456789xyz\u201d", "AbCdEf0123456789xyz"),
    ("github_pat_11ABCDEFG0123456789_GHPATLEAK", "github_pat_11ABCDEFG0123456789_GHPATLEAK"),
    ("hf_HFLEAKabcdefghijklmnopqrstuv1", "hf_HFLEAKabcdefghijklmnopqrstuv1"),
    ("glpat-abcdefghij1234567890", "glpat-abcdefghij1234567890"),
    ("sk_live_abcdefghij1234567890", "sk_live_abcdefghij1234567890"),
    ("x-goog-api-key: AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdef"),
]


@pytest.mark.parametrize(("text", "secret"), _SHAPES)
def test_redact_removes_known_secret_shapes(text: str, secret: str) -> None:
    cleaned = redact(text)
    assert secret not in cleaned and ("[REDACTED]" in cleaned or "***@" in cleaned)
    assert redact(cleaned) == cleaned  # idempotent: stored text redacts to itself


def test_redact_skips_the_secret_word_patterns_only_where_none_could_match() -> None:
    """``redact`` runs its URL patterns only on text holding ``://`` and its three secret-word
    patterns only on text holding a secret word (a fast path for listings): the result is what
    running every pattern gives."""
    from agentic_eval.core import text as text_module
    from agentic_eval.domains import all_domains

    def every_pattern(text: str) -> str:
        guards = text_module._ANY_WORD, text_module._URL_MARK
        text_module._ANY_WORD, text_module._URL_MARK = re.compile(""), ""  # always "found"
        try:
            return redact(text)
        finally:
            text_module._ANY_WORD, text_module._URL_MARK = guards

    cases = [c.instruction for d in all_domains().values() for c in d.load_cases()]
    samples = [t for t, _ in _SHAPES] + cases + ["x" * 40, "Key=abc", chr(0x212A) + "ey=abcdef12"]
    samples += [f"{a} {b}" for a in ("see http://u:p@h/", "Bearer abcdefgh1234") for b in cases[:3]]
    for sample in samples:
        assert redact(sample) == every_pattern(sample), sample
    assert any(text_module._ANY_WORD.search(t) is None for t in samples)  # the fast paths ran
    assert any("://" not in t for t in samples) and any("://" in t for t in samples)


@pytest.mark.parametrize(
    "text",
    [
        "invoice INV-0001 failed its 3-way match: key facts differ",
        "monkey=banana",
        "the approval key point: amount 1200.00 EUR",
        "Error code: 400 - {'error': {'message': 'bad request', 'type': 'invalid_request_error'}}",
        'field user_turns[3]: recorded {"after":5,"index":3,"request_key":"' + "ab12" * 16 + '"}',
        '{"response_key": "' + "0f" * 32 + '"}',
        # a path whose file or folder is named like a secret word, then an OS error
        "cannot create the store folder /etc/passwd: File exists",
        "cannot write /etc/passwd/retail_ops/runs-20261205T120000Z.jsonl: Not a directory",
        "C:\\Users\\me\\token: Access is denied",
        "/srv/keys/key: Permission denied",
    ],
)
def test_redact_leaves_ordinary_text_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:PASSWORD@host/v1", "http://u:***@host/v1"),
        ("https://ghp_Tok3nValue99x@api.example.com/v1", "https://***@api.example.com/v1"),
        ("postgresql://evaluser@db/evals", "postgresql://evaluser@db/evals"),
        ("http://host/v1?api_key=XYZ123&model=a", "http://host/v1?api_key=[REDACTED]&model=a"),
        (
            "http://host/v1?access_token=abc&sig=def",
            "http://host/v1?access_token=[REDACTED]&sig=[REDACTED]",
        ),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ],
)
def test_safe_url_drops_userinfo_and_secret_parameters(url: str, shown: str) -> None:
    assert safe_url(url) == shown
    assert safe_url(shown) == shown


def test_a_secret_in_any_secret_named_variable_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_PROXY_TOKEN", "acmeTok3n9f8e7d6c5b4")
    monkeypatch.setenv("CACHE_KEY", "reference")  # a word, not a secret: left alone
    text = "proxy said acmeTok3n9f8e7d6c5b4 is not valid for the reference agent"
    assert redact(text) == "proxy said [REDACTED] is not valid for the reference agent"
    assert one_line(f"error:\n {text}") == f"error: {redact(text)}"


@pytest.mark.parametrize(
    "url",
    [
        "http://admin:PW/LEAK99@127.0.0.1:1/v1",
        "http://admin:PW#LEAK99@127.0.0.1:1/v1",
        "http://admin:PW?LEAK99@127.0.0.1:1/v1",
        "ftp://127.0.0.1/v1",
        "127.0.0.1:8080/v1",
        "http://127.0.0.1:99999/v1",
    ],
)
def test_a_base_url_that_does_not_parse_is_a_usage_error_that_never_echoes_it(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["run", "retail_ops"], ["step", "--scenario", "synthesize.grounded"]):
        code = main([*command, "--provider", "openai", "--model", "m", "--base-url", url])
        out = capsys.readouterr()
        assert code == 2 and "--base-url" in out.err and "not an http(s) URL" in out.err
        assert "LEAK99" not in out.err + out.out and "Traceback" not in out.err
