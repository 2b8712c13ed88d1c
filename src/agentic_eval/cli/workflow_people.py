"""``agentic-eval workflow users`` (who may act on jobs) and ``workflow run --operator NAME``
(the interactive operator REPL, :mod:`agentic_eval.cli.workflow_repl`)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import click

from agentic_eval.cli.options import provider_options, request_options
from agentic_eval.cli.workflow import ClaimGuard, Interrupted, echo, open_workflow
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.text import one_line

ROLES = ("operator", "agent", "worker", "system")
"""``workflow.records.ROLES``, spelled out so building the command imports no workflow code."""


@click.group()
def users() -> None:
    """The workflow's users: operators decide (approve, reject, submit), agents and workers
    attempt steps."""


@users.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), default="operator", show_default=True)
def add_user(name: str, role: str) -> None:
    """Add the user NAME (nothing changes when it exists with that role).

    \b
    Example:
      agentic-eval workflow users add olivia
    """
    from agentic_eval.workflow.errors import WorkflowError

    wf = open_workflow()
    try:
        user = wf.ensure_user(name, role=role)
    except WorkflowError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    finally:
        wf.store.close()
    echo(f"user {user.name} ({user.role}) {user.id}")


@users.command("list")
def list_users() -> None:
    """Every user: name, role, id."""
    wf = open_workflow()
    try:
        found = wf.users()
    finally:
        wf.store.close()
    for u in found:
        echo(f"{u.name:24} {u.role:9} {u.id}")


@click.command("run")
@click.option("--operator", required=True, metavar="NAME",
              help="The operator you are: every decision and submission is attributed to this "
              "user, who must exist (`workflow users add NAME`).")  # fmt: skip
@click.option("--agent", default=None,
              help="scripted: the agent attempting steps (default reference); live: the "
              "label.")  # fmt: skip
@provider_options
@request_options
def workflow_run(
    operator: str,
    agent: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    retries: int,
    timeout: float,
) -> int:
    """Work jobs by hand, as operator NAME: the interactive operator REPL.

    \b
    Create a job from a job fixture, have the agent attempt a step, inspect its output with
    every check's result, approve, reject with a reason (the agent's feedback on its next
    attempt), run it again, or submit an output of your own; `history` shows the job's
    transitions. Type `help` for the commands; any unique prefix works (`a` approves, `r`
    rejects); line editing and history come from readline. Exit 0 at `quit` or end of input,
    2 for an unknown operator, 130/143 when interrupted (claims held are released).
    \b
    Example:
      agentic-eval workflow users add olivia
      agentic-eval workflow run --operator olivia
      wf[no job]> new acme-widgets-a
      wf[job 5f0e1c2a]> run
      wf[job 5f0e1c2a, research]> a
    """
    from agentic_eval.backends.base import BackendError
    from agentic_eval.backends.spec import BackendSpec
    from agentic_eval.batch import build_backend
    from agentic_eval.workflow.errors import NotFound

    if provider is None and (model or base_url):
        raise click.UsageError("--model and --base-url need --provider (a live agent)")
    if provider is not None and not model:
        raise click.UsageError("a live agent needs --provider and --model")
    wf = open_workflow()
    try:
        user = wf.user_named(operator)
    except NotFound:
        wf.store.close()
        raise click.UsageError(
            f"no user {operator!r}: add the operator first (agentic-eval workflow users add "
            f"{operator})"
        ) from None
    if user.role != "operator":
        wf.store.close()
        raise click.UsageError(f"user {operator} is a {user.role}, not an operator")
    spec = BackendSpec(kind="scripted", agent=agent or "reference")
    if provider is not None:
        spec = BackendSpec(kind="live", provider=provider, model=model or "", base_url=base_url,
                           label=agent, retries=retries, timeout=timeout)  # fmt: skip
    try:
        backend = build_backend(spec, "lead_intelligence", _agents())
    except BackendError as exc:
        wf.store.close()
        raise click.UsageError(one_line(str(exc))) from None
    return run_sync(_loop(wf, user, backend, spec))


def _agents() -> dict[str, Any]:
    from agentic_eval.workflow.scenarios import scripted_agents, workflows

    found: dict[str, Any] = {}
    for key in workflows():
        found.update(scripted_agents(key))
    return found


async def _loop(wf: Any, user: Any, backend: Any, spec: Any) -> int:
    from agentic_eval.batch.planning import model_name
    from agentic_eval.cli.workflow_repl import ReplSession
    from agentic_eval.evaluation.settings import RunSettings
    from agentic_eval.store.db import home_dir

    session = ReplSession(wf, user, backend, RunSettings(model_name(spec)))
    guard = ClaimGuard(wf, "workflow run")
    guard.install()
    history = _readline(home_dir() / "workflow-run-history")
    echo(f"operator {user.name}: `help` lists the commands, `quit` leaves")
    try:
        while not session.done:
            try:
                with guard.blocking():
                    line = input(session.prompt())
            except EOFError:
                echo("")
                break
            await session.execute(line)
    except (asyncio.CancelledError, Interrupted):  # the guard released this process's claims
        if guard.signal is None:
            raise
        return guard.exit_code()
    finally:
        guard.remove()
        if history is not None:
            history()
        await backend.aclose()
        wf.store.close()
    return 0


def _readline(path: Path) -> Any:
    """Line editing and a history kept in ``path`` (when readline exists here); returns what
    saves the history at the end."""
    try:
        import readline
    except ImportError:  # pragma: no cover - CPython on Linux and macOS has it
        return None
    with contextlib.suppress(OSError):  # none yet
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):  # a history not kept never fails the session
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)

    return save
