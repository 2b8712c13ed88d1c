"""``agentic-eval workflow``: operating the governed workflow's store (``recover``), and what
every workflow command shares: on SIGINT/SIGTERM, release the claims this process holds."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Generator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.cli.lazy import LazyCommand, LazyGroup
from agentic_eval.core.text import one_line, printable

if TYPE_CHECKING:
    from agentic_eval.workflow.records import Claim, ReleasedClaim
    from agentic_eval.workflow.service import Workflow

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(Exception):
    """A signal came while the command waited on something blocking (an operator prompt)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class ClaimGuard:
    """SIGINT/SIGTERM during a workflow command, handled as ``run`` handles them: the claims
    this process holds are released as interrupted (each attempt ends without output, its
    step's transition back to ``pending`` names the claimant and the signal), the command's
    main task is cancelled, and the exit code is 130 / 143. A second signal acts as the default
    would (the claims are released by then).

    Example:
        >>> guard = ClaimGuard(wf, "step")  # doctest: +SKIP
        >>> guard.install()  # inside the command's main coroutine  # doctest: +SKIP
    """

    def __init__(self, wf: Workflow, command: str) -> None:
        self.wf = wf
        self.command = command
        self.signal: int | None = None
        self._main: asyncio.Task[object] | None = None
        self._installed = False

    def install(self) -> None:
        """Handle the signals in the running loop (call from the command's main task)."""
        self._main = asyncio.current_task()
        loop = asyncio.get_running_loop()
        try:
            for sig in _SIGNALS:
                loop.add_signal_handler(sig, self._on_signal, sig)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no support
            return
        self._installed = True

    def remove(self) -> None:
        """Give the signals back their default actions."""
        if not self._installed:
            return
        self._installed = False
        loop = asyncio.get_running_loop()
        for sig in _SIGNALS:
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                return

    @contextmanager
    def blocking(self) -> Generator[None]:
        """Around a call that blocks the event loop (an operator prompt), where the loop's
        handlers could not run: a signal raises :class:`Interrupted` there at once."""
        if not self._installed:
            yield
            return

        def stop(signum: int, _frame: FrameType | None) -> None:
            raise Interrupted(signum)

        self.remove()
        previous = {sig: signal.signal(sig, stop) for sig in _SIGNALS}
        try:
            yield
        except Interrupted as exc:
            self.signal = exc.signum
            click.echo(f"agentic-eval: {exc}: stopping {self.command}", err=True)
            self.release(str(exc))
            raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.signal is None:
                self.install()

    def release(self, name: str) -> list[ReleasedClaim]:
        """Release this process's claims as interrupted by ``name``, saying so on stderr."""
        from agentic_eval.core.process import this_process
        from agentic_eval.store.db import StoreError
        from agentic_eval.workflow.errors import WorkflowError

        held = self.wf.heartbeat.held()
        try:
            released = self.wf.interrupt(
                f"{name} received by agentic-eval {self.command} ({this_process()})"
            )
        except (StoreError, WorkflowError) as exc:
            click.echo(
                f"agentic-eval: {name}: could not release the claims held ({len(held)}): "
                f"{one_line(str(exc))}; each is released once its lease expires",
                err=True,
            )
            return []
        for r in released:
            click.echo(
                f"agentic-eval: {name}: released the claim of step {r.step_key} of job "
                f"{r.job_id} (attempt {r.attempt_number} interrupted)",
                err=True,
            )
        return released

    def _on_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        self.signal = sig
        click.echo(f"agentic-eval: {name}: stopping {self.command}", err=True)
        self.remove()  # a second signal acts at once
        self.release(name)
        if self._main is not None:
            self._main.cancel()

    def exit_code(self) -> int:
        """130 after SIGINT, 143 after SIGTERM."""
        return 128 + (self.signal or signal.SIGINT)


def echo(text: str) -> None:
    """Print ``text`` with control characters made visible (names come from the store)."""
    click.echo(printable(text))


def open_workflow() -> Workflow:
    from agentic_eval.store.db import Store, StoreError
    from agentic_eval.workflow.errors import WorkflowError
    from agentic_eval.workflow.service import Workflow

    try:
        return Workflow(Store())
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    except WorkflowError as exc:  # a bad AGENTIC_EVAL_CLAIM_LEASE
        raise click.UsageError(one_line(str(exc))) from None


def _when(claim: Claim | ReleasedClaim) -> str:
    if claim.lease_expires_at is None:
        return "claimed before leases existed"
    return f"lease expired at {claim.lease_expires_at.isoformat()}"


@click.group(
    cls=LazyGroup,
    lazy={
        "batch": LazyCommand(
            "agentic_eval.cli.workflow_batch:workflow_batch",
            "Drive --runs jobs from --fixture through every step of the workflow",
        ),
        "run": LazyCommand(
            "agentic_eval.cli.workflow_people:workflow_run",
            "Work jobs by hand, as operator NAME: the interactive operator REPL.",
        ),
        "users": LazyCommand(
            "agentic_eval.cli.workflow_people:users",
            "The workflow's users: operators decide (approve, reject, submit)",
        ),
    },
)
def workflow() -> None:
    """Operate the governed workflow's store (jobs live in $AGENTIC_EVAL_HOME or
    AGENTIC_EVAL_DATABASE_URL).

    \b
    Claims are leases: the process holding a claim renews it every third of the lease
    (AGENTIC_EVAL_CLAIM_LEASE seconds, default 120) while its agent works. A claim whose
    process died stops being renewed; once its lease has expired, the next claim of its step
    releases it (its attempt is marked abandoned), and so does `workflow recover`.
    """


@workflow.command()
@click.option(
    "--as",
    "operator",
    default=None,
    metavar="NAME",
    help="Record the releases as this operator's (default: the agentic-eval system user).",
)
@click.option("--dry-run", is_flag=True, help="List the expired claims; release nothing.")
def recover(operator: str | None, dry_run: bool) -> int:
    """Release every expired claim: its attempt becomes abandoned, its step pending again.

    \b
    Each release is a transition of the step naming the old claimant, the process that held
    the claim and when its lease expired. A claim still being renewed is never touched.
    Exit 0 (also when there is nothing to release), 1 on a store error.
    Examples:
      agentic-eval workflow recover
      agentic-eval workflow recover --dry-run
      agentic-eval workflow recover --as olivia
    """
    from agentic_eval.store.db import StoreError
    from agentic_eval.workflow.errors import NotAnOperator, NotFound, WorkflowError

    if operator is not None and not operator.strip():
        raise click.UsageError("--as is empty")
    wf = open_workflow()
    try:
        actor = wf.user_named(operator).id if operator is not None else None
        if dry_run:
            expired = wf.expired_claims()
            for c in expired:
                held = f", held by {c.holder}" if c.holder else ""
                echo(
                    f"expired: claim {c.id} of step {c.step_key} of job {c.job_id}, claimed by "
                    f"{wf.user(c.claimant_id).name}{held}, {_when(c)}"
                )
            echo(f"{len(expired)} expired claim(s); nothing released (--dry-run)")
            return 0
        released = wf.recover(actor)
    except (NotFound, NotAnOperator) as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except (StoreError, WorkflowError) as exc:
        raise CannotRun(one_line(str(exc))) from None
    for r in released:
        held = f", held by {r.holder}" if r.holder else ""
        echo(
            f"released: claim {r.claim_id} of step {r.step_key} of job {r.job_id} (attempt "
            f"{r.attempt_number} abandoned), claimed by {r.claimant}{held}, {_when(r)}; "
            f"recorded as {r.released_by}'s"
        )
    echo(f"{len(released)} expired claim(s) released")
    return 0
