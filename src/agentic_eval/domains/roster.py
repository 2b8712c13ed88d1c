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
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentic_eval.backends.scripted import ScriptedAgent
    from agentic_eval.domains.base import Mutant

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
