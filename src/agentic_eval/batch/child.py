"""``python -m agentic_eval.batch.child``: one child process of the local ``--processes``
executor (:mod:`agentic_eval.batch.processes`).

Reads its job from stdin as JSON (``url``, ``run_id``, ``worker``, ``keys``), runs those samples
of the stored run into the store at ``url`` and exits 0; on an error it prints one line,
``agentic-eval: error: ...``, to stderr and exits 1. SIGINT is ignored (the parent decides);
SIGTERM, or its parent's death (``parent`` in the job), stops it from starting new samples, and
those in flight are stored before it exits.
"""

from __future__ import annotations

import json
import os
import signal
import sys


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

    try:
        job = json.loads(sys.stdin.buffer.read())
        keys = [SampleKey.model_validate(k) for k in job["keys"]]
        store = Store(job["url"])
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
    sys.exit(main())
