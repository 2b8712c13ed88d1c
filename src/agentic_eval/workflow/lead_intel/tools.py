"""Stubbed tools over a job's source set: they record exactly what was retrieved.

``fetch_url`` is the only way to read a source's text; every successful fetch is appended to
:attr:`LeadEnv.retrieved`, which the grounding checks read. Every search, fetch and 404 is also
logged as a :class:`~agentic_eval.workflow.records.Retrieval` (:meth:`LeadEnv.retrievals`), which
the workflow keeps with the attempt. A replay of a real job serves that log instead of the
source set (:class:`Snapshot`): the agent sees what the job's first attempt saw, and a source
that attempt never retrieved ends the sample as ``error`` naming it, never today's text. The
tools never touch a network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from agentic_eval.agent.tools import DomainFault, ToolError, ToolRegistry
from agentic_eval.core.canonical import canonical_json
from agentic_eval.workflow import records
from agentic_eval.workflow.lead_intel.fixtures import Page, SourceSet

__all__ = ["SEARCH_SOURCE", "TOOLS", "LeadEnv", "NotRetrieved", "Retrieval", "Snapshot"]

SEARCH_SOURCE = "registry-search:"
"""How a registry search is kept among the retrievals: this prefix, then the normalised name
searched for (its text the canonical JSON of the hits)."""


class NotRetrieved(DomainFault):
    """A replay of a real job asked for a source its first attempt never retrieved: the fixtures
    are not versioned, so what it said then cannot be served (the sample ends as ``error``,
    naming the source; the agent is not blamed)."""

    def __init__(self, source: str, seen_by: str) -> None:
        super().__init__(
            "replay of a real job",
            f"{source} was not retrieved by {seen_by}, and the fixtures are not versioned: "
            "what it said then cannot be served",
        )
        self.source = source


@dataclass(frozen=True)
class Retrieval:
    """One source fetched in this attempt, with the exact text the agent was given."""

    url: str
    text: str


@dataclass(frozen=True)
class Snapshot:
    """What a real job's first attempt retrieved, served on replay instead of the source set."""

    kept: Mapping[str, records.Retrieved]
    """By source: the first retrieval of each."""
    seen_by: str
    """Whose retrievals they are (``job J, step S, first claimed at T``), for the errors."""

    @classmethod
    def of(cls, kept: Sequence[records.Retrieved], seen_by: str) -> Snapshot:
        """The snapshot of an attempt's retrievals (the first of each source wins)."""
        by_source: dict[str, records.Retrieved] = {}
        for r in kept:
            by_source.setdefault(r.source, r)
        return cls(by_source, seen_by)

    def get(self, source: str) -> records.Retrieved:
        """The kept retrieval of ``source``.

        Raises:
            NotRetrieved: Naming the source and whose retrievals these are.
        """
        kept = self.kept.get(source)
        if kept is None:
            raise NotRetrieved(source, self.seen_by)
        return kept


@dataclass
class LeadEnv:
    """One attempt's world: the source set (read-only) or a real job's snapshot, and what was
    retrieved, in order."""

    sources: SourceSet
    retrieved: list[Retrieval] = field(default_factory=lambda: [])
    snapshot: Snapshot | None = None
    """Set on a replay of a real job: what its first attempt retrieved is all it serves."""
    log: list[records.Retrieval] = field(default_factory=lambda: [])
    """Every search, fetch and 404 of this attempt, in order, as the tools answered."""

    def retrievals(self) -> list[records.Retrieval]:
        """Every search and fetch of this attempt, in order, with the text (and title) the agent
        was given: what the workflow keeps with the attempt (``finish_attempt(retrievals=)``)."""
        return list(self.log)

    def retrieved_text(self) -> dict[str, str]:
        """URL -> text of every source retrieved in this attempt."""
        return {r.url: r.text for r in self.retrieved}


TOOLS: ToolRegistry[LeadEnv] = ToolRegistry()
"""The lead-intelligence tools, in the order a model sees them."""


def _norm_name(name: str) -> str:
    words = name.casefold().replace(".", " ").split()
    return " ".join("ltd" if w == "limited" else w for w in words)


@TOOLS.tool()
def search_registry(env: LeadEnv, company_name: str) -> list[dict[str, Any]]:
    """Search the company registry by name. Returns the matching companies with the URL of
    each one's filing (fetch that URL to read it).

    Args:
        company_name: The name, or part of it (case does not matter).
    """
    wanted = _norm_name(company_name)
    if not wanted:
        raise ToolError("company_name is empty")
    source = SEARCH_SOURCE + wanted
    if env.snapshot is not None:
        kept = env.snapshot.get(source)
        hits = cast(list[dict[str, Any]], json.loads(kept.text))
    else:
        hits = [e.model_dump() for e in env.sources.registry if wanted in _norm_name(e.name)]
    env.log.append(records.Retrieval(source, canonical_json(hits)))
    return hits


@TOOLS.tool()
def fetch_url(env: LeadEnv, url: str) -> dict[str, str]:
    """Fetch a web page or registry filing and return its text.

    Args:
        url: The full URL (as given by the research brief or the registry search).
    """
    wanted = url.strip()
    if env.snapshot is not None:
        kept = env.snapshot.get(wanted)
        page = Page(url=kept.source, title=kept.title or "", text=kept.text) if kept.found else None
        missing = kept.text
    else:
        try:
            page, missing = env.sources.page(wanted), ""
        except KeyError:
            page, missing = None, f"404 not found: {url}"
    if page is None:
        env.log.append(records.Retrieval(wanted, missing, found=False))
        raise ToolError(missing)
    env.retrieved.append(Retrieval(page.url, page.text))
    env.log.append(records.Retrieval(page.url, page.text, page.title))
    return {"url": page.url, "title": page.title, "text": page.text}
