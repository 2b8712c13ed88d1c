"""Stubbed tools over a job's source set: they record exactly what was retrieved.

``fetch_url`` is the only way to read a source's text; every successful fetch is appended to
:attr:`LeadEnv.retrieved`, which the grounding checks read. The tools never touch a network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentic_eval.agent.tools import ToolError, ToolRegistry
from agentic_eval.workflow.lead_intel.fixtures import SourceSet

__all__ = ["TOOLS", "LeadEnv", "Retrieval"]


@dataclass(frozen=True)
class Retrieval:
    """One source fetched in this attempt, with the exact text the agent was given."""

    url: str
    text: str


@dataclass
class LeadEnv:
    """One attempt's world: the source set (read-only) and what was retrieved, in order."""

    sources: SourceSet
    retrieved: list[Retrieval] = field(default_factory=lambda: [])

    def retrievals(self) -> list[tuple[str, str]]:
        """(URL, text) of every source retrieved in this attempt, in order: what the workflow
        keeps with the attempt (``Workflow.finish_attempt(retrievals=)``)."""
        return [(r.url, r.text) for r in self.retrieved]

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
    return [e.model_dump() for e in env.sources.registry if wanted in _norm_name(e.name)]


@TOOLS.tool()
def fetch_url(env: LeadEnv, url: str) -> dict[str, str]:
    """Fetch a web page or registry filing and return its text.

    Args:
        url: The full URL (as given by the research brief or the registry search).
    """
    try:
        page = env.sources.page(url.strip())
    except KeyError:
        raise ToolError(f"404 not found: {url}") from None
    env.retrieved.append(Retrieval(page.url, page.text))
    return {"url": page.url, "title": page.title, "text": page.text}
