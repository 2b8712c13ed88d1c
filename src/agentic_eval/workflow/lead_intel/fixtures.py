"""The lead-intelligence fixtures: source sets the stubbed tools serve, and pricing notes.

Committed fixtures are anonymised and fictional ("Acme Widgets Ltd"). Real sources live in
``$EVAL_FIXTURE_DIR/lead_intelligence/sources.json`` (same schema), which replaces the committed
file when present and is never committed (``agentic-eval guard``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentic_eval.domains.fixtures import FixtureLoader, find_by_id, unique_ids

SUITE = "lead_intelligence"
"""The workflow's name: the fixtures folder under ``$EVAL_FIXTURE_DIR`` and the suite its
transcripts are filed under."""
COMMITTED = Path(__file__).parent / "data" / "sources.json"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RegistryEntry(_Frozen):
    """One hit of the company-registry search."""

    company_number: str
    name: str
    status: str
    url: str = Field(description="The filing's URL (fetch it for the text).")


class Page(_Frozen):
    """A retrievable source: a registry filing or a crawled web page."""

    url: str
    title: str
    text: str


class SourceSet(_Frozen):
    """What the tools can find and fetch for one job."""

    id: str
    description: str = ""
    registry: tuple[RegistryEntry, ...]
    pages: tuple[Page, ...]

    @model_validator(mode="after")
    def _unique_urls(self) -> SourceSet:
        unique_ids(f"page url in source set {self.id}", (p.url for p in self.pages))
        return self

    def page(self, url: str) -> Page:
        """The page at ``url``.

        Raises:
            KeyError: When there is none.
        """
        try:
            return find_by_id(self.pages, url, lambda p: p.url)
        except KeyError:
            raise KeyError(f"page {url!r} in source set {self.id!r}") from None


class PricingNotes(_Frozen):
    """An operator's own pricing notes, as written."""

    id: str
    operator: str
    text: str


class LeadFixtures(_Frozen):
    """Every source set and every set of pricing notes."""

    schema_version: int = 1
    note: str = ""
    source_sets: tuple[SourceSet, ...]
    pricing_notes: tuple[PricingNotes, ...]

    @model_validator(mode="after")
    def _unique(self) -> LeadFixtures:
        unique_ids("source set", (s.id for s in self.source_sets))
        unique_ids("pricing notes", (n.id for n in self.pricing_notes))
        return self

    def source_set(self, set_id: str) -> SourceSet:
        """The source set called ``set_id``.

        Raises:
            KeyError: When there is none.
        """
        try:
            return find_by_id(self.source_sets, set_id, lambda s: s.id)
        except KeyError:
            raise KeyError(f"source set {set_id!r}") from None

    def notes(self, notes_id: str) -> PricingNotes:
        """The pricing notes called ``notes_id``.

        Raises:
            KeyError: When there are none.
        """
        try:
            return find_by_id(self.pricing_notes, notes_id, lambda n: n.id)
        except KeyError:
            raise KeyError(f"pricing notes {notes_id!r}") from None


load_fixtures = FixtureLoader(LeadFixtures, SUITE, COMMITTED)
"""The fixtures in use (the external file when present); raises FixtureError, one line."""


def external_fixtures() -> str | None:
    """sha256 of the external fixtures in use (canonical), or None for the committed ones."""
    from agentic_eval.core.canonical import sha256_of

    if load_fixtures.path() == COMMITTED:
        return None
    return sha256_of(load_fixtures())
