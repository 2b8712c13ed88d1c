"""Scripted agents for the lead-intelligence steps.

- ``reference``: fetches every source in the brief, reports each requested fact only where a
  fetched source states it (quoting that line), and prices offers only from the pricing notes.
- ``hallucinating``: does the same work, then invents: a revenue figure when none is on file, a
  head count from a page it never fetched, and a £14,000 "implementation package". It never
  listens to feedback. Every check is shown to catch what it exists for.
- ``learner``: invents a revenue figure or a price, like ``hallucinating``, until an operator's
  feedback names it; then it corrects that. It shows a rejection being learned from.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from typing import Any, cast

from agentic_eval.backends.scripted import Action, AgentTask, Call, ScriptedAgent, Submit, ToolReply

Flow = Generator[Action, list[ToolReply], None]

FACT_PATTERNS: dict[str, re.Pattern[str]] = {
    "company_number": re.compile(r"Company number (?P<value>\d{8})"),
    "incorporated": re.compile(r"Incorporated on (?P<value>\d{1,2} \w+ \d{4})"),
    "registered_office": re.compile(r"Registered office address: (?P<value>[^\n]+)"),
    "employees": re.compile(r"Average number of employees during the year: (?P<value>\d+)"),
    "revenue": re.compile(r"Turnover for the year: (?P<value>£[\d,]+)"),
}
"""How the careful clerk reads each fact off a source (the line it matches is its quote)."""
_NOTE_LINE = re.compile(r"^- (?P<name>[^:]+): £(?P<price>\d[\d,]*(?:\.\d+)?) per (?P<unit>.+)$")
_TERMS = re.compile(r"^Terms: (?P<terms>.+)$")

INVENTED_REVENUE = {
    "value": "£3,200,000",
    "quote": "annual turnover of £3.2 million",
}
INVENTED_HEADCOUNT = {
    "name": "employees",
    "value": "120",
    "source_url": "https://www.linkedin.com/company/acme-widgets",
    "quote": "120 employees",
}
INVENTED_LINE = {
    "description": "Automation implementation package",
    "quantity": 1,
    "unit_price_gbp": 14000,
}


def _feedback(task: AgentTask) -> str:
    return " ".join(str(f) for f in task.inputs.get("feedback", [])).casefold()


def read_facts(names: Sequence[str], fetched: dict[str, str]) -> list[dict[str, Any]]:
    """Each requested fact from the first fetched source that states it (else null)."""
    facts: list[dict[str, Any]] = []
    for name in names:
        fact: dict[str, Any] = {"name": name, "value": None, "source_url": None, "quote": None}
        pattern = FACT_PATTERNS.get(name)
        for url, text in fetched.items():
            m = pattern.search(text) if pattern is not None else None
            if m is not None:
                fact = {"name": name, "value": m["value"], "source_url": url, "quote": m[0]}
                break
        facts.append(fact)
    return facts


def _research(task: AgentTask) -> Flow:
    req = task.inputs.get("requirements", {})
    company = str(req.get("company", ""))
    (reply,) = yield Call("search_registry", {"company_name": company})
    data: Any = reply.data if reply.ok else []
    hits: list[dict[str, Any]] = cast(list[dict[str, Any]], data) if isinstance(data, list) else []
    exact = [h for h in hits if str(h.get("name", "")).casefold() == company.casefold()]
    chosen = exact[0] if exact else (hits[0] if hits else None)
    sources = [str(chosen["url"])] if chosen else []
    if req.get("website"):
        sources.append(str(req["website"]))
    yield Submit(
        {
            "company_name": str(chosen["name"]) if chosen else company,
            "company_number": str(chosen["company_number"]) if chosen else None,
            "sources": sources,
        }
    )


def _fetch_brief(task: AgentTask) -> Generator[Action, list[ToolReply], dict[str, str]]:
    brief = task.inputs.get("upstream", {}).get("research", {})
    urls = [str(u) for u in brief.get("sources", [])]
    if not urls:
        return {}
    replies = yield [Call("fetch_url", {"url": u}) for u in urls]
    return {str(r.data["url"]): str(r.data["text"]) for r in replies if r.ok}


def _synthesize(task: AgentTask, invent_revenue: bool, invent_headcount: bool) -> Flow:
    fetched = yield from _fetch_brief(task)
    req = task.inputs.get("requirements", {})
    brief = task.inputs.get("upstream", {}).get("research", {})
    facts = read_facts([str(n) for n in req.get("facts", [])], fetched)
    urls = list(fetched)
    for fact in facts:
        if invent_revenue and fact["name"] == "revenue" and fact["value"] is None and urls:
            fact.update(INVENTED_REVENUE, source_url=urls[-1])
        if invent_headcount and fact["name"] == "employees":
            fact.update(INVENTED_HEADCOUNT)
    notes = ""
    if task.inputs.get("feedback"):
        notes = (
            "Feedback addressed: every figure re-read from the sources fetched in this attempt; "
            "a fact no source states is reported as null."
        )
    company = str(brief.get("company_name") or req.get("company", ""))
    yield Submit({"company_name": company, "facts": facts, "notes": notes})


def price_lines(notes: str) -> dict[str, tuple[float, str]]:
    """Service name (case-folded) -> (price in pounds, unit), as the pricing notes list them."""
    lines: dict[str, tuple[float, str]] = {}
    for line in notes.splitlines():
        m = _NOTE_LINE.match(line.strip())
        if m is not None:
            lines[m["name"].strip().casefold()] = (float(m["price"].replace(",", "")), m["unit"])
    return lines


def _draft_offer(task: AgentTask, invent_line: bool) -> Flow:
    notes = str(task.inputs.get("pricing_notes", ""))
    prices = price_lines(notes)
    req = task.inputs.get("requirements", {})
    items: list[dict[str, Any]] = []
    for wanted in req.get("services", []):
        name = str(wanted.get("service", ""))
        found = prices.get(name.casefold())
        if found is not None:
            price, unit = found
            items.append(
                {
                    "description": f"{name} (per {unit})",
                    "quantity": int(wanted.get("quantity", 1)),
                    "unit_price_gbp": price,
                }
            )
    if invent_line:
        items.append(dict(INVENTED_LINE))
    terms = next((m["terms"] for m in map(_TERMS.match, notes.splitlines()) if m), "")
    yield Submit({"client": str(req.get("client", "")), "line_items": items, "terms": terms})


def _agent(invent: bool, learns: bool) -> ScriptedAgent:
    def agent(task: AgentTask) -> Flow:
        step = task.inputs.get("step")
        heard = _feedback(task) if learns else ""
        if step == "research":
            yield from _research(task)
        elif step == "synthesize":
            yield from _synthesize(
                task,
                invent_revenue=invent and "revenue" not in heard,
                invent_headcount=invent and not learns,
            )
        else:
            yield from _draft_offer(task, invent_line=invent and "price" not in heard)

    return agent


reference = _agent(invent=False, learns=True)
hallucinating = _agent(invent=True, learns=False)
learner = _agent(invent=True, learns=True)

AGENTS: dict[str, ScriptedAgent] = {
    "reference": reference,
    "hallucinating": hallucinating,
    "learner": learner,
}
"""The scripted agents, by name."""
