"""``agentic-eval corpus``: the jobs a human already decided, as the corpus would replay them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from agentic_eval.cli.common import CannotRun
from agentic_eval.cli.options import MOMENT
from agentic_eval.cli.workflow import echo, open_workflow
from agentic_eval.core.text import one_line

ORIGINS = ("real", "scenario", "workflow-batch", "imported")
"""``workflow.records.JOB_ORIGINS``, spelled out so that building the command imports no part of
the workflow package (and its SQLAlchemy); a test holds the two equal."""


@click.group()
def corpus() -> None:
    """The corpus: every workflow step an operator decided, on jobs a human worked (origin real or
    imported), judged by its first decision."""


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@corpus.command("list")
@click.option("--template", default=None, help="Only jobs of this workflow template.")
@click.option("--since", type=MOMENT, default=None,
              help="Only jobs created at or after this moment (UTC).")  # fmt: skip
@click.option("--until", type=MOMENT, default=None,
              help="Only jobs created before this moment (UTC).")  # fmt: skip
@click.option("--limit", type=click.IntRange(1), default=None, help="At most N cases, newest.")
@click.option("--origin", "origins", multiple=True, type=click.Choice(ORIGINS),
              help="Jobs of this origin (repeatable; default: real and imported). Scenario and "
              "workflow-batch jobs were decided by an eval, not a human.")  # fmt: skip
def list_cases(
    template: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int | None,
    origins: tuple[Any, ...],
) -> None:
    """List the corpus, newest job first: job, step, the first decision's verdict and reason,
    template, origin and when the step was first claimed (what a replay serves is as of then).

    \b
    Example:
      agentic-eval corpus list --template lead_intelligence --since 2026-11-01 --limit 20
    """
    from agentic_eval.corpus import corpus_cases
    from agentic_eval.store.db import StoreError
    from agentic_eval.workflow.records import HUMAN_ORIGINS

    wf = open_workflow()
    try:
        cases = corpus_cases(
            wf, template=template, since=_utc(since), until=_utc(until), limit=limit,
            origins=origins or HUMAN_ORIGINS,
        )  # fmt: skip
    except ValueError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    finally:
        wf.store.close()
    if not cases:
        chosen = ", ".join(origins or HUMAN_ORIGINS)
        echo(f"no decided steps of {chosen} jobs match: the corpus is empty")
        return
    echo(f"{'job':36}  {'step':16}  {'verdict':8}  {'template':20}  {'origin':14}  first claimed")
    for c in cases:
        echo(
            f"{c.job.id:36}  {c.step_key:16}  {c.verdict:8}  {c.job.template_key:20}  "
            f"{c.job.origin:14}  {c.first_claimed_at.isoformat(timespec='seconds')}"
        )
        if c.feedback:
            echo(f"{'':36}  reason: {one_line(c.feedback[0], 200)}")
    approved = sum(1 for c in cases if c.verdict == "approved")
    echo(f"{len(cases)} case(s): {approved} approved (judged), {len(cases) - approved} rejected")


@corpus.command("show")
@click.argument("sample_id", type=click.IntRange(1), metavar="SAMPLE_ID")
def show(sample_id: int) -> None:
    """Show the exact human decision corpus sample SAMPLE_ID was judged against: the job, the
    step, its first attempt and claim (what the replay served is as of then), the operator, the
    verdict, the reason and the time. Sample ids are in `agentic-eval corpus samples RUN_ID`.

    \b
    Example:
      agentic-eval corpus show 1042
    """
    from agentic_eval.corpus import judged_against
    from agentic_eval.store.db import StoreError
    from agentic_eval.workflow.errors import WorkflowError

    wf = open_workflow()
    try:
        j = judged_against(wf.store, sample_id)
    except WorkflowError as exc:
        raise click.UsageError(one_line(str(exc))) from None
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    finally:
        wf.store.close()
    claimed = j.first_claim.claimed_at.isoformat(timespec="seconds")
    decided = j.decision.at.isoformat(timespec="seconds")
    outcome = j.outcome + (f": {one_line(j.reason, 200)}" if j.reason else "")
    judged = "judged" if j.verdict == "approved" else "not judged"
    title = one_line(j.job.title or "-", 80)
    echo(f"sample:    {j.sample_id} of run {j.run_id}, epoch {j.epoch}: {outcome}")
    echo(f"job:       {j.job.id} ({title}; template {j.job.template_key}, origin {j.job.origin})")
    echo(f"step:      {j.step_key}")
    echo(f"attempt:   {j.first_attempt.number} (first claimed {claimed})")
    echo(f"decision:  {j.verdict} ({judged}) by {j.operator.name} at {decided}")
    if j.decision.reason:
        echo(f"reason:    {one_line(j.decision.reason, 400)}")


@corpus.command("samples")
@click.argument("run_id")
def samples(run_id: str) -> None:
    """List the samples of corpus run RUN_ID: sample id, case, epoch, the human verdict it was
    stamped with, and its outcome (`corpus show SAMPLE_ID` shows the decision behind one)."""
    from agentic_eval.store.db import StoreError

    wf = open_workflow()
    try:
        rows = [r for r in wf.store.samples(run_id) if r.source_job_id is not None]
    except StoreError as exc:
        raise CannotRun(one_line(str(exc))) from None
    finally:
        wf.store.close()
    if not rows:
        raise click.UsageError(f"run {run_id} has no corpus samples in the store")
    echo(f"{'sample':>8}  {'verdict':8}  {'outcome':12}  epoch  case")
    for r in sorted(rows, key=lambda r: r.id):
        echo(f"{r.id:>8}  {r.case_verdict or '':8}  {r.outcome:12}  {r.sample:>5}  {r.case_id}")
