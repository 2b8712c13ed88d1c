"""What ``agentic-eval scenarios`` runs: the replay of every recorded workflow scenario, one
Markdown row each (imported when the command runs, not for its ``--help``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from agentic_eval.cli.workflow import ClaimGuard
from agentic_eval.core.text import one_line
from agentic_eval.evaluation.scenario import StepRun
from agentic_eval.evaluation.scenario_replay import label as replay_label
from agentic_eval.evaluation.scenario_replay import replay_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.files import RecordingError, list_agents
from agentic_eval.recordings.layout import (
    agent_dir,
)
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.report.escape import markdown_cell
from agentic_eval.store.db import Store, StoreError
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.scenarios import scenarios
from agentic_eval.workflow.service import Workflow


def _md(*cells: str) -> str:
    """One Markdown table row, every cell escaped for its document."""
    return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"


def _row(label: str, key: str, agent: str, produced: str, run: StepRun) -> str:
    failed = ", ".join(dict.fromkeys(c.name for c in run.case.result.checks if not c.passed))
    replay = "reproduced" if run.case.reproduced else f"NOT reproduced: {run.case.problem}"
    return _md(key, label, agent, produced, run.outcome.kind, failed or "-", one_line(replay, 200))


async def replay_all(recordings: Path, only: str | None) -> tuple[list[str], int] | int:
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
            names = sorted({k.case_id for k in backend.files})
            for name in names:
                s = found.get(name)
                if s is None or s.workflow.key != key:
                    lines.append(
                        _md(key, name, agent, produced, "-", "-", "NOT reproduced: no such "
                            "scenario is registered")
                    )  # fmt: skip
                    failures += 1
                    continue
                for sample_key, run in await replay_scenario(wf, s, backend, settings):
                    label = replay_label(sample_key)
                    if isinstance(run, str):
                        lines.append(
                            _md(key, label, agent, produced, "-", "-", f"NOT reproduced: {run}")
                        )
                        failures += 1
                        continue
                    failures += run.case.reproduced is not True
                    lines.append(_row(label, key, agent, produced, run))
    return lines, failures
