"""Every attempt keeps what its tools retrieved: each source with the exact text, in order,
each text stored once however many attempts retrieved it. On SQLite and PostgreSQL.

This is the record a replay of a real job serves from (what the first attempt saw, not what the
source says today); serving it is built on top of it.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from sqlalchemy import func, select

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.evaluation.scenario import run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.store import Store
from agentic_eval.store.workflow_tables import WfRetrieval, WfSourceText
from agentic_eval.workflow.errors import NotFound, WorkflowError
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.retrievals import text_sha256
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow


def _claim(wf: Workflow) -> str:
    suffix = os.urandom(4).hex()
    wf.ensure_template(f"t-{suffix}", ["research"], title="t")
    human = wf.ensure_user(f"olivia-{suffix}", "operator")
    bot = wf.ensure_user(f"bot-{suffix}", "agent")
    job = wf.create_job(f"t-{suffix}", created_by=human.id)
    return wf.claim_step(job.id, "research", bot.id).id


def _count(wf: Workflow, table: type, digest: str | None = None) -> int:
    stmt = select(func.count()).select_from(table)
    if digest is not None:
        stmt = stmt.where(table.sha256 == digest)  # type: ignore[attr-defined]
    with wf.store.engine.connect() as conn:
        return int(conn.execute(stmt).scalar_one())


def test_retrievals_are_kept_in_order_with_their_exact_text(wf: Workflow) -> None:
    page = f"Acme Ltd, Leeds since 2002. {os.urandom(4).hex()}"
    other = f"Acme Ltd filing: revenue GBP 4.2m. {os.urandom(4).hex()}"
    first = wf.finish_attempt(
        _claim(wf), {"text": "x"},
        retrievals=[("https://acme.example/about", page), ("registry:0001", other)],
    )  # fmt: skip
    second = wf.finish_attempt(
        _claim(wf), {"text": "y"}, retrievals=[("https://acme.example/about", page)]
    )
    got = wf.retrievals(first.id)
    assert [(r.source, r.text) for r in got] == [
        ("https://acme.example/about", page),
        ("registry:0001", other),
    ]
    assert got[0].sha256 == text_sha256(page)
    assert [(r.source, r.text) for r in wf.retrievals(second.id)] == [
        ("https://acme.example/about", page)
    ]
    assert _count(wf, WfSourceText, text_sha256(page)) == 1  # the same page is stored once
    assert wf.retrievals(wf.finish_attempt(_claim(wf), {"text": "z"}).id) == []


def test_a_changed_page_is_a_new_text_and_the_old_one_stays(wf: Workflow) -> None:
    tag = os.urandom(4).hex()
    before = wf.finish_attempt(_claim(wf), {}, retrievals=[("u", f"Leeds since 2002 {tag}")])
    after = wf.finish_attempt(_claim(wf), {}, retrievals=[("u", f"Bradford since 2002 {tag}")])
    assert wf.retrievals(before.id)[0].text == f"Leeds since 2002 {tag}"
    assert wf.retrievals(after.id)[0].text == f"Bradford since 2002 {tag}"


def test_text_a_database_cannot_hold_is_kept_as_close_as_it_can(wf: Workflow) -> None:
    done = wf.finish_attempt(_claim(wf), {}, retrievals=[("u\x00", "a\x00b \ud800 c")])
    (kept,) = wf.retrievals(done.id)
    assert (kept.source, kept.text) == ("u", "ab \ufffd c")
    assert kept.sha256 == text_sha256("ab \ufffd c")


def test_bad_retrievals_and_unknown_attempts_are_one_line(wf: Workflow) -> None:
    claim = _claim(wf)
    with pytest.raises(WorkflowError, match=r"^retrieval 1 is not a \(source, text\) pair"):
        wf.finish_attempt(claim, {}, retrievals=[("a", "b"), ("c", 3)])  # type: ignore[list-item]
    assert wf.attempts(wf.claims(_job_of(wf, claim))[0].job_id)[0].status == "running"
    with pytest.raises(NotFound, match="no attempt nope"):
        wf.retrievals("nope")


def _job_of(wf: Workflow, claim_id: str) -> str:
    return next(j.id for j in wf.jobs() for c in wf.claims(j.id) if c.id == claim_id)


def test_an_agents_attempt_keeps_what_its_fetches_returned(tmp_path: Path) -> None:
    """On SQLite only: a scenario adds the real workflow templates, which the session's shared
    PostgreSQL database must not get (other modules add them their way)."""
    wf = Workflow(Store(f"sqlite:///{tmp_path / 'seeded.db'}"))
    s = get_scenario("synthesize.grounded")
    run = asyncio.run(
        run_scenario(wf, s, ScriptedBackend("reference", AGENTS["reference"]),
                     RunSettings("scripted:reference"))
    )  # fmt: skip
    assert run.case.transcript is not None
    fetched = [
        (json.loads(c.result)["url"], json.loads(c.result)["text"])
        for c in run.case.transcript.tool_calls
        if c.name == "fetch_url" and c.status == "ok"
    ]
    assert fetched, "the reference agent fetched nothing: the test would prove nothing"
    kept = wf.retrievals(run.attempt_id)
    assert [(r.source, r.text) for r in kept] == fetched
    assert _count(wf, WfRetrieval) >= len(fetched)
    wf.store.close()


def test_retrievals_kept_before_titles_were_read_back_as_found_and_untitled(
    tmp_path: Path,
) -> None:
    """Migration 0011 adds the title and the found flag: a retrieval kept at 0010 reads back
    found, with no title; downgrading drops them (and the corpus stamps) again."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    import agentic_eval.store.db as db
    from agentic_eval.workflow.records import Retrieval

    store = Store(f"sqlite:///{tmp_path / 'old.db'}")
    wf = Workflow(store)
    kept = wf.finish_attempt(_claim(wf), {}, retrievals=[Retrieval("u", "page", "Title")])
    assert [(r.title, r.found) for r in wf.retrievals(kept.id)] == [("Title", True)]
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(db.__file__).parent / "migrations"))
    with store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0010")
        columns = {r[1] for r in conn.execute(text("PRAGMA table_info(wf_retrieval)"))}
        assert not columns & {"title", "found"}
        samples = {r[1] for r in conn.execute(text("PRAGMA table_info(eval_sample)"))}
        assert not samples & {"source_job_id", "case_verdict"}
        db._upgrade(conn)  # pyright: ignore[reportPrivateUsage]
    store.close()
    again = Workflow(Store(f"sqlite:///{tmp_path / 'old.db'}"))
    assert [(r.source, r.text, r.title, r.found) for r in again.retrievals(kept.id)] == [
        ("u", "page", None, True)
    ]
    again.store.close()
