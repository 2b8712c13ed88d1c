"""``agentic-eval workflow run --operator NAME``: the interactive operator REPL (the seed's
``wf_run``).

A person works jobs by hand: creates one from a job fixture, has the agent attempt a step,
inspects the output with every check's result, approves, rejects with a reason (the agent's
feedback on its next attempt), runs the step again, or submits an output of their own. Every
job created, approval, rejection and submission is attributed to the named operator, who must
exist (``workflow users add``). Line editing and history come from readline; a command may be
abbreviated to any unique prefix (``a`` approves, ``r`` rejects).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentic_eval.agent.tools import first_validation_error
from agentic_eval.backends.base import ModelBackend
from agentic_eval.cli.step_view import echo, print_attempt
from agentic_eval.core.text import one_line
from agentic_eval.evaluation.scenario import StepRun, attempt_step
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.operators import OperatorDecision
from agentic_eval.workflow.records import Job, User
from agentic_eval.workflow.scenarios import job_fixtures, workflows
from agentic_eval.workflow.service import Workflow

HELP: dict[str, str] = {
    "help": "help [COMMAND]: the commands, or one command's help",
    "fixtures": "fixtures: the job fixtures a new job can start from",
    "new": "new FIXTURE: create a job from a job fixture (origin real, created by you) and open it",
    "jobs": "jobs: the newest jobs",
    "open": "open JOB: work on a job (a unique prefix of its id will do)",
    "status": "status: the open job's steps and their states",
    "run": "run [STEP]: the agent attempts STEP (default: the first step not approved)",
    "show": "show: the last attempt again: its output, each check, its outcome",
    "approve": "approve [REASON] (a): approve the last attempt",
    "reject": "reject REASON (r): reject the last attempt; REASON is the agent's feedback",
    "rerun": "rerun: the agent attempts the last attempt's step again",
    "submit": "submit JSON | submit @FILE: submit an output of your own for the first step not "
    "approved (validated against the step's output model); approve or reject it next",
    "history": "history: every transition of the open job, oldest first, with who and why",
    "quit": "quit: leave (an undecided attempt stays submitted)",
}
ALIASES = {"a": "approve", "r": "reject", "?": "help", "exit": "quit"}


class ReplError(Exception):
    """A command that cannot be done now (one line, and the REPL goes on)."""


@dataclass
class ReplSession:
    """The REPL's state and commands, apart from the terminal (so tests can drive it)."""

    wf: Workflow
    operator: User
    backend: ModelBackend
    settings: RunSettings
    job: Job | None = None
    last: StepRun | None = None
    """The agent's last attempt (``show``, ``rerun``)."""
    pending: str | None = None
    """The attempt the next approve or reject decides: the last one run or submitted."""
    done: bool = False
    commands: dict[str, Callable[[list[str]], Awaitable[None]]] = field(default_factory=lambda: {})

    def __post_init__(self) -> None:
        self.commands = {
            "help": self.help, "fixtures": self.fixtures, "new": self.new, "jobs": self.jobs,
            "open": self.open, "status": self.status, "run": self.run, "show": self.show,
            "approve": self.approve, "reject": self.reject, "rerun": self.rerun,
            "submit": self.submit, "history": self.history, "quit": self.quit,
        }  # fmt: skip

    def resolve(self, word: str) -> str:
        """The command ``word`` names: itself, an alias, or the one command it is a prefix of.

        Raises:
            ReplError: Unknown or ambiguous.
        """
        word = ALIASES.get(word, word)
        if word in self.commands:
            return word
        matches = [c for c in self.commands if c.startswith(word)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ReplError(f"{word!r} is ambiguous: {', '.join(matches)}")
        raise ReplError(f"unknown command {word!r} (help lists them)")

    async def execute(self, line: str) -> None:
        """Run one command line; a :class:`ReplError` or a workflow refusal is one line."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            echo(f"error: {exc}")
            return
        if not words:
            return
        try:
            await self.commands[self.resolve(words[0])](words[1:])
        except (ReplError, WorkflowError) as exc:
            echo(f"error: {one_line(str(exc), 400)}")

    def prompt(self) -> str:
        """``wf[job abcd1234, synthesize]>``: the open job and the last attempt's step."""
        where = f"job {self.job.id[:8]}" if self.job else "no job"
        if self.last is not None:
            where += f", {self.last.step_key}"
        return f"wf[{where}]> "

    def _job(self) -> Job:
        if self.job is None:
            raise ReplError("no job open: new FIXTURE, or open JOB")
        return self.job

    def _next_step(self) -> str:
        job = self._job()
        for step in self.wf.steps(job.id):
            if step.state != "approved":
                return step.key
        raise ReplError(f"every step of job {job.id} is approved: the job is done")

    async def help(self, args: list[str]) -> None:
        if args:
            echo(HELP[self.resolve(args[0])])
            return
        for text in HELP.values():
            echo(f"  {text}")

    async def fixtures(self, args: list[str]) -> None:
        del args
        for f in job_fixtures().values():
            echo(f"  {f.name:20} {f.workflow.key:20} {one_line(f.description, 80)}")

    async def new(self, args: list[str]) -> None:
        if len(args) != 1:
            raise ReplError("new FIXTURE (fixtures lists them)")
        known = job_fixtures()
        if args[0] not in known:
            raise ReplError(f"no job fixture {args[0]!r} (known: {', '.join(known)})")
        f = known[args[0]]
        flow = f.workflow
        self.wf.ensure_template(flow.key, flow.step_keys(), title=flow.title)
        self.job = self.wf.create_job(
            flow.key, created_by=self.operator.id, requirements=f.requirements,
            inputs=f.inputs, title=f"{f.name} (by {self.operator.name})", origin="real",
        )  # fmt: skip
        self.last = self.pending = None
        echo(f"job {self.job.id} created from {f.name}: steps {', '.join(flow.step_keys())}")

    async def jobs(self, args: list[str]) -> None:
        del args
        for job in self.wf.jobs()[:20]:
            echo(f"  {job.id}  {job.state:11}  {job.origin:14}  {one_line(job.title, 60)}")

    async def open(self, args: list[str]) -> None:
        if len(args) != 1:
            raise ReplError("open JOB")
        found = [j for j in self.wf.jobs() if j.id.startswith(args[0])]
        if len(found) != 1:
            raise ReplError(f"{len(found)} jobs' ids start with {args[0]!r}: give more of it")
        if found[0].template_key not in workflows():
            raise ReplError(f"job {found[0].id} is of template {found[0].template_key!r}, "
                            "which no workflow here defines")  # fmt: skip
        self.job, self.last, self.pending = found[0], None, None
        await self.status([])

    async def status(self, args: list[str]) -> None:
        del args
        job = self.wf.job(self._job().id)
        echo(f"job {job.id} ({job.state}, {job.origin}): {one_line(job.title, 80)}")
        for step in self.wf.steps(job.id):
            attempts = self.wf.attempts(job.id, step.key)
            echo(f"  {step.key:16} {step.state:10} {len(attempts)} attempt(s)")

    async def run(self, args: list[str]) -> None:
        job = self._job()
        step = args[0] if args else self._next_step()
        flow = workflows()[job.template_key]
        self.last = await attempt_step(
            self.wf, job.id, step, workflow=flow, backend=self.backend, settings=self.settings,
            case_id=f"job.{job.id}.{step}",
        )  # fmt: skip
        self.pending = self.last.attempt_id
        print_attempt(self.last)

    async def rerun(self, args: list[str]) -> None:
        del args
        if self.last is None:
            raise ReplError("no attempt to run again: run [STEP]")
        await self.run([self.last.step_key])

    async def show(self, args: list[str]) -> None:
        del args
        if self.last is None:
            raise ReplError("no attempt yet: run [STEP]")
        print_attempt(self.last)

    async def _decide(self, decision: OperatorDecision) -> None:
        if self.pending is None:
            raise ReplError("no attempt to decide on: run [STEP] or submit")
        attempt = self.wf.attempt(self.pending)
        if attempt.status != "submitted":
            raise ReplError(f"attempt {attempt.number} at {attempt.step_key} is {attempt.status}: "
                            "there is nothing to decide (run it again)")  # fmt: skip
        self.wf.decide(attempt.id, self.operator.id, decision.decision, decision.reason)
        verb = "approved" if decision.decision == "approve" else "rejected"
        echo(f"{verb} by {self.operator.name}: step {attempt.step_key} attempt "
             f"{attempt.number} of job {attempt.job_id}")  # fmt: skip
        self.pending = None
        self.job = self.wf.job(attempt.job_id)

    async def approve(self, args: list[str]) -> None:
        await self._decide(OperatorDecision.approve(" ".join(args)))

    async def reject(self, args: list[str]) -> None:
        reason = " ".join(args).strip()
        if not reason:
            raise ReplError("reject REASON: the reason is the agent's feedback")
        await self._decide(OperatorDecision.reject(reason))

    async def submit(self, args: list[str]) -> None:
        job = self._job()
        if len(args) != 1:
            raise ReplError("submit JSON | submit @FILE")
        text = args[0]
        if text.startswith("@"):
            try:
                text = Path(text[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                raise ReplError(f"cannot read {text[1:]}: {exc.strerror}") from None
        step = self._next_step()
        model = workflows()[job.template_key].step(step).output_model
        try:
            output: Any = model.model_validate(json.loads(text)).model_dump(mode="json")
        except json.JSONDecodeError as exc:
            raise ReplError(f"not JSON: {exc}") from None
        except ValidationError as exc:
            raise ReplError(f"not a {model.__name__}: {first_validation_error(exc)}") from None
        claim = self.wf.claim_step(job.id, step, self.operator.id)
        note = f"submitted by {self.operator.name}"
        attempt = self.wf.finish_attempt(claim.id, output, note=note)
        self.pending = attempt.id
        echo(f"{note}: step {step} attempt {attempt.number} of job {job.id} (approve or "
             "reject it next)")  # fmt: skip

    async def history(self, args: list[str]) -> None:
        del args
        job = self._job()
        moves = self.wf.transitions(job.id)
        names = {a: self.wf.user(a).name for a in {t.actor_id for t in moves}}
        for t in moves:
            what = f"step {t.step_key}" if t.step_key else "job"
            why = f": {one_line(t.reason, 200)}" if t.reason else ""
            echo(f"  {t.at.isoformat(timespec='seconds')}  {names[t.actor_id]:20} {what} "
                 f"{t.from_state or '-'} -> {t.to_state}{why}")  # fmt: skip

    async def quit(self, args: list[str]) -> None:
        del args
        self.done = True
