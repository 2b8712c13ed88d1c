"""The viewer's HTTP server: the standard library's threading server, loopback only, GET only.

Pages are rendered per request from the store (one :class:`Store`, its engine's pool shared by
the request threads). An unknown id is a 404 page, a malformed request a 400 page, never a
traceback. A request whose ``Host`` header names anything but a loopback address is refused
(400), so a web page elsewhere cannot reach the viewer through DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

from agentic_eval.core.text import one_line
from agentic_eval.report.jsonfmt import report_data
from agentic_eval.report.views import ReportView, SuiteReport
from agentic_eval.report.web.pages import (
    diff_page_html,
    error_page,
    index_page,
    run_page_html,
    sample_page_html,
)
from agentic_eval.report.web.queries import (
    BadRequest,
    NotFound,
    all_series,
    run_diff,
    run_page,
    sample_page,
)
from agentic_eval.store.db import Store, StoreError

LOOPBACK_NAMES = ("localhost",)


class NotLoopback(ValueError):
    """A host the viewer refuses to listen on."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _diff(store: Store, query: dict[str, list[str]]) -> str:
    base, head = query.get("base", [""])[0].strip(), query.get("head", [""])[0].strip()
    if not base or not head:
        raise BadRequest("the diff needs two runs: /diff?base=RUN_ID&head=RUN_ID")
    d = run_diff(store, base, head)
    suite = SuiteReport(suite=d.suite, history=(), head=None, diff=d, note="", transcripts=())
    return diff_page_html(d, report_data(ReportView(suites=(suite,))))


def render(store: Store, target: str) -> tuple[int, str]:
    """The status and page for a request target (path and query).

    Raises:
        StoreError: The store cannot be read (a 500 page, one line).
    """
    parts = urlsplit(target)
    path, query = unquote(parts.path), parse_qs(parts.query)
    try:
        if path == "/":
            return 200, index_page(all_series(store))
        if path.startswith("/run/") and len(path) > len("/run/"):
            return 200, run_page_html(run_page(store, path.removeprefix("/run/")))
        if path.startswith("/sample/"):
            number = path.removeprefix("/sample/")
            if not number.isdigit() or not number.isascii() or len(number) > 18:
                raise NotFound(f"no sample {number!r}: a sample id is a number")
            return 200, sample_page_html(sample_page(store, int(number)))
        if path == "/diff":
            return 200, _diff(store, query)
        raise NotFound(f"no page {path}")
    except NotFound as exc:
        return 404, error_page(404, str(exc))
    except BadRequest as exc:
        return 400, error_page(400, str(exc))


class _Handler(BaseHTTPRequestHandler):
    server_version = "agentic-eval-view"
    sys_version = ""

    @property
    def _viewer(self) -> ViewerServer:
        return cast(ViewerServer, self.server)

    def _send(self, status: int, body: str, head_only: bool = False) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return is_loopback(name)

    def _answer(self, head_only: bool) -> None:
        if not self._host_ok():
            self._send(400, error_page(400, "the viewer answers loopback hosts only"), head_only)
            return
        try:
            status, body = render(self._viewer.store, self.path)
        except StoreError as exc:
            status, body = 500, error_page(500, str(exc))
        except Exception as exc:  # a bug of ours: one line on the page and in the log
            line = one_line(f"{type(exc).__name__}: {exc}", 300)
            status, body = 500, error_page(500, f"internal error: {line}")
            self.log_message("internal error on %s: %s", self.path, line)
        self._send(status, body, head_only)

    def do_GET(self) -> None:
        self._answer(head_only=False)

    def do_HEAD(self) -> None:
        self._answer(head_only=True)

    def log_message(self, format: str, *args: Any) -> None:
        if self._viewer.log is not None:
            self._viewer.log(format % args)


class ViewerServer(ThreadingHTTPServer):
    """A threading HTTP server bound to a loopback address, serving one store."""

    daemon_threads = True

    def __init__(
        self,
        store: Store,
        host: str = "127.0.0.1",
        port: int = 0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        """Bind ``host``:``port`` (0: a free port).

        Raises:
            NotLoopback: ``host`` is not a loopback address.
            OSError: The address cannot be bound.
        """
        self.check_host(host)
        self.address_family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
        self.store, self.log = store, log
        super().__init__((host.strip("[]"), port), _Handler)

    @staticmethod
    def check_host(host: str) -> None:
        """Raises :class:`NotLoopback` unless ``host`` is a loopback address."""
        if not is_loopback(host):
            raise NotLoopback(host)

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host, port = self.server_address[0], self.server_address[1]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"
