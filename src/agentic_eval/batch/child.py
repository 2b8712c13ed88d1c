"""One child process of the local ``--processes`` executor (:mod:`agentic_eval.batch.processes`),
started one of two ways:

- forked from the parent (:mod:`agentic_eval.batch.forked`, where it is safe): the job is handed
  over in memory and :func:`run_forked` runs it, with everything the parent imported already
  there;
- ``python -m agentic_eval.batch.child``, a fresh interpreter (elsewhere): it reads its job from
  stdin as JSON.

A job holds ``url``, ``run_id``, ``worker``, ``keys``, ``parent`` (the parent's pid),
``report_fd`` (a pipe on which the child writes, after each batch of rows it commits, one line of
JSON counting them by outcome) and ``migrated`` (true when the parent migrated the store, as
opening the run did). The child runs those samples of the stored run into its own connection to
the store at ``url`` and exits 0; on an error it prints one line, ``agentic-eval: error: ...``, to
its stderr and exits 1. SIGINT is ignored (the parent decides); SIGTERM, or its parent's death,
stops it from starting new samples, and those in flight are stored before it exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

ERROR = "agentic-eval: error: "
"""How a child's one-line error starts on its stderr."""


def install_signals() -> dict[str, bool]:
    """Ignore SIGINT and take SIGTERM as a request to stop; the flag it sets."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asked = {"stop": False}

    def on_term(signum: int, frame: object) -> None:
        del signum, frame
        asked["stop"] = True

    signal.signal(signal.SIGTERM, on_term)
    return asked


def main() -> int:
    """Run the job read from stdin (a fresh interpreter); the process's exit status."""
    asked = install_signals()  # before the imports: a SIGTERM during them is a request to stop too

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        job = json.loads(sys.stdin.buffer.read())
        if not isinstance(job, dict):
            raise ValueError("not a JSON object")
    except Exception as exc:  # a malformed job: the parent's fault, said in one line
        from agentic_eval.core.text import one_line

        say(f"{ERROR}bad job on stdin: {one_line(str(exc))}")
        return 1
    return serve(job, asked, say)  # pyright: ignore[reportUnknownArgumentType]


def run_forked(job: dict[str, Any], asked: dict[str, bool]) -> NoReturn:
    """Run ``job`` in a child just forked from the parent, whose signals, stdin, stdout and
    stderr are already in place (``asked``: the flag its SIGTERM handler sets), and exit: this
    never returns into the parent's stack it was forked in."""
    status = 1
    try:
        status = serve(job, asked, _say_on_fd2)
    except BaseException as exc:  # whatever it is, this process ends here
        with contextlib.suppress(BaseException):
            from agentic_eval.core.text import one_line, redact

            _say_on_fd2(f"{ERROR}{one_line(redact(_said(exc)))}")
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)  # the parent's interpreter state is not this process's to tear down


def _say_on_fd2(line: str) -> None:
    """Write ``line`` to file descriptor 2 itself (``sys.stderr`` may be the parent's capture
    of it, a test's, which this process would fill and never show)."""
    os.write(2, (line + "\n").encode(errors="replace"))


def serve(job: dict[str, Any], asked: dict[str, bool], say: Callable[[str], None]) -> int:
    """Run ``job``'s samples into the store; the exit status (1 after saying one line)."""
    from agentic_eval.batch.plan import SampleKey
    from agentic_eval.batch.run import run_samples
    from agentic_eval.core.aio import run
    from agentic_eval.core.text import one_line, redact
    from agentic_eval.store.db import Store
    from agentic_eval.store.wal import defer_checkpoints

    class ReportingStore(Store):
        """The store, saying on the report pipe what each batch of committed rows held."""

        report: int | None = None

        def add_samples(
            self,
            run_id: str,
            rows: Iterable[dict[str, Any]],
            templates: Mapping[str, str] | None = None,
            *,
            heartbeat: bool = True,
        ) -> None:
            rows = list(rows)
            super().add_samples(run_id, rows, templates, heartbeat=heartbeat)
            if self.report is not None and rows:
                line = json.dumps(Counter(str(r["outcome"]) for r in rows)) + "\n"
                try:
                    os.write(self.report, line.encode())
                except OSError:  # the parent is gone (should_stop sees it) or stopped reading
                    self.report = None

    try:
        keys = [SampleKey.model_validate(k) for k in job["keys"]]
        store = ReportingStore(job["url"], migrated=job.get("migrated") is True)
        defer_checkpoints(store.engine)  # the parent, idle, checkpoints as rows come in
        store.report = job.get("report_fd")
        parent = int(job.get("parent", os.getppid()))
    except Exception as exc:  # a malformed job: the parent's fault, said in one line
        say(f"{ERROR}bad job on stdin: {one_line(str(exc))}")
        return 1
    try:

        def should_stop() -> bool:  # asked to, or orphaned (the parent was killed)
            return asked["stop"] or os.getppid() != parent

        run(
            run_samples(
                store, job["run_id"], keys=keys, worker=job["worker"], should_stop=should_stop
            )
        )
    except Exception as exc:
        say(f"{ERROR}{one_line(redact(_said(exc)))}")
        return 1
    finally:
        store.close()
    return 0


def _said(exc: BaseException) -> str:
    """What a child says of what stopped it: the domain's code that raised, named as the
    command line names it, else the exception (never raising itself)."""
    from agentic_eval.core.text import exception_text
    from agentic_eval.domains.blame import domain_fault

    return domain_fault(exc) or exception_text(exc)


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is stored and the store closed: exit without tearing the interpreter's heap
    # down object by object (a tenth of a second the parent would wait for).
    os._exit(status)
