"""FakeProvider holds the load it is given, shapes it (latency, random failures) reproducibly, and
serves as the ``agentic-eval fake-provider`` command.

The standard library's listen backlog of 5 and one connection per request turned about 40% of
64 simultaneous SDK requests into connection resets, which a live run reports as ``transient``.
No timing is asserted here beyond generous bounds that stop a hang; figures are in
bench/live_throughput.py.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import pytest

from agentic_eval.backends.anthropic_backend import AnthropicBackend
from agentic_eval.backends.base import CallContext, ModelBackend, RetryPolicy
from agentic_eval.backends.openai_backend import OpenAIBackend
from agentic_eval.backends.scripted import respond
from agentic_eval.cli.main import main
from agentic_eval.core import ModelRequest, ModelResponse, TextBlock, Usage, user_text
from agentic_eval.domains import get_domain
from agentic_eval.testing import FakeProvider, Fault

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
CONCURRENCY = 64  # the most `run --concurrency` allows
LATENCY_MS = (50.0, 100.0)
NO_RETRY = RetryPolicy(max_retries=0)  # a dropped connection must show, not be retried away
CALL = CallContext(domain="load", case_id="case", turn=0)
ANTHROPIC_BODY = json.dumps(
    {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
).encode()


def echo(request: ModelRequest) -> ModelResponse:
    """Answers each request with its own text, so an answer proves which request it belongs to."""
    return ModelResponse(
        content=(TextBlock(text=f"answer to {request.messages[0].text()}"),),
        stop_reason="end_turn",
        usage=Usage(input_tokens=1, output_tokens=1),
        model="fake",
    )


def reference(request: ModelRequest) -> ModelResponse:
    return respond(get_domain("retail_ops").agents()["reference"], request)


def _backend(provider: Provider, fake: FakeProvider) -> ModelBackend:
    if provider == "anthropic":
        return AnthropicBackend("fake", base_url=fake.anthropic_base_url, retry=NO_RETRY)
    return OpenAIBackend("fake", base_url=fake.openai_base_url, retry=NO_RETRY)


def _ask(text: str) -> ModelRequest:
    return ModelRequest(
        model="fake", system="", messages=(user_text(text),), tools=(), max_tokens=16
    )


# -- (a) 64 concurrent requests through the SDKs ---------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_64_concurrent_sdk_requests_are_all_answered(provider: Provider) -> None:
    with FakeProvider(echo, latency_ms=LATENCY_MS, seed=1) as fake:
        backend = _backend(provider, fake)
        try:
            for burst in range(2):  # the second burst reuses the kept-alive connections
                texts = [f"request {burst}-{i}" for i in range(CONCURRENCY)]
                calls = [backend.complete(_ask(t), CALL) for t in texts]
                results = await asyncio.wait_for(
                    asyncio.gather(*calls, return_exceptions=True), timeout=60
                )
                errors = [repr(r) for r in results if isinstance(r, BaseException)]
                assert errors == [], f"{len(errors)} of {CONCURRENCY} failed: {errors[:3]}"
                answers = [r.message().text() for r in results if isinstance(r, ModelResponse)]
                assert answers == [f"answer to {t}" for t in texts]
        finally:
            await backend.aclose()
    assert len(fake.requests) == 2 * CONCURRENCY
    assert fake.status_counts == {200: 2 * CONCURRENCY}


def test_one_connection_carries_every_kind_of_response() -> None:
    """HTTP/1.1 keep-alive: answers, faults, random failures and refusals all keep the
    connection open, each with its Content-Length."""
    with FakeProvider(echo, fail_rates={529: 1.0}) as fake:
        fake.inject(Fault.status(429), Fault.delay(0.01), Fault.status(500))
        conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
        seen: list[int] = []
        sock = None
        for path, body in [
            ("/v1/messages", ANTHROPIC_BODY),  # injected 429
            ("/v1/messages", ANTHROPIC_BODY),  # injected delay, then the responder
            ("/v1/messages", ANTHROPIC_BODY),  # injected 500
            ("/v1/messages", ANTHROPIC_BODY),  # random 529 (rate 1)
            ("/v1/messages", b"{not json"),  # 400
            ("/v2/nowhere", ANTHROPIC_BODY),  # 404
        ]:
            conn.request("POST", path, body, {"content-type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            assert response.version == 11
            assert not response.will_close, (path, response.status)
            assert int(response.getheader("content-length") or -1) == len(data)
            json.loads(data)
            seen.append(response.status)
            sock = sock or conn.sock
            assert conn.sock is sock  # the same connection every time
        conn.close()
    assert seen == [429, 200, 500, 529, 400, 404]
    assert fake.status_counts == {429: 1, 200: 1, 500: 1, 529: 1, 400: 1, 404: 1}


def test_nothing_answers_after_stop_even_on_a_kept_alive_connection() -> None:
    fake = FakeProvider(echo)
    fake.start()
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
    try:
        conn.request("POST", "/v1/messages", ANTHROPIC_BODY)
        assert conn.getresponse().read()
        fake.stop()
        with pytest.raises((http.client.HTTPException, OSError)):
            conn.request("POST", "/v1/messages", ANTHROPIC_BODY)  # the same connection
            conn.getresponse().read()
    finally:
        conn.close()
    assert fake.status_counts == {200: 1}


# -- (b) a live batch at concurrency 64 ------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_live_batch_at_concurrency_64_has_no_transient_sample(
    provider: Provider, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeProvider(reference, latency_ms=LATENCY_MS, seed=2) as fake:
        url = fake.openai_base_url if provider == "openai" else fake.anthropic_base_url
        args = ["run", "retail_ops", "--provider", provider, "--base-url", url,
                "--model", "fake", "--concurrency", str(CONCURRENCY), "--samples", "2",
                "--retries", "0", "--timeout", "30", "--json", "--no-history"]  # fmt: skip
        code = main(args)
    out = capsys.readouterr().out
    (run,) = json.loads(out)["runs"]
    totals = run["scorecard"]["totals"]
    assert totals["transient"] == 0, totals
    samples = 2 * len(get_domain("retail_ops").load_cases())
    assert totals["passed"] == samples, totals
    assert code == 0
    assert len(fake.requests) == sum(c["turns"] for c in run["scorecard"]["cases"])


# -- (c) random failures, reproducibly -------------------------------------------------------


def _statuses_in_order(fake: FakeProvider, n: int) -> list[int]:
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
    statuses: list[int] = []
    for _ in range(n):
        conn.request("POST", "/v1/messages", ANTHROPIC_BODY)
        response = conn.getresponse()
        response.read()
        statuses.append(response.status)
    conn.close()
    return statuses


def _statuses_concurrently(fake: FakeProvider, n: int, workers: int) -> list[int]:
    local = threading.local()
    opened: list[http.client.HTTPConnection] = []

    def one(_: int) -> int:
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
            opened.append(local.conn)
        local.conn.request("POST", "/v1/messages", ANTHROPIC_BODY)
        response = local.conn.getresponse()
        response.read()
        return response.status

    try:
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, range(n)))
    finally:
        for conn in opened:
            conn.close()


def test_fail_rates_with_a_seed_fail_that_share_the_same_way_every_time() -> None:
    n = 600
    with FakeProvider(echo, fail_rates={529: 0.3}, seed=42) as fake:
        first = _statuses_in_order(fake, n)
        assert fake.status_counts == {200: first.count(200), 529: first.count(529)}
    assert set(first) == {200, 529}
    assert 0.25 <= first.count(529) / n <= 0.35
    with FakeProvider(echo, fail_rates={529: 0.3}, seed=42) as again:
        assert _statuses_in_order(again, n) == first  # the n-th request meets the same lot
    with FakeProvider(echo, fail_rates={529: 0.3}, seed=42) as concurrent:
        statuses = _statuses_concurrently(concurrent, n, workers=16)
    assert statuses.count(529) == first.count(529)  # whatever the arrival order
    with FakeProvider(echo, fail_rates={529: 0.3}, seed=43) as other:
        assert _statuses_in_order(other, n) != first


def test_a_random_failure_is_the_providers_error_and_injected_faults_come_first() -> None:
    with FakeProvider(echo, fail_rates={529: 1.0}) as fake:
        fake.inject(Fault.status(429))
        conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
        bodies: list[tuple[int, object]] = []
        for _ in range(2):
            conn.request("POST", "/v1/messages", ANTHROPIC_BODY)
            response = conn.getresponse()
            bodies.append((response.status, json.loads(response.read())["error"]["type"]))
        conn.close()
    assert bodies == [(429, "rate_limit_error"), (529, "overloaded_error")]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"latency_ms": -1},
        {"latency_ms": (100, 50)},
        {"latency_ms": float("nan")},
        {"fail_rates": {529: 1.5}},
        {"fail_rates": {200: 0.1}},
        {"fail_rates": {529: 0.6, 429: 0.5}},
    ],
)
def test_a_load_shape_out_of_range_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        FakeProvider(echo, **kwargs)  # type: ignore[arg-type]


# -- (d) the command -------------------------------------------------------------------------


@dataclass
class Served:
    proc: subprocess.Popen[str]
    lines: list[str]


def _read_until(
    proc: subprocess.Popen[str], marker: str, timeout: float
) -> tuple[list[str], threading.Thread]:
    """Stdout lines up to the one containing ``marker``, within ``timeout`` seconds, and the
    thread reading the rest."""
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True)
    reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while not any(marker in line for line in seen):
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            pytest.fail(f"fake-provider printed no {marker!r} line: {seen}")
        try:
            seen.append(lines.get(timeout=min(left, 0.5)))
        except queue.Empty:
            continue
    return seen, reader


@pytest.fixture
def served() -> Iterator[Served]:
    cmd = [sys.executable, "-m", "agentic_eval", "fake-provider", "--port", "0",
           "--latency-ms", "50-100", "--fail-rate", "529=0.05", "--seed", "3"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    reader = None
    try:
        lines, reader = _read_until(proc, "agentic-eval run ", timeout=60)
        yield Served(proc, lines)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if reader is not None:
            reader.join(timeout=30)  # it ends at the end of the output
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_the_command_serves_a_live_run_until_signalled(
    served: Served, sig: signal.Signals, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "".join(served.lines)
    found = re.search(r"OpenAI base URL: +http://127\.0\.0\.1:(\d+)/v1\n", text)
    assert found is not None, text
    port = int(found.group(1))
    assert port > 0 and f"Anthropic base URL: http://127.0.0.1:{port}\n" in text
    example = next(line for line in served.lines if "agentic-eval run " in line)
    args = shlex.split(example)
    assert args[:2] == ["agentic-eval", "run"] and "--provider" in args and "--model" in args
    # The printed example, as printed, on one case (one retry for the 5% of 529s).
    run_code = main([*args[1:], "--cases", "match-001", "--retries", "1", "--json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run_code == 0 and run["scorecard"]["totals"]["passed"] == 1, run["scorecard"]
    served.proc.send_signal(sig)
    assert served.proc.wait(timeout=30) == code
    assert served.proc.stderr is not None
    err = served.proc.stderr.read()
    assert f"stopping ({sig.name})" in err
    answered = re.search(r"HTTP 200: (\d+)", err)
    assert answered is not None, err
    assert int(answered.group(1)) == run["scorecard"]["cases"][0]["turns"]


@pytest.mark.parametrize(
    "args",
    [
        ["--fail-rate", "529=2"],
        ["--fail-rate", "529"],
        ["--latency-ms", "100-50"],
        ["--latency-ms", "soon"],
        ["--responder", "no_such_domain"],
        ["--responder", "retail_ops:no_such_agent"],
    ],
)
def test_the_command_refuses_a_bad_flag_in_one_line(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fake-provider", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
