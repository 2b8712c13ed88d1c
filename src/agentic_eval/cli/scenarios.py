"""``agentic-eval scenarios``: replay every recorded workflow scenario, keyless."""

from __future__ import annotations

from pathlib import Path

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.cli.options import recordings_option
from agentic_eval.core.text import one_line


@click.command()
@recordings_option
@click.option("--agent", default=None, help="Only this agent's recordings.")
def scenarios_cmd(recordings: Path, agent: str | None) -> int:
    """Replay every recorded workflow scenario of every agent, keyless, each in a freshly seeded
    job, and print one row per scenario and agent.

    \b
    Exit 0 when every recording is reproduced in every field (an agent's failures included:
    a hallucinating agent's recorded check_failed must come back check_failed), 1 if not.
    Every recorded epoch (NAME@N.json) replays in a job of its own; rejection rounds recorded
    by `step --interactive` (attempts after the first, NAME#2.json...) are replayed after their
    epoch's first attempt: the operator rejects each round with the reason its recording was
    given.
    SIGINT/SIGTERM release the claim in flight as interrupted and exit 130 / 143.
    """
    from agentic_eval.cli.scenarios_run import replay_all
    from agentic_eval.cli.step_view import echo
    from agentic_eval.core.aio import run as run_sync
    from agentic_eval.domains.fixtures import FixtureError
    from agentic_eval.store.db import StoreError
    from agentic_eval.workflow.errors import WorkflowError
    from agentic_eval.workflow.heartbeat import lease_seconds

    try:
        lease_seconds()
    except WorkflowError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    try:
        done = run_sync(replay_all(recordings, agent))
    except (FixtureError, StoreError, WorkflowError) as exc:
        raise CannotRun(one_line(str(exc))) from None
    if isinstance(done, int):
        return done
    lines, failures = done
    if not lines:
        raise click.UsageError(f"no scenario recordings under {recordings}")
    echo("| workflow | scenario | agent | produced by | outcome | failed checks | replay |")
    echo("|---|---|---|---|---|---|---|")
    for line in lines:
        echo(line)
    echo(f"{len(lines) - failures}/{len(lines)} scenario recordings reproduced")
    return 1 if failures else 0
