"""``agentic-eval scenarios``: replay every recorded workflow scenario, keyless."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from agentic_eval.cli.step_view import echo
from agentic_eval.core.text import one_line
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.evaluation.scenario import StepRun, run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.files import RecordingError, list_agents
from agentic_eval.recordings.layout import DEFAULT_RECORDINGS, agent_dir
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.store.db import Store, StoreError
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.scenarios import AgentScenario, scenarios
from agentic_eval.workflow.service import Workflow


def _row(s: AgentScenario, agent: str, produced: str, run: StepRun) -> str:
    failed = ", ".join(dict.fromkeys(c.name for c in run.case.result.checks if not c.passed))
    replay = "reproduced" if run.case.reproduced else f"NOT reproduced: {run.case.problem}"
    return (
        f"| {s.workflow.key} | {s.name} | {agent} | {produced} | {run.outcome.kind} | "
        f"{failed or '-'} | {one_line(replay, 200)} |"
    )


async def _replay_all(recordings: Path, only: str | None) -> tuple[list[str], int]:
    found = scenarios()
    wf = Workflow(Store())
    lines: list[str] = []
    failures = 0
    for key in dict.fromkeys(s.workflow.key for s in found.values()):
        for agent in list_agents(recordings, key):
            if only is not None and agent != only:
                continue
            try:
                backend = ReplayBackend(agent_dir(recordings, key, agent))
            except RecordingError as exc:
                lines.append(f"| {key} | - | {agent} | - | - | - | broken: {one_line(str(exc))} |")
                failures += 1
                continue
            info = backend.info()
            produced = (
                "scripted agent (no model)"
                if info.agent_kind == "scripted"
                else f"model {info.model} via {info.backend}"
            )
            settings = RunSettings.from_parameters(info.model, backend.parameters())
            recorded = {case for case, sample in backend.paths if sample == 0}
            for s in found.values():
                if s.workflow.key != key or s.name not in recorded:
                    continue
                run = await run_scenario(wf, s, backend, settings, mode="replay")
                failures += run.case.reproduced is not True
                lines.append(_row(s, agent, produced, run))
    return lines, failures


@click.command()
@click.option(
    "--recordings",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_RECORDINGS,
    show_default=True,
    help="Root folder of the recordings.",
)
@click.option("--agent", default=None, help="Only this agent's recordings.")
def scenarios_cmd(recordings: Path, agent: str | None) -> int:
    """Replay every recorded workflow scenario of every agent, keyless, each in a freshly seeded
    job, and print one row per scenario and agent.

    \b
    Exit 0 when every recording is reproduced in every field (an agent's failures included:
    a hallucinating agent's recorded check_failed must come back check_failed), 1 if not.
    Rejection rounds recorded by `step --interactive` (samples after the first) are replayed
    with `step --interactive --backend replay` and the same reasons.
    """
    try:
        lines, failures = asyncio.run(_replay_all(recordings, agent))
    except (FixtureError, StoreError, WorkflowError) as exc:
        raise click.ClickException(one_line(str(exc))) from None
    if not lines:
        raise click.UsageError(f"no scenario recordings under {recordings}")
    echo("| workflow | scenario | agent | produced by | outcome | failed checks | replay |")
    echo("|---|---|---|---|---|---|---|")
    for line in lines:
        echo(line)
    echo(f"{len(lines) - failures}/{len(lines)} scenario recordings reproduced")
    return 1 if failures else 0
