"""``agentic-eval rescore``: re-judge recorded samples under today's checks, keyless."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentic_eval.cli.common import recordings_root, resolve_domains
from agentic_eval.cli.options import recordings_option
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.text import one_line
from agentic_eval.core.transcript import Verdict

if TYPE_CHECKING:
    from agentic_eval.evaluation.rescore import Folder


@click.command()
@click.argument("domains", nargs=-1)
@click.option("--agent", default=None, help="Only this agent's recordings.")
@recordings_option
@click.option(
    "--dry-run",
    is_flag=True,
    help="Replay and print what would change; write nothing.",
)
def rescore(domains: tuple[str, ...], agent: str | None, recordings: Path, dry_run: bool) -> int:
    """Re-judge the recordings of DOMAINS (default: every recorded domain) under today's checks.

    Each sample is replayed through the same loop and tools as `run`, with no key and no
    network. Where the trace reproduces exactly (requests, turns, tool calls, policy events,
    output, provenance) and only the verdict differs, the transcript is written back with the
    recomputed verdict, and the agent folder's scorecard.json is rebuilt from its transcripts
    as a record run would write it. Nothing else changes; no history is written.

    A sample whose trace does not reproduce (an edited response, tool result or request, a
    changed prompt or tool, a broken or missing file) is refused, naming the case and the
    first differing field, and its whole folder is left untouched: a scorecard must match its
    transcripts, all judged by the same checks. Recordings of real fixtures (EVAL_FIXTURE_DIR)
    are not rewritten inside a git work tree (--dry-run may read them).

    \b
    Exit codes: 0 nothing refused, 1 a sample was refused, 2 usage error.
    \b
    Examples:
      agentic-eval rescore --dry-run
      agentic-eval rescore approval_audit --agent reference
    """
    from agentic_eval.evaluation.rescore import RescoreError, plan_rescore

    try:
        folders = plan_rescore(
            resolve_domains(domains),
            recordings_root(domains, recordings),
            agent,
            named=bool(domains),
            dry_run=dry_run,
        )
    except RescoreError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    return run_sync(_rescore_all(folders, dry_run))


async def _rescore_all(folders: list[Folder], dry_run: bool) -> int:
    from agentic_eval.evaluation.rescore import rescore_folder
    from agentic_eval.recordings.files import RecordingError

    refused_samples = refused_folders = 0
    for folder in folders:
        try:
            done = await rescore_folder(folder, dry_run=dry_run)
        except (RecordingError, OSError) as exc:  # a file that cannot be written
            detail = str(exc) if isinstance(exc, RecordingError) else f"{exc.strerror or exc}"
            click.echo(
                f"agentic-eval: error: {folder.domain.name} / {folder.agent}: cannot write: "
                f"{one_line(detail)} (run rescore again to finish the folder)",
                err=True,
            )
            return 1
        click.echo(f"{done.suite} / {done.agent}")
        for change in done.changes:
            name = change.case_id if change.sample == 0 else f"{change.case_id}@{change.sample}"
            click.echo(f"  {name}: {_describe(change.old, change.new)}")
        if done.problem:
            click.echo(f"  refused: {one_line(done.problem)}")
        for refusal in done.refusals:
            click.echo(f"  refused: {one_line(refusal.problem)}")
        counts = (
            f"  {len(done.changes)} re-judged, {done.unchanged} unchanged, "
            f"{done.refused_samples} refused"
        )
        if done.not_replayed:
            counts += f" ({done.not_replayed} not replayed)"
        if done.refused:
            refused_folders += 1
            refused_samples += done.refused_samples
            click.echo(f"{counts}: folder left untouched")
            continue
        files = len(done.changes) + int(done.scorecard_changed)
        what = _files(len(done.changes), done.scorecard_changed)
        if not files:
            click.echo(f"{counts}: nothing to write")
        elif dry_run:
            click.echo(f"{counts}: dry run, would rewrite {what}; wrote nothing")
        else:
            click.echo(f"{counts}: rewrote {what}")
    if refused_folders:
        s = "s" if refused_samples != 1 else ""
        f = "s" if refused_folders != 1 else ""
        click.echo(
            f"agentic-eval: error: {refused_samples} sample{s} refused in {refused_folders} "
            f"folder{f}; left untouched",
            err=True,
        )
        return 1
    return 0


def _files(transcripts: int, scorecard: bool) -> str:
    parts = [f"{transcripts} transcript{'s' if transcripts != 1 else ''}"] if transcripts else []
    if scorecard:
        parts.append("scorecard.json")
    return " and ".join(parts)


def _verdict(v: Verdict) -> str:
    gates = [c.name for c in v.checks if c.hard_gate and not c.passed]
    return f"{v.outcome.kind} [{', '.join(gates)}]" if gates else v.outcome.kind


def _describe(old: Verdict, new: Verdict) -> str:
    """``old outcome [failed hard gates] -> new outcome [failed hard gates]``, and which checks
    moved when that reads the same on both sides (a check added that passes, a soft check
    that now fails, a message that changed)."""
    was, now = _verdict(old), _verdict(new)
    if was != now:
        return f"{was} -> {now}"
    before = {c.name: c for c in old.checks}
    groups: dict[str, list[str]] = {
        "now failing": [],
        "now passing": [],
        "added": [],
        "removed": [n for n in before if n not in {c.name for c in new.checks}],
        "changed": [],
    }
    for check in new.checks:
        prior = before.get(check.name)
        if prior is None:
            groups["added"].append(check.name if check.passed else f"{check.name} (failing)")
        elif prior.passed != check.passed:
            groups["now passing" if check.passed else "now failing"].append(check.name)
        elif prior != check:
            groups["changed"].append(check.name)
    parts = [f"{label}: {', '.join(names)}" for label, names in groups.items() if names]
    return f"{was} -> {now} ({'; '.join(parts) if parts else 'outcome text changed'})"
