"""Re-judge recorded samples under today's checks, keyless (``agentic-eval rescore``).

When only the checks changed, what the model saw and answered is unchanged: each sample is
replayed through the same loop, tools and :class:`~agentic_eval.recordings.ReplayBackend` as
``agentic-eval run``, and a sample whose trace reproduces exactly (request template, turns, tool
calls, policy events, output, provenance) while only its ``verdict`` differs gets its transcript
written back with the recomputed verdict; then the folder's scorecard is rebuilt from the
re-judged transcripts exactly as a record run builds it.

A folder is all or nothing: if any of its samples is refused (a trace that does not reproduce, a
broken or missing file, a stale transcript of a case the case file no longer has), nothing in it
is written, since a scorecard must match its transcripts and a folder judged half under one set
of checks and half under another would match neither regime. Writes go transcripts first, the
scorecard last, each atomically: a rescore stopped half way is finished by running it again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_eval.agent.tools import describe_exception
from agentic_eval.core.canonical import (
    ABSENT,
    canonical_file_text,
    describe_difference,
    first_difference,
    value_at,
)
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.realdata import inside_git_work_tree
from agentic_eval.core.scorecard import CaseResult
from agentic_eval.core.transcript import Transcript, Verdict
from agentic_eval.domains.base import CaseFileError, Domain
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.evaluation.gate import build_scorecard
from agentic_eval.evaluation.runner import CaseRun, produced_by, run_tasks
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings.files import (
    RecordingError,
    list_agents,
    list_transcripts,
    parse_json,
    read_bounded,
    read_transcript,
    scorecard_path,
    validate,
    write_atomic,
    write_transcript,
)
from agentic_eval.recordings.layout import agent_dir, transcript_path
from agentic_eval.recordings.replay import ReplayBackend
from agentic_eval.tasks.spec import TaskSpec


class RescoreError(Exception):
    """Nothing can be rescored as asked: an unknown agent, no recordings, an unreadable folder,
    or recordings of real fixtures to be rewritten inside a git work tree."""


@dataclass(frozen=True)
class Folder:
    """One recorded agent folder to re-judge."""

    domain: Domain[Any]
    agent: str
    root: Path
    """The recordings root the folder lies under."""
    directory: Path
    cases: tuple[CaseSpec, ...]
    """The domain's cases, as the case file holds them now."""
    backend: ReplayBackend | None
    """None when the folder cannot be replayed at all (see ``problem``)."""
    problem: str = ""
    """Why the folder cannot be replayed (its first transcripts are unreadable or disagree)."""


@dataclass(frozen=True)
class VerdictChange:
    """A sample whose trace reproduced and whose verdict is different under today's checks."""

    case_id: str
    sample: int
    old: Verdict
    new: Verdict


@dataclass(frozen=True)
class Refusal:
    """A sample that cannot be re-judged, and why (the case and the first differing field)."""

    case_id: str
    sample: int
    problem: str


@dataclass(frozen=True)
class FolderRescore:
    """What re-judging one folder found, and what it wrote."""

    suite: str
    agent: str
    directory: Path
    samples: int
    """Samples replayed (transcripts of the case file's cases, and missing ones)."""
    changes: tuple[VerdictChange, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    problem: str = ""
    """Why the folder could not be replayed at all (then nothing else is filled)."""
    scorecard_changed: bool = False
    """Whether the scorecard the re-judged transcripts give differs from the file's bytes."""
    written: tuple[Path, ...] = field(default=())
    """Files written (none on a dry run or a refused folder)."""

    @property
    def refused(self) -> bool:
        """Whether the folder was refused (and so left untouched)."""
        return bool(self.refusals or self.problem)

    @property
    def refused_samples(self) -> int:
        """Samples refused (one, the file at fault, when the folder could not be replayed)."""
        return 1 if self.problem else len(self.refusals)

    @property
    def not_replayed(self) -> int:
        """Samples never replayed, because the folder could not be replayed at all."""
        return max(self.samples - 1, 0) if self.problem else 0

    @property
    def unchanged(self) -> int:
        """Samples whose recorded verdict still holds."""
        return max(self.samples - len(self.changes) - self.refused_samples - self.not_replayed, 0)


def plan_rescore(
    domains: Sequence[Domain[Any]],
    recordings: Path,
    agent: str | None = None,
    *,
    named: bool = False,
    dry_run: bool = False,
) -> list[Folder]:
    """The agent folders to re-judge, every usage problem found before anything runs.

    Args:
        domains: The domains to look in.
        recordings: The recordings root.
        agent: Only this agent's folders.
        named: Whether the domains were named (then each must have recordings, of ``agent``
            when given); otherwise domains without them are skipped.
        dry_run: Nothing will be written (recordings of real fixtures may then be read inside
            a git work tree, as a replay may).

    Raises:
        RescoreError: One line: no recordings root, a named domain or agent with no
            recordings, an unreadable folder or case file, or real-fixture recordings that
            would be rewritten inside a git work tree.
    """
    if not recordings.is_dir():
        raise RescoreError(f"no recordings folder at {recordings}")
    folders: list[Folder] = []
    for domain in domains:
        try:
            recorded = list_agents(recordings, domain.name)
        except OSError as exc:
            where = recordings / domain.name
            raise RescoreError(f"cannot read {where}: {exc.strerror or exc}") from None
        if agent is not None and agent not in recorded:
            if named:
                known = ", ".join(recorded) or "none"
                raise RescoreError(
                    f"no recordings of agent {agent!r} for {domain.name} under {recordings} "
                    f"(recorded: {known})"
                )
            continue
        if not recorded:
            if named:
                raise RescoreError(f"no recordings of {domain.name} under {recordings}")
            continue
        try:
            cases = tuple(domain.load_cases())
        except (CaseFileError, FixtureError) as exc:
            raise RescoreError(str(exc)) from None
        for label in [agent] if agent is not None else recorded:
            folders.append(_folder(domain, label, recordings, cases, dry_run))
    if not folders:
        if agent is not None:
            raise RescoreError(f"no domain has recordings of agent {agent!r} under {recordings}")
        raise RescoreError(f"nothing recorded under {recordings}")
    return folders


def _folder(
    domain: Domain[Any], agent: str, root: Path, cases: tuple[CaseSpec, ...], dry_run: bool
) -> Folder:
    directory = agent_dir(root, domain.name, agent)
    try:
        list_transcripts(directory)
    except (RecordingError, OSError) as exc:
        detail = str(exc) if isinstance(exc, RecordingError) else exc.strerror or str(exc)
        raise RescoreError(f"cannot read {directory}: {detail}") from None
    real = domain.external_fixtures()
    if real and not dry_run and inside_git_work_tree(directory):
        raise RescoreError(
            f"{domain.name} is using real fixtures from EVAL_FIXTURE_DIR: refusing to rewrite "
            f"recordings in {root}, inside a git repository; pass --recordings DIR outside any "
            "git repository"
        )
    try:
        backend = ReplayBackend(directory)
    except RecordingError as exc:
        return Folder(domain, agent, root, directory, cases, None, _naming_case(directory, exc))
    if backend.provenance.external_fixtures and not dry_run and inside_git_work_tree(directory):
        raise RescoreError(
            f"{directory} holds recordings of real fixtures (marked external_fixtures): "
            "refusing to rewrite them inside a git repository; pass --recordings DIR outside "
            "any git repository"
        )
    return Folder(domain, agent, root, directory, cases, backend)


def _naming_case(directory: Path, exc: RecordingError) -> str:
    """Why the folder cannot be replayed, led by the case whose file is at fault (replay reads
    its first transcripts up front: their provenance sets the replay's settings)."""
    text = str(exc)
    for (case_id, sample), path in list_transcripts(directory).items():
        if text.startswith(f"{path}:"):
            name = case_id if sample == 0 else f"{case_id}@{sample}"
            return f"case {name}: {text} (the folder cannot be replayed)"
    return text


@dataclass
class _Judged:
    """What the replay of one folder gave, sample by sample."""

    results: list[CaseResult] = field(default_factory=list[CaseResult])
    changes: list[tuple[VerdictChange, Transcript]] = field(
        default_factory=list[tuple[VerdictChange, Transcript]]
    )
    refusals: list[Refusal] = field(default_factory=list[Refusal])


async def rescore_folder(folder: Folder, *, dry_run: bool = False) -> FolderRescore:
    """Replay every sample of ``folder`` under today's checks and, unless ``dry_run`` or any
    sample is refused, write back the re-judged transcripts and then the scorecard.

    Raises:
        OSError: When a file cannot be written (files written before it stay written; running
            the rescore again finishes the folder).
    """
    suite, backend = folder.domain.name, folder.backend
    if backend is None:
        ids = {c.id for c in folder.cases}
        count = sum(1 for c, _ in list_transcripts(folder.directory) if c in ids)
        return FolderRescore(suite, folder.agent, folder.directory, count, problem=folder.problem)
    settings = RunSettings.from_parameters(backend.info().model, backend.parameters())
    judged = _Judged()
    specs = _specs(folder, backend, settings, judged)
    _stale(folder, backend, judged)
    samples = len(specs) + len(judged.refusals)  # those refused before anything replays

    def on_case(run: CaseRun) -> None:
        transcript = run.transcript
        assert transcript is not None  # run_tasks hands every callback the full transcript
        found = _classify(run, transcript, backend.paths.get(_key(transcript)), folder.root)
        if isinstance(found, Refusal):
            judged.refusals.append(found)
        elif found is not None:
            judged.changes.append((found, transcript))
        judged.results.append(run.result)

    try:
        await run_tasks(specs, backend, settings, on_case=on_case)
    finally:
        await backend.aclose()
    changes = tuple(c for c, _ in sorted(judged.changes, key=lambda c: _key(c[1])))
    refusals = tuple(sorted(judged.refusals, key=lambda r: (r.case_id, r.sample)))
    if refusals:
        return FolderRescore(suite, folder.agent, folder.directory, samples, changes, refusals)
    # The scorecard as a record run writes it (session.run_session, recordings.rewrite_scorecard)
    produced = produced_by(backend, settings.approval_mode)
    mark = next((s.external_fixtures for s in specs if s.external_fixtures), None)
    scorecard = build_scorecard(
        suite,
        produced,
        judged.results,
        max_failure_rate=settings.max_failure_rate,
        max_transient=settings.max_transient,
        external_fixtures=mark,
    )
    text = canonical_file_text(scorecard)
    path = scorecard_path(folder.directory)
    try:
        scorecard_changed = read_bounded(path) != text.encode("utf-8")
    except RecordingError:
        scorecard_changed = True  # missing or unreadable: a record run would write it
    written: list[Path] = []
    if not dry_run:
        for _, transcript in sorted(judged.changes, key=lambda c: _key(c[1])):
            written.append(write_transcript(folder.root, transcript))
        if scorecard_changed:
            write_atomic(path, text)
            written.append(path)
    return FolderRescore(
        suite,
        folder.agent,
        folder.directory,
        samples,
        changes,
        (),
        scorecard_changed=scorecard_changed,
        written=tuple(written),
    )


def _key(t: Transcript) -> tuple[str, int]:
    return t.case_id, t.sample


def _specs(
    folder: Folder, backend: ReplayBackend, settings: RunSettings, judged: _Judged
) -> list[TaskSpec[Any]]:
    """The samples ``run`` replays for the folder (cli/execute.py ``_replay_jobs``): every
    recorded sample of every case in the case file, sample 0 of a case never recorded."""
    specs: list[TaskSpec[Any]] = []
    for case in folder.cases:
        samples = sorted(s for c, s in backend.paths if c == case.id) or [0]
        for sample in samples:
            try:
                specs.append(folder.domain.task_spec(case, settings.limits, sample))
            except Exception as exc:  # the domain's code, not the recording: nothing to judge
                problem = (
                    f"case {case.id}: its task cannot be built: domain {folder.domain.name}: "
                    f"task_kind raised {describe_exception(exc)}"
                )
                judged.refusals.append(Refusal(case.id, sample, problem))
    return specs


def _stale(folder: Folder, backend: ReplayBackend, judged: _Judged) -> None:
    """Refuse the folder's transcripts of cases the case file no longer has: a full record run
    deletes them and leaves them out of the scorecard, and a rescore never deletes. Files that
    are not this agent's transcripts are left alone and left out, as recording does."""
    ids = {c.id for c in folder.cases}
    for (case_id, sample), path in backend.paths.items():
        if case_id in ids:
            continue
        try:
            t = read_transcript(path)
        except RecordingError:
            continue
        if t.domain == folder.domain.name and t.provenance.agent == folder.agent:
            judged.refusals.append(
                Refusal(
                    case_id,
                    sample,
                    f"case {case_id}: {path.name} is a transcript of a case that "
                    f"{folder.domain.name}'s case file no longer has (a record run would "
                    "delete it; re-record the folder or remove the file)",
                )
            )


def _classify(
    run: CaseRun, live: Transcript, path: Path | None, root: Path
) -> VerdictChange | Refusal | None:
    """None when the recording was reproduced, a change when only its verdict differs, else
    a refusal naming the case and the first differing field."""
    case, sample = live.case_id, live.sample
    if run.reproduced:
        return None
    problem = run.problem or f"case {case}: not reproduced"
    outcome = live.verdict.outcome
    if path is None or (outcome.kind == "error" and outcome.reason.startswith("replay")):
        return Refusal(case, sample, problem)
    try:
        data = parse_json(path, read_bounded(path))
        recorded = validate(Transcript, path, data, "transcript")
    except RecordingError as exc:
        return Refusal(case, sample, f"case {case}: {exc}")
    # The replay's review already tells a verdict difference from a trace difference; what is
    # written is held to it once more, on the exact text that would replace the file.
    text = canonical_file_text(live)
    now: dict[str, Any] = json.loads(text)
    was: dict[str, Any] = dict(data)
    was_verdict, now_verdict = was.pop("verdict", ABSENT), now.pop("verdict", ABSENT)
    where = first_difference(was, now)
    if where is not None:
        if not problem.startswith("replay"):
            change = describe_difference(value_at(was, where, ABSENT), value_at(now, where, ABSENT))
            problem = f"replay diverged: case {case}, field {where}: {change}"
        return Refusal(case, sample, problem)
    target = transcript_path(root, live.domain, live.provenance.agent, case, sample)
    if target != path:
        return Refusal(case, sample, f"case {case}: {path.name} is not named {target.name}")
    if first_difference(was_verdict, now_verdict) is None:
        return None
    return VerdictChange(case, sample, recorded.verdict, live.verdict)
