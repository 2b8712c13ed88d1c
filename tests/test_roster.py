"""A domain's roster: the names of its agents and what its mutants declare, read by ``list
agents`` without importing any agent, and held equal to the agents and mutants the domain runs."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentic_eval.cli.app import cli
from agentic_eval.domains import get_domain, unregister_domain
from agentic_eval.domains.base import Mutant
from agentic_eval.domains.packaged import PackagedDomain
from agentic_eval.domains.roster import MutantEntry, Roster

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support_chat.py"
BUILT_IN = ("retail_ops", "approval_audit", "browser_ops", "process_mapping")


def _retail(roster: str) -> PackagedDomain[object, object]:  # type: ignore[type-var]
    shipped = get_domain("retail_ops")
    assert isinstance(shipped, PackagedDomain)
    return PackagedDomain(
        name="retail_ops",
        system_prompt=shipped.system_prompt,
        description=shipped.description,
        parts="agentic_eval.domains.retail_ops.parts:PARTS",
        fixture_file=Path(sys.modules["agentic_eval.domains.retail_ops"].__file__ or "").with_name(
            "fixtures.json"
        ),
        roster=roster,
    )


def _roster_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> str:
    (tmp_path / f"{name}.py").write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:ROSTER"


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_built_in_roster_is_exactly_what_the_domain_runs(name: str) -> None:
    domain = get_domain(name)
    roster = domain.roster()
    assert roster == Roster.of(domain.agents(), domain.mutants())
    assert roster.agents and roster.mutants
    assert "reference" in roster.agents
    assert domain.failing_agents() >= {m.name for m in roster.mutants}


def test_list_agents_prints_every_agent_and_mutant_of_the_loaded_domains() -> None:
    out = CliRunner().invoke(cli, ["list", "agents", *BUILT_IN])
    assert out.exit_code == 0, out.output
    want: list[str] = []
    for name in BUILT_IN:
        domain = get_domain(name)
        want += [f"{name}\t{a}\tscripted agent" for a in domain.agents()]
        want += [
            f"{name}\t{m.name}\tmutant (must be caught by {', '.join(m.gates)}): {m.description}"
            for m in domain.mutants()
        ]
    assert out.output.splitlines() == want


def test_parts_that_differ_from_the_roster_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = get_domain("retail_ops").roster()
    short = dataclasses.replace(shipped, mutants=shipped.mutants[:-1])
    body = f"from agentic_eval.domains.roster import MutantEntry, Roster\nROSTER = {short!r}\n"
    domain = _retail(_roster_module(tmp_path, monkeypatch, "short_roster", body))
    assert domain.roster() == short  # read without the parts
    with pytest.raises(ValueError, match="differ from its roster short_roster:ROSTER"):
        domain.parts()


def test_a_roster_whose_gates_differ_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = get_domain("retail_ops").roster()
    first = dataclasses.replace(shipped.mutants[0], gates=("actions_in_scope",))
    changed = dataclasses.replace(shipped, mutants=(first, *shipped.mutants[1:]))
    body = f"from agentic_eval.domains.roster import MutantEntry, Roster\nROSTER = {changed!r}\n"
    domain = _retail(_roster_module(tmp_path, monkeypatch, "gates_roster", body))
    with pytest.raises(ValueError, match="differ from its roster"):
        domain.parts()


def test_a_roster_that_is_not_a_roster_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = _retail(_roster_module(tmp_path, monkeypatch, "not_roster", "ROSTER = ('a',)\n"))
    with pytest.raises(TypeError, match="not_roster:ROSTER is a tuple, not a roster"):
        domain.roster()


def test_mutants_of_builds_the_mutants_in_roster_order() -> None:
    def one(task: object) -> None:
        del task

    def two(task: object) -> None:
        del task

    roster = Roster(
        agents=("reference",),
        mutants=(
            MutantEntry("b", ("gate_b",), "second", ("enforce",)),
            MutantEntry("a", ("gate_a",), "first"),
        ),
    )
    built = roster.mutants_of({"a": one, "b": two})  # type: ignore[dict-item]
    assert built == (
        Mutant("b", two, ("gate_b",), "second", ("enforce",)),  # type: ignore[arg-type]
        Mutant("a", one, ("gate_a",), "first"),  # type: ignore[arg-type]
    )
    with pytest.raises(ValueError, match=r"missing \['b'\], not in the roster \['c'\]"):
        roster.mutants_of({"a": one, "c": two})  # type: ignore[dict-item]


def test_a_domain_without_a_roster_module_lists_what_it_loads() -> None:
    from agentic_eval.domains.onefile.loading import load_eval_file
    from agentic_eval.domains.registry import unregister_domain

    try:
        (domain,) = load_eval_file(EXAMPLE)
        mutants = domain.mutants()
        assert mutants  # the example ships mutants, and no roster module
        assert domain.roster() == Roster(
            tuple(domain.agents()),
            tuple(MutantEntry(m.name, m.gates, m.description, m.modes) for m in mutants),
        )
        assert domain.failing_agents() == frozenset(m.name for m in mutants)
    finally:
        unregister_domain("support_chat")


@pytest.fixture(autouse=True)
def _forget_lying_chat() -> Iterator[None]:
    yield
    unregister_domain("lying_chat")


LYING_ROSTER = f"""
import sys
sys.path.insert(0, {str(EXAMPLE.parent)!r})
from support_chat import SupportChat
from agentic_eval.domains.roster import MutantEntry, Roster


class Lying(SupportChat):
    name = "lying_chat"

    def roster(self):
        true = super().roster()
        return {{body}}


lying = Lying()
"""


@pytest.mark.parametrize(
    ("body", "says"),
    [
        # the careful agent listed as a mutant: its failures would be "expected" in CI outputs
        (
            "Roster(tuple(a for a in true.agents if a != 'careful'), "
            "(*true.mutants, MutantEntry('careful', ('user_consent',))))",
            "agents ['reference'] in the roster, ['reference', 'careful'] loaded; "
            "mutant careful is not loaded",
        ),
        (
            "Roster(true.agents, true.mutants[:1])",
            "mutant stubborn is not in the roster",
        ),
        (
            "Roster(true.agents, (MutantEntry(true.mutants[0].name, ('outcome_matches',), "
            "true.mutants[0].description), *true.mutants[1:]))",
            "gates=('outcome_matches',)",
        ),
    ],
    ids=["agent-as-mutant", "mutant-left-out", "gates-changed"],
)
@pytest.mark.parametrize(
    "command",
    [
        "list agents {f}",
        "mutants {f}",
        "run {f} --backend scripted --agent careful --no-history",
        "batch {f} --backend scripted --agent careful --no-history",
    ],
)
def test_a_roster_override_that_lies_is_refused_wherever_agents_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, says: str, command: str
) -> None:
    """``list agents`` and the CI outputs' expected failures read the roster, not the agents:
    a domain's own ``roster()`` is held to its agents and mutants before any of them runs."""
    from agentic_eval.cli.main import main

    path = tmp_path / "lying_chat.py"
    path.write_text(LYING_ROSTER.replace("{body}", body), encoding="utf-8")
    code = main(command.format(f=path).split())
    out, err = capsys.readouterr()
    assert code == 2, out + err
    (line,) = err.strip().splitlines()
    assert line.startswith(
        "agentic-eval: error: domain lying_chat: roster() differs from its agents() and mutants(): "
    ), line
    assert says in line


def test_the_roster_error_names_what_differs(tmp_path: Path) -> None:
    from agentic_eval.domains.onefile.loading import load_eval_file
    from agentic_eval.domains.roster import RosterError, checked_parts

    path = tmp_path / "lying_chat.py"
    body = "Roster(true.agents, true.mutants[:1])"
    path.write_text(LYING_ROSTER.replace("{body}", body), encoding="utf-8")
    (domain,) = load_eval_file(path)
    with pytest.raises(RosterError) as caught:
        checked_parts(domain)
    assert str(caught.value) == (
        "domain lying_chat: roster() differs from its agents() and mutants(): "
        "mutant stubborn is not in the roster"
    )
