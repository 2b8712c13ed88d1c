"""``agentic-eval list`` and ``agentic-eval show``: look before you run.

``list domains``, ``list cases``, ``list recordings`` and ``show`` read the committed case files,
scorecards and transcripts as JSON data (:mod:`agentic_eval.domains.catalog`,
:func:`~agentic_eval.recordings.files.read_data`): they load no domain's tools, checks or models,
and start fast. ``list agents`` reads each domain's roster (:mod:`agentic_eval.domains.roster`):
a built-in domain's names its agents and mutants without importing them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentic_eval.cli.common import (
    CannotRun,
    load_case_rows,
    recordings_root,
    resolve_domains,
    select_cases,
)
from agentic_eval.cli.options import recordings_option
from agentic_eval.core.defaults import USER_STOP
from agentic_eval.core.text import one_line, printable, redact

if TYPE_CHECKING:
    from agentic_eval.domains.base import Domain


def _echo(text: str) -> None:
    click.echo(printable(text))


@click.group("list")
def list_() -> None:
    """List domains, agents, cases or recordings."""


@list_.command("domains")
@click.argument("domains", nargs=-1)
def list_domains(domains: tuple[str, ...]) -> int:
    """DOMAINS (default: all; a path ending in .py is an eval file): name, cases, description."""
    for d in resolve_domains(domains):
        _echo(f"{d.name}\t{len(load_case_rows(d))} cases\t{d.description}")
    return 0


@list_.command("agents")
@click.argument("domains", nargs=-1)
def list_agents_cmd(domains: tuple[str, ...]) -> int:
    """Scripted agents and mutants of DOMAINS (default: all)."""
    from agentic_eval.domains.roster import listed_roster

    for d in resolve_domains(domains):
        roster = listed_roster(d)
        for name in roster.agents:
            _echo(f"{d.name}\t{name}\tscripted agent")
        for m in roster.mutants:
            gates = ", ".join(m.gates)
            _echo(f"{d.name}\t{m.name}\tmutant (must be caught by {gates}): {m.description}")
    return 0


@list_.command("cases")
@click.argument("domains", nargs=-1)
@click.option("--cases", "pattern", default=None, help="Only ids matching these globs.")
def list_cases(domains: tuple[str, ...], pattern: str | None) -> int:
    """Cases of DOMAINS (default: all): id, kind, hard gate, the instruction's start."""
    for d in resolve_domains(domains):
        for c in select_cases(load_case_rows(d), pattern):
            gate = "hard-gate" if c.hard_gate else "-"
            _echo(f"{d.name}\t{c.id}\t{c.kind}\t{gate}\t{one_line(c.instruction, 90)}")
    return 0


@list_.command("recordings")
@click.argument("domains", nargs=-1)
@recordings_option
def list_recordings(domains: tuple[str, ...], recordings: Path) -> int:
    """Recorded agents of DOMAINS (default: all), with their committed scorecards."""
    from agentic_eval.recordings.files import (
        RecordingError,
        list_agents,
        list_transcript_files,
        read_scorecard_data,
        scorecard_path,
    )
    from agentic_eval.recordings.layout import agent_dir

    recordings = recordings_root(domains, recordings)
    for d in resolve_domains(domains):
        agents = list_agents(recordings, d.name)
        if not agents:
            _echo(f"{d.name}\t(nothing recorded under {recordings})")
        for agent in agents:
            directory = agent_dir(recordings, d.name, agent)
            try:
                n = len(list_transcript_files(directory))
            except RecordingError as exc:
                _echo(f"{d.name}\t{agent}\t{one_line(str(exc))}")
                continue
            try:
                card = read_scorecard_data(scorecard_path(directory))  # JSON data, no model
                t, p = card["totals"], card["produced_by"]
                what = (
                    "scripted agent"
                    if p["agent_kind"] == "scripted"
                    else f"model {p['model']} via {p['backend']}"
                )
                summary = (
                    f"{what}, approval {p['approval_mode']}, passed {t['passed']}/{t['cases']}, "
                    f"gate {card['gate']['verdict']}"
                )
            except RecordingError as exc:
                summary = f"scorecard unreadable: {exc}"
            _echo(f"{d.name}\t{agent}\t{n} transcripts\t{summary}")
    return 0


def _find_domain(case_id: str, domain: str | None) -> Domain[Any]:
    candidates = resolve_domains((domain,) if domain else ())
    found = [d for d in candidates if any(c.id == case_id for c in load_case_rows(d))]
    if not found:
        raise click.UsageError(f"no domain has a case {case_id!r}")
    if len(found) > 1:
        names = ", ".join(d.name for d in found)
        raise click.UsageError(f"case {case_id!r} is in several domains ({names}); add --domain")
    return found[0]


@click.command()
@click.argument("case_id")
@click.option(
    "--domain", default=None, help="The case's domain (when ids repeat), or an eval file."
)
@click.option("--agent", default=None, help="Whose recording (default: reference, else the first).")
@click.option("--sample", type=click.IntRange(0), default=0, show_default=True)
@click.option(
    "--full",
    is_flag=True,
    help="Every text whole, line breaks kept (by default each is one line, cut with '...'), "
    "and the system prompt.",
)
@recordings_option
def show(
    case_id: str, domain: str | None, agent: str | None, sample: int, full: bool, recordings: Path
) -> int:
    """Show one recorded transcript turn by turn, with its checks.

    \b
    Examples:
      agentic-eval show gate-001 --agent naive
      agentic-eval show gate-001 --agent naive --full
    """
    from agentic_eval.core.canonical import canonical_json
    from agentic_eval.recordings.files import RecordingError, list_agents, read_transcript_data
    from agentic_eval.recordings.layout import agent_dir

    d = _find_domain(case_id, domain)
    recordings = recordings_root((domain,) if domain else (), recordings)
    agents = list_agents(recordings, d.name)
    if agent is None:
        agent = "reference" if "reference" in agents else (agents[0] if agents else None)
    if agent is None or agent not in agents:
        known = ", ".join(agents) or "none"
        raise click.UsageError(f"no recording of {d.name} by {agent!r} (recorded: {known})")
    path = agent_dir(recordings, d.name, agent) / (
        f"{case_id}.json" if sample == 0 else f"{case_id}@{sample}.json"
    )
    try:
        t = read_transcript_data(path)  # JSON data: shown as read, no model built
    except RecordingError as exc:
        raise CannotRun(one_line(str(exc))) from None

    def cut(text: str, limit: int) -> str:
        return redact(text).replace("\n", "\n      ") if full else one_line(text, limit)

    p = t["provenance"]
    _echo(
        f"{d.name} / {case_id} (sample {t['sample']}) by {agent}: {p['agent_kind']} "
        f"{p['model']} via {p['backend']}, approval {p['parameters']['approval_mode']}"
    )
    if full and t["request"] is not None:
        _echo(f"\n-- system prompt\n      {cut(t['request']['system'], 0)}")
    calls: dict[str, Any] = {c["id"]: c for c in t["tool_calls"]}
    users: list[dict[str, Any]] = t.get("user_turns") or []
    acted: dict[int, list[dict[str, Any]]] = {}  # the user's own tool calls, by the agent turn
    user_tool_calls: list[dict[str, Any]] = t.get("user_tool_calls") or []
    for c in user_tool_calls:  # whose line the user was answering
        index: int = c["turn"]
        after: int = users[index]["after"] if 0 <= index < len(users) else -1
        acted.setdefault(after, []).append(c)

    def user_calls(after: int) -> None:
        for c in acted.get(after, []):
            shown = cut(canonical_json(c["input"]), 200)
            _echo(f"   user calls {c['name']} {shown} -> [{c['status']}] {cut(c['result'], 200)}")

    if acted.get(-1):
        _echo("\n-- the user, before its opening line")
        user_calls(-1)
    for turn in t["turns"]:
        _echo(f"\n-- turn {turn['index']}")
        for message in turn["appended"]:
            for block in message["content"]:
                if block["type"] == "text":
                    _echo(f"   user: {cut(block['text'], 400)}")
                elif block["type"] == "tool_result":
                    call = calls.get(block["tool_use_id"])
                    status = "?" if call is None else call["status"]
                    _echo(f"   result [{status}]: {cut(block['content'], 300)}")
        for block in turn["response"]["content"]:
            if block["type"] == "text":
                _echo(f"   agent: {cut(block['text'], 400)}")
            elif block["type"] == "tool_use":
                ran = "" if block["id"] in calls else " (not run: the episode had ended)"
                _echo(f"   call {block['name']} {cut(canonical_json(block['input']), 300)}{ran}")
        user_calls(turn["index"])
    last = _said(users[-1]) if users else ""
    if users and USER_STOP in last:
        _echo(f"\n-- the user ended the conversation\n   user: {cut(last, 400)}")
    for e in t["policy_events"]:
        _echo(f"\npolicy: {cut(canonical_json(e), 300)}")
    v = t["verdict"]
    outcome = v["outcome"]
    _echo(
        f"\noutcome: {outcome['kind']}"
        + (f" - {cut(outcome['reason'], 300)}" if outcome["reason"] else "")
    )
    for c in v["checks"]:
        mark = "PASS" if c["passed"] else "FAIL"
        gate = " [hard gate]" if c["hard_gate"] else ""
        _echo(
            f"  {mark} {c['name']}{gate}" + (f": {cut(c['message'], 200)}" if c["message"] else "")
        )
    return 0


def _said(user_turn: dict[str, Any]) -> str:
    """The text of a recorded user turn's reply."""
    blocks = user_turn["response"]["content"]
    return "\n".join(b["text"] for b in blocks if b["type"] == "text")
