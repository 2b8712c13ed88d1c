"""Fast to start (issue 20, part 6): ``--help`` of every command, ``list`` and ``show`` import
only what they use. The group's command list is built from summaries, importing no command;
each command's ``--help`` imports its own module and what its options need: never a provider
SDK, SQLAlchemy's dialects or the run path (the loop, the store, the batch machinery).
Timings are the benchmark's (``bench/startup.py``); this holds the import graph."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from agentic_eval.cli.app import COMMANDS, cli
from agentic_eval.cli.lazy import LazyGroup, load

FORBIDDEN = (
    "anthropic",
    "openai",
    "httpx",
    "celery",
    "sqlalchemy.dialects",
    "sqlalchemy.orm",
    "alembic",
    "agentic_eval.agent.loop",
    "agentic_eval.evaluation.runner",
    "agentic_eval.evaluation.session",
    "agentic_eval.store.db",
    "agentic_eval.batch",
    "agentic_eval.workers",
)
"""What no ``--help`` may import (a module or any module under it): the SDKs, the store's engine
and dialects, the loop, the runner, the batch machinery, the workers."""

_PROBE = r"""
import json, sys
from agentic_eval.cli.main import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def _imported(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _commands() -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = [()]
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        paths.append((name,))
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            sub_ctx = click.Context(command)
            paths.extend((name, sub) for sub in command.list_commands(sub_ctx))
    return paths


@pytest.mark.parametrize("path", _commands(), ids=lambda p: " ".join(p) or "agentic-eval")
def test_help_imports_no_sdk_no_store_and_no_run_path(path: tuple[str, ...]) -> None:
    modules = _imported(*path, "--help")
    bad = sorted(m for m in modules for f in FORBIDDEN if m == f or m.startswith(f + "."))
    assert not bad, f"`agentic-eval {' '.join(path)} --help` imports {bad[:10]}"


def test_the_group_help_lists_every_command_without_importing_one() -> None:
    modules = _imported("--help")
    commands = {c.target.partition(":")[0] for c in COMMANDS.values()}
    assert not commands & set(modules), sorted(commands & set(modules))


def test_each_summary_is_the_start_of_its_commands_own_help() -> None:
    groups: list[LazyGroup] = [cli]
    for group in groups:
        for name, entry in group.lazy.items():
            command = load(entry)
            own = command.get_short_help_str(limit=10_000)
            assert own.startswith(entry.summary.rstrip(".")), (name, entry.summary, own)
            if isinstance(command, LazyGroup):
                groups.append(command)


def test_list_and_show_import_neither_the_store_nor_the_sdks() -> None:
    for args in (("list", "domains"), ("show", "gate-001", "--agent", "naive")):
        modules = _imported(*args)
        bad = sorted(m for m in modules for f in FORBIDDEN[:7] if m == f or m.startswith(f + "."))
        assert not bad, f"`agentic-eval {' '.join(args)}` imports {bad[:10]}"


READ_AS_DATA = (
    "pydantic",
    "agentic_eval.agent",
    "agentic_eval.backends",
    "agentic_eval.checks",
    "agentic_eval.tasks",
    "agentic_eval.core.case",
    "agentic_eval.core.transcript",
    "agentic_eval.core.scorecard",
    "agentic_eval.domains.casefile",
    "agentic_eval.domains.onefile.decorated",
)
"""What ``list domains``, ``list agents``, ``list cases``, ``list recordings`` and ``show`` do
without: they read case files, scorecards and transcripts as JSON data (core/shapes.py) and each
domain's roster (domains/roster.py), so no model is built and no domain's parts (tools, checks,
output models, agents) are imported."""

DOMAIN_PACKAGES = ("retail_ops", "approval_audit", "browser_ops", "process_mapping")
LIGHT_DOMAIN_MODULES = {"agentic_eval.domains.browser_ops.case_table"} | {
    f"agentic_eval.domains.{d}.roster" for d in DOMAIN_PACKAGES
}
"""The modules of a domain package a listing imports: the prose of browser_ops's prompt, and each
domain's roster (names, gates and descriptions of its agents and mutants)."""


@pytest.mark.parametrize(
    "args",
    [
        ("list", "domains"),
        ("list", "agents"),
        ("list", "cases"),
        ("list", "cases", "retail_ops", "--cases", "gate-*"),
        ("list", "recordings"),
        ("show", "gate-001", "--agent", "naive"),
        ("show", "conflict-007", "--full"),
        ("list", "--help"),
        ("show", "--help"),
    ],
    ids=" ".join,
)
def test_list_and_show_build_no_model_and_load_no_domain_parts(args: tuple[str, ...]) -> None:
    modules = _imported(*args)
    bad = sorted(m for m in modules for f in READ_AS_DATA if m == f or m.startswith(f + "."))
    assert not bad, f"`agentic-eval {' '.join(args)}` imports {bad[:10]}"
    parts = sorted(
        m
        for m in modules
        for d in DOMAIN_PACKAGES
        if m.startswith(f"agentic_eval.domains.{d}.") and m not in LIGHT_DOMAIN_MODULES
    )
    assert not parts, f"`agentic-eval {' '.join(args)}` imports domain parts {parts[:10]}"
    if args[-1] != "--help":
        assert "agentic_eval.domains.retail_ops" in modules  # the domains were listed


def test_list_agents_reads_the_rosters_of_the_domains_it_names_only() -> None:
    modules = _imported("list", "agents", "browser_ops")
    assert "agentic_eval.domains.browser_ops.roster" in modules
    assert not [m for m in modules if m.startswith("agentic_eval.domains.retail_ops.")]
