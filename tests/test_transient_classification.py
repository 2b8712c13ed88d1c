"""Provider failures, one error type at a time, through both SDKs and the CLI (issue 18).

Every row drives ``agentic-eval run retail_ops --cases match-001`` in-process against a local
server: :class:`FakeProvider` for HTTP statuses and timeouts, a raw socket that hangs up for
connection failures. A transient sample keeps the provider's message with its secrets redacted and
makes the gate INCONCLUSIVE; other 4xx end as ``error`` (FAIL); a refused key stops the run with
one line (README, "Record with a hosted model").
"""

from __future__ import annotations

import errno
import json
import os
import socket
import struct
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Literal

import pytest

from agentic_eval.backends.scripted import respond
from agentic_eval.cli.main import main
from agentic_eval.core import ModelRequest, ModelResponse
from agentic_eval.domains import get_domain
from agentic_eval.testing import FakeProvider, Fault

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
CASE = "match-001"
DUMMY_KEY = "sk-dummy-never-printed-7d3e9a"
PLANTED_TOKEN = "PlantedTok3n99xyz"
PLANTED_KEY = "sk-plantedKey123456"
SECRETS = (PLANTED_TOKEN, PLANTED_KEY, DUMMY_KEY)
REDACTED = "[REDACTED]"

TRANSIENT_STATUSES = (408, 429, 529, 500, 502, 503, 504)
"""408, 429, 529/overloaded and 5xx: transient for both providers (one shared rule)."""
REFUSED_STATUSES = (400, 404, 409, 422)
"""Other 4xx: the provider refused this request, an ``error`` outcome."""
CREDENTIAL_STATUSES = (401, 403)
"""The key was refused: the run stops with one line, exit 2."""


def visible_part(status: int) -> str:
    """The distinctive, secret-free part of the provider's message for ``status``."""
    return f"upstream-xyzzy-{status} is out of capacity"


def provider_message(status: int) -> str:
    """A provider error message with two planted secrets (a token and an OpenAI-style key)."""
    return (
        f"{visible_part(status)} (token={PLANTED_TOKEN}); Incorrect API key provided: {PLANTED_KEY}"
    )


def reference_responder(request: ModelRequest) -> ModelResponse:
    return respond(get_domain("retail_ops").agents()["reference"], request)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(reference_responder) as provider:
        yield provider


def base_url(provider: Provider, root: str) -> str:
    """The ``--base-url`` each SDK expects for a server at ``root`` (OpenAI ends in ``/v1``)."""
    return root if provider == "anthropic" else root + "/v1"


def run_argv(provider: Provider, url: str, retries: int = 0) -> list[str]:
    return [
        "run",
        "retail_ops",
        "--cases",
        CASE,
        "--provider",
        provider,
        "--base-url",
        url,
        "--model",
        "m",
        "--retries",
        str(retries),
        "--timeout",
        "1",
        "--json",
    ]


def set_dummy_key(provider: Provider, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    monkeypatch.setenv(name, DUMMY_KEY)


def only_case(stdout: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scorecard and its one case from the printed JSON."""
    (run,) = json.loads(stdout)["runs"]
    card: dict[str, Any] = run["scorecard"]
    (case,) = card["cases"]
    return card, case


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (secret, text)


def assert_keeps_message(reason: str, status: int) -> None:
    """The provider's message is kept, its secrets replaced by ``[REDACTED]``."""
    assert visible_part(status) in reason, reason
    assert "Incorrect API key provided" in reason, reason
    assert reason.count(REDACTED) >= 2, reason  # the token and the key
    assert_no_secret(reason)


def assert_transient_and_inconclusive(
    code: int, card: dict[str, Any], case: dict[str, Any]
) -> None:
    assert case["outcome"]["kind"] == "transient", case
    assert card["totals"]["transient"] == 1, card["totals"]
    assert card["gate"]["verdict"] == "INCONCLUSIVE", card["gate"]
    assert code == 2


# -- HTTP statuses and timeouts through FakeProvider ------------------------------------------


@pytest.mark.parametrize("status", TRANSIENT_STATUSES)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_transient_status_keeps_the_redacted_message_and_is_inconclusive(
    provider: Provider,
    status: int,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    fake.inject(Fault.status(status, provider_message(status)))
    code = main(run_argv(provider, base_url(provider, fake.base_url)))
    captured = capsys.readouterr()
    card, case = only_case(captured.out)
    assert_transient_and_inconclusive(code, card, case)
    assert f"HTTP {status}" in case["outcome"]["reason"]
    assert_keeps_message(case["outcome"]["reason"], status)
    assert_no_secret(captured.out, captured.err)
    assert fake.status_counts.get(status) == 1  # the fault was served, and not retried


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_beyond_the_timeout_flag_is_transient(
    provider: Provider,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    fake.inject(Fault.delay(3.0))  # --timeout 1
    code = main(run_argv(provider, base_url(provider, fake.base_url)))
    captured = capsys.readouterr()
    card, case = only_case(captured.out)
    assert_transient_and_inconclusive(code, card, case)
    assert "timed out" in case["outcome"]["reason"], case
    assert fake.pending_faults == 0
    assert_no_secret(captured.out, captured.err)


@pytest.mark.parametrize("status", REFUSED_STATUSES)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_other_4xx_is_an_error_outcome_with_the_redacted_message(
    provider: Provider,
    status: int,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    fake.inject(Fault.status(status, provider_message(status)))
    code = main(run_argv(provider, base_url(provider, fake.base_url), retries=1))
    captured = capsys.readouterr()
    card, case = only_case(captured.out)
    assert case["outcome"]["kind"] == "error", case
    assert card["totals"]["transient"] == 0
    assert card["gate"]["verdict"] == "FAIL" and code == 1
    assert f"HTTP {status}" in case["outcome"]["reason"]
    assert_keeps_message(case["outcome"]["reason"], status)
    assert_no_secret(captured.out, captured.err)
    assert fake.status_counts.get(status) == 1  # never retried, even with --retries 1


@pytest.mark.parametrize("status", CREDENTIAL_STATUSES)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refused_key_stops_the_run_with_one_redacted_line(
    provider: Provider,
    status: int,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    fake.inject(Fault.status(status, provider_message(status)))
    code = main(run_argv(provider, base_url(provider, fake.base_url), retries=1))
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2
    assert captured.out == ""  # no scorecard: the run stopped
    assert len(lines) == 1, lines
    assert f"{provider}: authentication failed" in lines[0], lines
    assert f"HTTP {status}" in lines[0]
    assert_keeps_message(lines[0], status)
    assert fake.status_counts.get(status) == 1  # stopped at once, never retried


@pytest.mark.parametrize(
    "fault",
    [Fault.status(429), Fault.status(529), Fault.status(503), Fault.delay(3.0)],
    ids=["429", "529", "503", "timeout"],
)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_retry_recovers_from_one_transient_failure(
    provider: Provider,
    fault: Fault,
    fake: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    fake.inject(fault)
    code = main(run_argv(provider, base_url(provider, fake.base_url), retries=1))
    card, case = only_case(capsys.readouterr().out)
    assert case["outcome"]["kind"] == "passed", case
    assert card["gate"]["verdict"] == "PASS" and code == 0
    assert fake.pending_faults == 0  # the fault was met, then the retry went through
    if fault.kind == "status":
        assert fake.status_counts.get(fault.status_code) == 1


# -- connection failures through a raw socket --------------------------------------------------

HangUp = Literal["reset", "close"]


class HangUpServer:
    """Accepts connections on 127.0.0.1, reads each HTTP request and never answers it.

    ``reset`` aborts the connection (SO_LINGER 0: a TCP RST, "connection reset by peer");
    ``close`` closes it cleanly (a FIN with no response).
    """

    def __init__(self, mode: HangUp) -> None:
        self.mode = mode
        self.accepted = 0
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> HangUpServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            with conn:
                _read_request(conn)
                if self.mode == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _read_request(conn: socket.socket) -> None:
    """Read one request (head and Content-Length body), so the client waits for an answer."""
    conn.settimeout(2)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return
            body += chunk
    except OSError:
        return


@pytest.mark.parametrize("mode", ["reset", "close"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_connection_hung_up_without_an_answer_is_transient_and_says_how(
    provider: Provider,
    mode: HangUp,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    with HangUpServer(mode) as server:
        code = main(run_argv(provider, base_url(provider, server.root)))
    captured = capsys.readouterr()
    card, case = only_case(captured.out)
    assert_transient_and_inconclusive(code, card, case)
    assert server.accepted == 1  # connected, sent, got no answer; not retried with --retries 0
    reason: str = case["outcome"]["reason"]
    assert "connection error" in reason, reason
    # The reason says what the transport saw, not only the SDK's generic "Connection error.".
    expected = os.strerror(errno.ECONNRESET) if mode == "reset" else "disconnected"
    assert expected.lower() in reason.lower(), reason
    assert_no_secret(captured.out, captured.err)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refused_connection_is_transient(
    provider: Provider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_dummy_key(provider, monkeypatch)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        code = main(run_argv(provider, base_url(provider, f"http://127.0.0.1:{port}")))
    card, case = only_case(capsys.readouterr().out)
    assert_transient_and_inconclusive(code, card, case)
    assert "connection error" in case["outcome"]["reason"], case
