"""Why two runs may differ besides the agent: fingerprints and configuration, in words; and what
it means for a diff that one or both runs are replays."""

from __future__ import annotations

from agentic_eval.history.entry import HistoryEntry, Producer, RecordingRef, describe_producer


def _short(sha: str | None) -> str:
    return (sha or "?")[:12]


def _producer_changes(b: Producer, h: Producer) -> list[str]:
    if b.agent_kind != h.agent_kind or (b.agent_kind == "scripted" and b.agent != h.agent):
        return [f"agent changed ({_who(b)} -> {_who(h)})"]
    if b.agent_kind == "scripted":
        return []
    out: list[str] = []
    if b.model != h.model:
        out.append(f"model changed ({b.model} -> {h.model})")
    if (b.provider or b.backend) != (h.provider or h.backend):
        out.append(f"provider changed ({b.provider or b.backend} -> {h.provider or h.backend})")
    if b.base_url != h.base_url:
        out.append(
            f"provider base URL changed ({b.base_url or 'default'} -> {h.base_url or 'default'})"
        )
    if b.agent != h.agent and not out:
        out.append(f"agent label changed ({b.agent} -> {h.agent})")
    return out


def _who(p: Producer) -> str:
    return f"scripted agent {p.agent}" if p.agent_kind == "scripted" else f"model {p.model}"


def _list(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def explain(base: HistoryEntry, head: HistoryEntry) -> tuple[str, ...]:
    """Every difference between the runs that could explain a change, most telling first."""
    out = _producer_changes(base.producer, head.producer)
    pb = base.config.parameters.model_dump(mode="json")
    ph = head.config.parameters.model_dump(mode="json")
    changed = [f"{k} {pb[k]} -> {ph[k]}" for k in sorted(pb) if pb[k] != ph.get(k)]
    if changed:
        out.append(f"parameters changed: {', '.join(changed)}")
    fb, fh = base.fingerprints, head.fingerprints
    if fb.system_prompt_sha256 != fh.system_prompt_sha256:
        out.append("system prompt changed")
    if fb.tool_schema_sha256 != fh.tool_schema_sha256:
        out.append("tool schemas changed")
    if fb.fixtures_sha256 and fh.fixtures_sha256 and fb.fixtures_sha256 != fh.fixtures_sha256:
        out.append("fixtures changed")
    common = sorted(set(fb.case_sha256) & set(fh.case_sha256))
    differ = [c for c in common if fb.case_sha256[c] != fh.case_sha256[c]]
    if differ:
        out.append(
            f"answer key changed: expectations of {len(differ)} case(s) differ ({_list(differ)})"
        )
    added = sorted(set(fh.case_sha256) - set(fb.case_sha256))
    gone = sorted(set(fb.case_sha256) - set(fh.case_sha256))
    if added or gone:
        out.append(f"cases run changed: {len(added)} new, {len(gone)} no longer run")
    if fb.package_version != fh.package_version:
        out.append(f"package version changed ({fb.package_version} -> {fh.package_version})")
    if fb.git_commit and fh.git_commit and fb.git_commit != fh.git_commit:
        out.append(f"git commit changed ({fb.git_commit[:10]} -> {fh.git_commit[:10]})")
    for side, e in (("base", base), ("head", head)):
        if e.status != "finished":
            out.append(
                f"the {side} run was {e.status} after {e.samples} of "
                f"{e.config.planned_samples} samples"
            )
        if e.replay is not None and not e.replay.reproduced:
            r = e.replay
            out.append(
                f"the {side} replay did not reproduce its recording "
                f"({r.samples_reproduced}/{r.samples} samples)"
            )
    return tuple(out)


def same_recording(a: RecordingRef | None, b: RecordingRef | None) -> bool:
    """Whether two references name the same recorded content."""
    return (
        a is not None
        and b is not None
        and a.transcripts_sha256 is not None
        and a.transcripts_sha256 == b.transcripts_sha256
    )


def replay_note(base: HistoryEntry, head: HistoryEntry) -> str:
    """What it means for the diff that the runs are replays ('' when neither is one)."""
    b, h = base.producer, head.producer
    if b.kind == "replay" and h.kind == "replay":
        if same_recording(b.recording, h.recording):
            rec = h.recording
            assert rec is not None
            return (
                f"Both runs replay the same recording ({rec.folder}, transcripts sha256 "
                f"{_short(rec.transcripts_sha256)}): the agent's behaviour is identical, so any "
                "change comes from checks, fixtures, answer key or harness code, not the agent."
            )
        return (
            f"Both runs are replays ({describe_producer(b)}; {describe_producer(h)}): a change "
            "reflects what was recorded, not a new run of the agent."
        )
    if h.kind == "replay":
        if same_recording(b.recording, h.recording):
            return (
                "The head run replays the recording the base run made: the agent's behaviour "
                "is the same; any change comes from checks, fixtures, answer key or harness code."
            )
        return f"The head run is a {describe_producer(h)}: it is not new agent behaviour."
    if b.kind == "replay":
        return f"The base run is a {describe_producer(b)}."
    return ""
