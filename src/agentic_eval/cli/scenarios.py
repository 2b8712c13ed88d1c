"""``agentic-eval scenarios``: replay every recorded workflow scenario, keyless."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import click

from agentic_eval.cli.options import recordings_option
from agentic_eval.cli.step_view import echo
from agentic_eval.cli.workflow import ClaimGuard
from agentic_eval.core.task import parse_task_inputs
from agentic_eval.core.text import one_line
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.evaluation.scenario import StepRun, reject_and_retry, run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.files import RecordingError, list_agents, read_transcript
from agentic_eval.recordings.layout import agent_dir
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.report.escape import markdown_cell
from agentic_eval.store.db import Store, StoreError
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.scenarios import AgentScenario, scenarios
from agentic_eval.workflow.service import Workflow


def _md(*cells: str) -> str:
    """One Markdown table row, every cell escaped for its document."""
    return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"


def _row(label: str, key: str, agent: str, produced: str, run: StepRun) -> str:
    failed = ", ".join(dict.fromkeys(c.name for c in run.case.result.checks if not c.passed))
    replay = "reproduced" if run.case.reproduced else f"NOT reproduced: {run.case.problem}"
    return _md(key, label, agent, produced, run.outcome.kind, failed or "-", one_line(replay, 200))


def _round_reason(backend: ReplayBackend, name: str, sample: int) -> str | None:
    """The rejection reason a recorded round ``sample`` was given: the newest feedback in its
    task (None when the recording is unreadable or carries none)."""
    try:
        transcript = read_transcript(backend.paths[(name, sample)])
        task = transcript.turns[0].appended[0].text() if transcript.turns else ""
    except (RecordingError, IndexError):
        return None
    feedback: Any = parse_task_inputs(task).get("feedback")
    if not isinstance(feedback, list) or not feedback:
        return None
    return str(cast(list[Any], feedback)[-1])


async def _replay_scenario(
    wf: Workflow, s: AgentScenario, backend: ReplayBackend, settings: RunSettings
) -> list[tuple[int, StepRun | str]]:
    """Sample 0 in a freshly seeded job, then each recorded rejection round with its reason."""
    run = await run_scenario(wf, s, backend, settings, mode="replay")
    rounds: list[tuple[int, StepRun | str]] = [(0, run)]
    later = sorted(n for case, n in backend.paths if case == s.name and n > 0)
    for n in later:
        reason = _round_reason(backend, s.name, n)
        previous = rounds[-1][1]
        if reason is None or not isinstance(previous, StepRun):
            rounds.append((n, "no rejection reason to replay it with"))
            break
        transcript = previous.case.transcript
        if transcript is None or transcript.output is None:
            rounds.append((n, f"round {n - 1} submitted nothing an operator could reject"))
            break
        run = await reject_and_retry(
            wf, previous, reason, workflow=s.workflow, backend=backend, settings=settings,
            case_id=s.name, extra_checks=s.checks, external_fixtures=s.external_fixtures,
            mode="replay",
        )  # fmt: skip
        rounds.append((n, run))
    return rounds


async def _replay_all(recordings: Path, only: str | None) -> tuple[list[str], int] | int:
    """The rows and the failures; or the exit code 130 / 143 when a signal stopped it (the
    claims this process held released as interrupted)."""
    wf = Workflow(Store())
    guard = ClaimGuard(wf, "scenarios")
    guard.install()
    try:
        return await _replay_each(wf, recordings, only)
    except asyncio.CancelledError:
        if guard.signal is None:
            raise
        return guard.exit_code()
    except (WorkflowError, StoreError):
        if guard.signal is not None:  # the clean-up of an interrupted attempt
            return guard.exit_code()
        raise
    finally:
        guard.remove()


async def _replay_each(wf: Workflow, recordings: Path, only: str | None) -> tuple[list[str], int]:
    found = scenarios()
    lines: list[str] = []
    failures = 0
    for key in dict.fromkeys(s.workflow.key for s in found.values()):
        recorded_agents = list_agents(recordings, key)
        if only is not None and only not in recorded_agents:
            known = ", ".join(recorded_agents) or "none"
            raise click.UsageError(
                f"no recordings of agent {only!r} for {key} under {recordings} (recorded: {known})"
            )
        for agent in recorded_agents:
            if only is not None and agent != only:
                continue
            try:
                backend = ReplayBackend(agent_dir(recordings, key, agent))
            except RecordingError as exc:
                lines.append(_md(key, "-", agent, "-", "-", "-", f"broken: {one_line(str(exc))}"))
                failures += 1
                continue
            info = backend.info()
            produced = (
                "scripted agent (no model)"
                if info.agent_kind == "scripted"
                else f"model {info.model} via {info.backend}"
            )
            settings = RunSettings.from_parameters(info.model, backend.parameters())
            names = sorted({case for case, _ in backend.paths})
            for name in names:
                s = found.get(name)
                if s is None or s.workflow.key != key:
                    lines.append(
                        _md(key, name, agent, produced, "-", "-", "NOT reproduced: no such "
                            "scenario is registered")
                    )  # fmt: skip
                    failures += 1
                    continue
                for n, run in await _replay_scenario(wf, s, backend, settings):
                    label = s.name if n == 0 else f"{s.name} (rejection round {n})"
                    if isinstance(run, str):
                        lines.append(
                            _md(key, label, agent, produced, "-", "-", f"NOT reproduced: {run}")
                        )
                        failures += 1
                        continue
                    failures += run.case.reproduced is not True
                    lines.append(_row(label, key, agent, produced, run))
    return lines, failures


@click.command()
@recordings_option
@click.option("--agent", default=None, help="Only this agent's recordings.")
def scenarios_cmd(recordings: Path, agent: str | None) -> int:
    """Replay every recorded workflow scenario of every agent, keyless, each in a freshly seeded
    job, and print one row per scenario and agent.

    \b
    Exit 0 when every recording is reproduced in every field (an agent's failures included:
    a hallucinating agent's recorded check_failed must come back check_failed), 1 if not.
    Rejection rounds recorded by `step --interactive` (samples after the first) are replayed
    too: the operator rejects each round with the reason its recording was given.
    SIGINT/SIGTERM release the claim in flight as interrupted and exit 130 / 143.
    """
    from agentic_eval.workflow.heartbeat import lease_seconds

    try:
        lease_seconds()
    except WorkflowError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    try:
        done = asyncio.run(_replay_all(recordings, agent))
    except (FixtureError, StoreError, WorkflowError) as exc:
        raise click.ClickException(one_line(str(exc))) from None
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
