"""Who a domain ships: its scripted agents' names and its mutants' names, gates and
descriptions, as plain data (what ``agentic-eval list agents`` prints without importing any
agent).

A packaged domain names a light roster module (``PackagedDomain(roster="module:ROSTER")``) and
builds its mutants from it (:meth:`Roster.mutants_of`), so each mutant's gates and description are
written once, here; the domain refuses parts whose agents differ from the roster. Any other
domain's roster is read from its :meth:`~agentic_eval.domains.base.Domain.agents` and
:meth:`~agentic_eval.domains.base.Domain.mutants`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from agentic_eval.backends.scripted import ScriptedAgent
    from agentic_eval.domains.base import Domain, Mutant

Mode = Literal["enforce", "observe"]


@dataclass(frozen=True)
class MutantEntry:
    """One mutant as listed: what :class:`~agentic_eval.domains.base.Mutant` holds besides its
    agent."""

    name: str
    gates: tuple[str, ...]
    """Names of the hard-gate checks that must catch it."""
    description: str = ""
    modes: tuple[Mode, ...] = ("enforce", "observe")
    """Approval modes it is run under."""


@dataclass(frozen=True)
class Roster:
    """A domain's scripted agents (names, in order) and mutants."""

    agents: tuple[str, ...]
    mutants: tuple[MutantEntry, ...] = ()

    def mutants_of(self, agents: Mapping[str, ScriptedAgent]) -> tuple[Mutant, ...]:
        """The roster's mutants, in its order, each with its agent from ``agents`` (by name).

        Raises:
            ValueError: When ``agents`` misses a mutant of the roster or has one it lacks.
        """
        from agentic_eval.domains.base import Mutant

        names = [m.name for m in self.mutants]
        missing, extra = set(names) - set(agents), set(agents) - set(names)
        if missing or extra:
            raise ValueError(
                f"the mutants' agents do not match the roster: missing {sorted(missing)}, "
                f"not in the roster {sorted(extra)}"
            )
        return tuple(
            Mutant(m.name, agents[m.name], m.gates, m.description, m.modes) for m in self.mutants
        )

    @classmethod
    def of(cls, agents: Mapping[str, object], mutants: tuple[Mutant, ...]) -> Roster:
        """The roster of loaded agents and mutants."""
        entries = tuple(MutantEntry(m.name, m.gates, m.description, m.modes) for m in mutants)
        return cls(tuple(agents), entries)


class RosterError(ValueError):
    """A domain's :meth:`~agentic_eval.domains.base.Domain.roster` says other than what its
    agents and mutants are: ``list agents`` and the CI outputs' expected failures would lie."""


def _differences(said: Roster, loaded: Roster) -> list[str]:
    out: list[str] = []
    if said.agents != loaded.agents:
        out.append(f"agents {list(said.agents)} in the roster, {list(loaded.agents)} loaded")
    by_name = {m.name: m for m in loaded.mutants}
    for entry in said.mutants:
        other = by_name.pop(entry.name, None)
        if other is None:
            out.append(f"mutant {entry.name} is not loaded")
        elif other != entry:
            out.append(f"mutant {entry.name} is {other} loaded, {entry} in the roster")
    out.extend(f"mutant {name} is not in the roster" for name in by_name)
    if not out:
        out.append("the mutants are in another order")
    return out


def _overrides_roster(domain: object, base: type) -> bool:
    mine: object = getattr(type(domain), "roster")  # noqa: B009
    return mine is not getattr(base, "roster")  # noqa: B009


def checked_parts(domain: Domain[Any]) -> tuple[dict[str, ScriptedAgent], tuple[Mutant, ...]]:
    """``domain``'s agents and mutants, held to its roster when it overrides
    :meth:`~agentic_eval.domains.base.Domain.roster` (which ``list agents`` and the expected
    failures of the CI outputs read instead of them); a packaged domain's parts were held to
    its roster module when they loaded.

    Raises:
        RosterError: Naming what differs.
    """
    from agentic_eval.domains.base import Domain
    from agentic_eval.domains.packaged import PackagedDomain

    agents, mutants = domain.agents(), domain.mutants()
    # a packaged domain's parts are held to its roster module when they load
    if _overrides_roster(domain, Domain) and not isinstance(domain, PackagedDomain):
        said, loaded = domain.roster(), Roster.of(agents, mutants)
        if said != loaded:
            raise RosterError(
                f"domain {domain.name}: roster() differs from its agents() and mutants(): "
                + "; ".join(_differences(said, loaded))
            )
    return agents, mutants


def listed_roster(domain: Domain[Any]) -> Roster:
    """What ``list agents`` prints for ``domain``: a packaged domain's roster as it is (its
    parts are held to it when they load, and listing must not load them), any other domain's
    held to its agents and mutants first when it overrides ``roster()``.

    Raises:
        RosterError: When an overriding roster differs from the agents and mutants.
    """
    from agentic_eval.domains.base import Domain
    from agentic_eval.domains.packaged import PackagedDomain

    if _overrides_roster(domain, Domain) and not isinstance(domain, PackagedDomain):
        checked_parts(domain)
    return domain.roster()
