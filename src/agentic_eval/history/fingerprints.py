"""Fingerprints of what a verdict depends on besides the agent, and of recording folders."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_eval._version import __version__
from agentic_eval.agent.approval import REQUEST_APPROVAL_SPEC
from agentic_eval.agent.loop import submit_spec
from agentic_eval.core.canonical import canonical_json, sha256_of
from agentic_eval.core.model import ToolSpec
from agentic_eval.domains.base import Domain
from agentic_eval.domains.fixtures import FixtureError
from agentic_eval.history.entry import Fingerprints, RecordingRef
from agentic_eval.history.gitinfo import git_commit
from agentic_eval.recordings.files import RecordingError, list_transcript_files, read_bounded
from agentic_eval.recordings.layout import SCORECARD_FILE
from agentic_eval.tasks.spec import TaskSpec


def tool_specs_seen(spec: TaskSpec[Any]) -> list[ToolSpec]:
    """The tool list the agent is offered for ``spec``, exactly as the loop builds it."""
    specs = [t.spec for t in spec.tools]
    if spec.tools.has_approval_rules():
        specs.append(REQUEST_APPROVAL_SPEC)
    try:
        specs.append(submit_spec(spec.output_model))
    except Exception:  # an output model without a JSON schema: the run reported it as an error
        specs.append(ToolSpec(name="submit", description="unavailable", input_schema={}))
    return specs


def _distinct_sha(texts: set[str]) -> str:
    return sha256_of(sorted(texts))


def fingerprints(
    specs: Sequence[TaskSpec[Any]], domain: Domain[Any] | None, *, start: Path | None = None
) -> Fingerprints:
    """Fingerprints of a run of ``specs``.

    Args:
        specs: The samples the run judged (their cases, prompts and tools).
        domain: The domain they came from (for the fixtures hash), if any.
        start: Where to look for the git repository (default: the working directory).
    """
    prompts = {s.system_prompt for s in specs}
    tools: set[str] = set()
    seen: set[tuple[int, type[Any]]] = set()
    for s in specs:
        key = (id(s.tools), s.output_model)
        if key not in seen:  # the same registry and output model offer the same tool list
            seen.add(key)
            tools.add(canonical_json([t.model_dump(mode="json") for t in tool_specs_seen(s)]))
    cases = {s.case.id: s.case for s in specs}
    case_sha = {cid: sha256_of(case) for cid, case in sorted(cases.items())}
    fixtures_sha: str | None = None
    if domain is not None:
        try:
            fixtures_sha = domain.fixtures_sha256()
        except FixtureError:
            fixtures_sha = None
    return Fingerprints(
        system_prompt_sha256=_distinct_sha(prompts),
        tool_schema_sha256=_distinct_sha(tools),
        fixtures_sha256=fixtures_sha,
        answer_key_sha256=sha256_of(case_sha),
        case_sha256=case_sha,
        package_version=__version__,
        git_commit=git_commit(start),
    )


def recording_ref(folder: Path) -> RecordingRef:
    """Identify a recording folder by content: its transcripts and committed scorecard."""
    digest = hashlib.sha256()
    count = 0
    transcripts_sha: str | None
    try:
        for key, path in list_transcript_files(folder).items():
            count += 1
            name = f"{key.case_id}@{key.sample}"  # a first attempt's as it always was
            if key.attempt > 1:
                name += f"#{key.attempt}"
            digest.update(f"{name}\n".encode())
            digest.update(hashlib.sha256(read_bounded(path)).hexdigest().encode() + b"\n")
        transcripts_sha = digest.hexdigest()
    except RecordingError:
        transcripts_sha = None
    try:
        scorecard_sha: str | None = hashlib.sha256(
            read_bounded(folder / SCORECARD_FILE)
        ).hexdigest()
    except RecordingError:
        scorecard_sha = None
    return RecordingRef(
        folder=folder.as_posix(),
        transcripts=count,
        transcripts_sha256=transcripts_sha,
        scorecard_sha256=scorecard_sha,
    )
