"""``python -m agentic_eval.batch.child``: one child process of the local ``--processes``
executor (:mod:`agentic_eval.batch.processes`).

Reads its job from stdin as JSON (``url``, ``run_id``, ``worker``, ``keys``, ``report_fd``: a
pipe on which it writes, after each batch of rows it commits, one line of JSON counting them by
outcome, and ``migrated``: true when the parent migrated the store, as opening the run did),
runs those samples of the stored run into the store at ``url`` and exits 0; on an error it
prints one line, ``agentic-eval: error: ...``, to stderr and exits 1. SIGINT is
ignored (the parent decides); SIGTERM, or its parent's death (``parent`` in the job), stops it
from starting new samples, and those in flight are stored before it exits.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any


def main() -> int:
    """Run the job read from stdin; the process's exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asked = {"stop": False}

    def on_term(signum: int, frame: object) -> None:
        del signum, frame
        asked["stop"] = True

    signal.signal(signal.SIGTERM, on_term)
    from agentic_eval.batch.plan import SampleKey
    from agentic_eval.batch.run import run_samples
    from agentic_eval.core.aio import run
    from agentic_eval.core.text import one_line, redact
    from agentic_eval.store.db import Store

    class ReportingStore(Store):
        """The store, saying on the report pipe what each batch of committed rows held."""

        report: int | None = None

        def add_samples(
            self,
            run_id: str,
            rows: Iterable[dict[str, Any]],
            templates: Mapping[str, str] | None = None,
        ) -> None:
            rows = list(rows)
            super().add_samples(run_id, rows, templates)
            if self.report is not None and rows:
                line = json.dumps(Counter(str(r["outcome"]) for r in rows)) + "\n"
                try:
                    os.write(self.report, line.encode())
                except OSError:  # the parent is gone (should_stop sees it) or stopped reading
                    self.report = None

    try:
        job = json.loads(sys.stdin.buffer.read())
        keys = [SampleKey.model_validate(k) for k in job["keys"]]
        store = ReportingStore(job["url"], migrated=job.get("migrated") is True)
        store.report = job.get("report_fd")
    except Exception as exc:  # a malformed job: the parent's fault, said in one line
        print(f"agentic-eval: error: bad job on stdin: {one_line(str(exc))}", file=sys.stderr)
        return 1
    try:
        parent = int(job.get("parent", os.getppid()))

        def should_stop() -> bool:  # asked to, or orphaned (the parent was killed)
            return asked["stop"] or os.getppid() != parent

        run(
            run_samples(
                store, job["run_id"], keys=keys, worker=job["worker"], should_stop=should_stop
            )
        )
    except Exception as exc:
        message = one_line(redact(f"{type(exc).__name__}: {exc}"))
        print(f"agentic-eval: error: {message}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is stored and the store closed: exit without tearing the interpreter's heap
    # down object by object (a tenth of a second the parent would wait for).
    os._exit(status)
