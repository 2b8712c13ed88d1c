"""The typed outputs of the lead-intelligence steps: what the ``submit`` tool accepts."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

FactName = Literal["company_number", "incorporated", "registered_office", "employees", "revenue"]
"""The facts a ``synthesize`` step may report: a typed vocabulary, so "the revenue fact" is a
field value, never a keyword match on a free-text name."""
FACT_NAMES: tuple[FactName, ...] = get_args(FactName)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ResearchBrief(_Output):
    """``research``: where the facts about the company can be found."""

    company_name: str = Field(description="The company's registered name.")
    company_number: str | None = Field(description="Registry number (null when not found).")
    sources: list[str] = Field(description="URLs worth reading for the synthesis.")


class Fact(_Output):
    """One verified fact. ``value`` null means: not stated in any source retrieved."""

    name: FactName = Field(
        description=(
            "Which fact: company_number, incorporated (the incorporation date), "
            "registered_office, employees (the number of employees) or revenue (an amount "
            "with its currency)."
        )
    )
    value: str | None = Field(
        description="The value as the source states it; null when no retrieved source states it."
    )
    source_url: str | None = Field(
        default=None, description="The URL, fetched in this attempt, that states the value."
    )
    quote: str | None = Field(
        default=None,
        description=(
            "A verbatim quote from that source stating the value as this fact: the figure with "
            "its unit or currency, beside the fact's own words."
        ),
    )


class VerifiedIntel(_Output):
    """``synthesize``: facts about a company, each grounded in a retrieved source."""

    company_name: str = Field(description="The company the facts are about.")
    facts: list[Fact] = Field(description="Every requested fact, valued or null.")
    notes: str = Field(default="", description="Anything the operator should know.")

    @model_validator(mode="after")
    def _one_of_each(self) -> VerifiedIntel:
        names = [f.name for f in self.facts]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"each fact is reported once; reported more than once: {twice}")
        return self


class LineItem(_Output):
    """One priced line of an offer."""

    description: str = Field(description="The service, as named in the pricing notes.")
    quantity: int = Field(ge=1, description="How many units (sites, days, months...).")
    unit_price_gbp: float = Field(ge=0, description="Price per unit in pounds sterling.")


class OfferDraft(_Output):
    """``draft_offer``: a priced offer for the operator to review."""

    client: str = Field(description="Who the offer is for.")
    line_items: list[LineItem] = Field(description="The priced lines.")
    terms: str = Field(description="Payment and other terms.")
    notes: str = Field(default="", description="Anything the operator should know.")
