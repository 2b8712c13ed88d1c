"""Client CPU per request of the live backends: the SDKs' ``create`` path against the lower-level
``client.post`` path, both SDKs, measured in the same run.

Workload (fixed): every model request of the recorded ``retail_ops`` reference run (34 cases,
their turns one to six; 19 tools, about 16 KB of JSON a request), sent one after another with
``backend.complete`` to ``agentic-eval fake-provider --latency-ms 0 --responder retail_ops`` in its
own process, so that only this process's CPU (``time.process_time``: user and system, every
thread) is counted. Requests offering equal tools offer the same tuple, as the loop's do.

The two paths of each provider:

* ``create``: the backend as it was before the fast path, read from git (the parent of the commit
  that took ``self._client.chat.completions.create(`` out of openai_backend.py), so that the
  baseline is the old code itself, not a re-creation of it;
* ``post``: the backend in the working tree.

Each round sends the same ``--requests`` through every path in turn (the order rotating from
round to round, so that a busy neighbour on the machine weighs on all of them alike); a path's
figure is the median of its rounds, and the ratio is the median over the rounds of ``create``
over ``post`` of the same provider in the same round. Both paths must give equal responses to
every request, which is checked before the rounds.
A third path of each provider, ``post httpcore``, is ``post`` with the SDK's own default HTTP
client (httpx2 over httpcore2, h11 and anyio) in place of the backend's, whose plain-``http://``
requests go through :class:`~agentic_eval.backends.transport.LeanTransport`: the HTTP stack's
share, before and after, in the same run. A last row, ``http alone``, posts the same bytes with
the SDK's default HTTP client and nothing else: the floor under any path through the SDK's
default stack (not under ``post``, which no longer uses that stack). ``--profile`` then runs
cProfile (timing CPU, so its own overhead weighs on code that makes many small calls) once over
each path and prints where the time goes, by package and by function.

Run: ``python bench/client_cpu.py`` (about a minute on 2 cores), ``--profile`` for the profiles.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import re
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentic_eval.backends.anthropic_backend import AnthropicBackend
from agentic_eval.backends.base import CallContext, ModelBackend
from agentic_eval.backends.openai_backend import OpenAIBackend
from agentic_eval.core import ModelRequest, ModelResponse
from agentic_eval.recordings import read_transcript

REPO = Path(__file__).resolve().parent.parent
DOMAIN = "retail_ops"
RECORDINGS = REPO / "evals" / "recordings" / DOMAIN / "reference"
MODULES = {
    "openai": ("src/agentic_eval/backends/openai_backend.py", "OpenAIBackend"),
    "anthropic": ("src/agentic_eval/backends/anthropic_backend.py", "AnthropicBackend"),
}
FAST_PATH_COMMIT_MARK = "self._client.chat.completions.create("
KEY = "sk-bench-not-a-key"
CALL = CallContext(domain=DOMAIN, case_id="bench", turn=0)


def recorded_requests() -> list[ModelRequest]:
    """Every turn's request of the reference recordings, in case order; requests offering equal
    tools offer one tuple (each kind of case has its own ``submit``), as in a run."""
    requests: list[ModelRequest] = []
    for path in sorted(RECORDINGS.glob("*.json")):
        if path.name == "scorecard.json":
            continue
        transcript = read_transcript(path)
        requests.extend(transcript.request_at(i) for i in range(len(transcript.turns)))
    shared: list[tuple[Any, ...]] = []
    for i, request in enumerate(requests):
        same = next((t for t in shared if t == request.tools), None)
        if same is None:
            shared.append(request.tools)
        else:
            requests[i] = request.model_copy(update={"tools": same})
    return requests


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed (a git checkout is needed): {done.stderr}")
    return done.stdout


def baseline_revision() -> str:
    """The parent of the commit that replaced ``create`` with the lower-level path."""
    path = MODULES["openai"][0]
    commit = git("log", "-1", "--format=%H", f"-S{FAST_PATH_COMMIT_MARK}", "--", path).strip()
    if not commit:
        raise SystemExit(f"no commit changed {FAST_PATH_COMMIT_MARK!r} in {path}")
    return f"{commit}~1"


def baseline_class(provider: str, revision: str) -> type[ModelBackend]:
    """The backend class of ``provider`` as it was at ``revision``, loaded as its own module."""
    path, name = MODULES[provider]
    source = git("show", f"{revision}:{path}")
    module = types.ModuleType(f"baseline_{provider}_backend")
    module.__file__ = f"{revision}:{path}"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return getattr(module, name)


def serve() -> tuple[subprocess.Popen[str], str]:
    """``agentic-eval fake-provider`` at 0 ms in its own process, and its root URL."""
    cmd = [sys.executable, "-m", "agentic_eval", "fake-provider", "--port", "0",
           "--latency-ms", "0", "--responder", DOMAIN]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"OpenAI base URL: +(\S+)/v1", line)
        if found:
            return proc, found.group(1)
    raise SystemExit(f"fake-provider exited with {proc.wait()} before printing its URL")


def make_backend(cls: type[ModelBackend], provider: str, root: str) -> ModelBackend:
    make: Callable[..., ModelBackend] = cls
    url = root + "/v1" if provider == "openai" else root
    return make("fake", api_key=KEY, base_url=url, timeout=60.0)


def with_default_http(backend: ModelBackend, provider: str) -> ModelBackend:
    """``backend`` with its SDK client's HTTP client swapped for the SDK's default one (httpcore
    underneath), as the backends had it before the lean transport."""
    import anthropic
    import openai

    sdk: Any = openai if provider == "openai" else anthropic
    client: Any = backend._client  # pyright: ignore[reportAttributeAccessIssue]
    http = sdk.DefaultAsyncHttpxClient(timeout=60.0, limits=sdk.DEFAULT_CONNECTION_LIMITS)
    backend._client = client.with_options(http_client=http)  # pyright: ignore[reportAttributeAccessIssue]
    return backend


class HttpFloor:
    """The floor: the openai path's body bytes posted with the SDK's HTTP client alone (no SDK
    request machinery, no conversion), its JSON reply parsed. What no SDK path can go below."""

    def __init__(self, root: str) -> None:
        import json

        import openai

        self._loads = json.loads
        self._encoder = OpenAIBackend("fake", api_key=KEY, base_url=root + "/v1")
        self._http = openai.DefaultAsyncHttpxClient(timeout=60.0)
        self._url = root + "/v1/chat/completions"
        self._headers = {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"}

    async def complete(self, request: ModelRequest, call: CallContext) -> Any:
        body = self._encoder.request_body(request)
        reply = await self._http.post(self._url, content=body, headers=self._headers)
        return self._loads(reply.content)

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._encoder.aclose()


async def send(backend: Any, requests: list[ModelRequest], n: int) -> float:
    """CPU seconds per request over ``n`` sequential requests."""
    started = time.process_time()
    for i in range(n):
        await backend.complete(requests[i % len(requests)], CALL)
    return (time.process_time() - started) / n


async def answers(backend: ModelBackend, requests: list[ModelRequest]) -> list[ModelResponse]:
    return [await backend.complete(r, CALL) for r in requests]


def by_package(stats: pstats.Stats) -> list[tuple[str, float]]:
    """Own time per package (site-packages folder, agentic_eval, or the stdlib module)."""
    totals: dict[str, float] = {}
    raw: dict[Any, Any] = stats.stats  # pyright: ignore[reportAttributeAccessIssue]
    for (filename, _, function), (_, _, own, _, _) in raw.items():
        if "site-packages/" in filename:
            key = filename.split("site-packages/", 1)[1].split("/", 1)[0]
        elif "agentic_eval" in filename:
            key = "agentic_eval"
        elif filename == "~":
            key = f"builtin {function}"
        else:
            key = f"stdlib {Path(filename).stem}"
        totals[key] = totals.get(key, 0.0) + own
    return sorted(totals.items(), key=lambda kv: -kv[1])


async def profile(name: str, backend: Any, requests: list[ModelRequest], n: int) -> None:
    profiler = cProfile.Profile(time.process_time)  # CPU, not the waits for the fake
    profiler.enable()
    for i in range(n):
        await backend.complete(requests[i % len(requests)], CALL)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(own for _, own in by_package(stats))
    cpu = total * 1000 / n
    print(f"\nprofile of {name}: {n} requests, {cpu:.2f} ms CPU a request under cProfile")
    for key, own in by_package(stats)[:12]:
        print(f"  {own / total:6.1%}  {key}")
    print("  top functions by own time:")
    stats.sort_stats("tottime").print_stats(12)


async def run(args: argparse.Namespace) -> int:
    requests = recorded_requests()
    revision = baseline_revision()
    proc, root = serve()
    paths: dict[str, Any] = {}
    try:
        for provider in MODULES:
            current = OpenAIBackend if provider == "openai" else AnthropicBackend
            paths[f"{provider} create"] = make_backend(
                baseline_class(provider, revision), provider, root
            )
            paths[f"{provider} post"] = make_backend(current, provider, root)
            paths[f"{provider} post httpcore"] = with_default_http(
                make_backend(current, provider, root), provider
            )
        paths["http alone"] = HttpFloor(root)
        for backend in paths.values():  # imports, connections, the SDKs' platform probe
            await send(backend, requests, 20)
        for provider in MODULES:
            create = await answers(paths[f"{provider} create"], requests)
            post = await answers(paths[f"{provider} post"], requests)
            assert create == post, f"{provider}: the two paths answered differently"
        figures: dict[str, list[float]] = {name: [] for name in paths}
        names = list(paths)
        for round_ in range(args.rounds):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                figures[name].append(await send(paths[name], requests, args.requests))
        print(
            f"client CPU per request: {DOMAIN} reference requests ({len(requests)} distinct, "
            f"{args.requests} a round, {args.rounds} rounds) -> fake-provider at 0 ms in its own "
            f"process; baseline {git('rev-parse', '--short', revision).strip()}; python "
            f"{sys.version.split()[0]}"
        )
        print(f"{'path':>22} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'ratio':>7}")
        for provider in MODULES:
            post = figures[f"{provider} post"]
            for path in ("create", "post httpcore", "post"):
                name = f"{provider} {path}"
                ratios = [a / b for a, b in zip(figures[name], post, strict=True)]
                ratio = f"{statistics.median(ratios):>7.2f}"
                print(
                    f"{name:>22} {statistics.median(figures[name]) * 1000:>10.3f} "
                    f"{min(figures[name]) * 1000:>8.3f} {max(figures[name]) * 1000:>8.3f} {ratio}"
                )
        floor = figures["http alone"]
        print(
            f"{'http alone (httpcore)':>22} {statistics.median(floor) * 1000:>10.3f} "
            f"{min(floor) * 1000:>8.3f} {max(floor) * 1000:>8.3f}"
        )
        print("ratio: the path's CPU per request over post's in the same round, same provider")
        print("(the median over the rounds: a busy neighbour weighs on both sides alike).")
        print("post httpcore: post through the SDK's default HTTP client (httpcore), not the")
        print("lean transport. http alone: the openai body posted with the SDK's default HTTP")
        print("client, no SDK.")
        if args.profile:
            for name, backend in paths.items():
                await profile(name, backend, requests, args.requests)
    finally:
        for backend in paths.values():
            await backend.aclose()
        proc.terminate()
        proc.wait(timeout=30)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=250, help="requests per path per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile each path once")
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
