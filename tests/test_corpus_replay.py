"""A replay of a real job serves what its first attempt saw (issue 19, acceptance 1).

The job history is built with the real services (``corpus_world``): attempts, an upstream output
changed after the first claim, a source page changed after the first attempt, a rejection and an
approval. The replay of the step serves the inputs, the upstream output and the retrieved text as
of the first claim, never the later ones nor what the fixtures say today; a source the first
attempt never retrieved ends the sample as ``error`` naming it.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agent.tools import ToolError
from agentic_eval.backends.scripted import AgentTask, Call, ScriptedBackend, Submit, ToolReply
from agentic_eval.corpus import case_scenario, corpus_cases, scenario_from_job
from agentic_eval.evaluation.scenario import StepRun, run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.store import Store
from agentic_eval.workflow.lead_intel.fixtures import load_fixtures
from agentic_eval.workflow.lead_intel.scenarios import WEBSITE
from agentic_eval.workflow.lead_intel.tools import (
    LeadEnv,
    NotRetrieved,
    Snapshot,
    fetch_url,
    search_registry,
)
from agentic_eval.workflow.service import Workflow
from corpus_world import (
    NEW_PLACE,
    OLD_PLACE,
    REASON,
    History,
    build_history,
    reference,
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """SQLite, then a PostgreSQL database of this module's own (the real lead-intelligence
    template must not reach the session's shared database, where other modules make theirs)."""
    if request.param == "sqlite":
        s = Store(f"sqlite:///{tmp_path / 'corpus.db'}")
    else:
        s = Store(request.getfixturevalue("own_pg_url"))
    s.migrate()
    yield s
    s.close()


@pytest.fixture()
def history(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Workflow, History]:
    wf = Workflow(store)
    return wf, build_history(wf, tmp_path / "fixtures", monkeypatch)


def _fetched(run: StepRun) -> dict[str, str]:
    assert run.case.transcript is not None
    return {
        json.loads(c.result)["url"]: json.loads(c.result)["text"]
        for c in run.case.transcript.tool_calls
        if c.name == "fetch_url" and c.status == "ok"
    }


def _replay(wf: Workflow, scenario: Any, backend: Any = None) -> StepRun:
    return asyncio.run(
        run_scenario(wf, scenario, backend or reference(), RunSettings("scripted:reference"))
    )


def test_the_replay_serves_the_first_attempts_inputs_and_text(
    history: tuple[Workflow, History],
) -> None:
    wf, h = history
    later = wf.attempts(h.job.id, "synthesize")[-1]
    later_text = " ".join(r.text for r in wf.retrievals(later.id))
    assert NEW_PLACE in later_text and OLD_PLACE not in later_text  # the source did change

    s = scenario_from_job(wf, h.job.id, "synthesize")
    assert dict(s.upstream["research"]) == h.first_brief != h.second_brief
    assert s.served is not None
    assert [r.source for r in s.served.kept] == [r.source for r in wf.retrievals(h.first_attempt)]
    run = _replay(wf, s)
    fetched = _fetched(run)
    assert fetched, "the replay fetched nothing: the test would prove nothing"
    assert any(OLD_PLACE in t for t in fetched.values())
    assert not any(NEW_PLACE in t for t in fetched.values())
    first = {r.source: r.text for r in wf.retrievals(h.first_attempt)}
    assert all(first[url] == text for url, text in fetched.items())
    assert run.outcome.kind == "passed", run.outcome
    assert run.case.transcript is not None
    prompt = json.dumps([m.model_dump(mode="json") for m in run.case.transcript.turns[0].appended])
    assert all(url in prompt for url in h.first_brief["sources"])
    assert WEBSITE + "#team" not in prompt  # the later brief's source


def test_a_rejected_first_decision_is_replayed_with_its_reason(
    history: tuple[Workflow, History],
) -> None:
    wf, h = history
    (synth,) = [c for c in corpus_cases(wf) if (c.job.id, c.step_key) == (h.job.id, "synthesize")]
    assert (synth.verdict, synth.decision.id) == ("rejected", h.rejection)
    assert synth.feedback == (REASON,)
    s = case_scenario(wf, h.job.id, "synthesize", h.rejection)
    assert s.feedback() == [REASON]
    run = _replay(wf, s)
    assert run.feedback == (REASON,)
    assert any(OLD_PLACE in t for t in _fetched(run).values())


def _curious(task: AgentTask) -> Generator[Any, list[ToolReply], None]:
    """Fetches a page the job's first attempt never retrieved."""
    del task
    yield Call("fetch_url", {"url": WEBSITE + "/careers"})
    yield Submit({"company_name": "Acme Widgets Ltd", "facts": [], "notes": ""})


def test_a_source_the_first_attempt_never_retrieved_is_an_error_naming_it(
    history: tuple[Workflow, History],
) -> None:
    wf, h = history
    s = scenario_from_job(wf, h.job.id, "synthesize")
    run = _replay(wf, s, ScriptedBackend("curious", _curious))
    assert run.outcome.kind == "error"
    assert run.outcome.reason.startswith(
        f"replay of a real job: {WEBSITE}/careers was not retrieved by job {h.job.id}'s first "
        "attempt at synthesize (claimed "
    ), run.outcome.reason
    assert run.outcome.reason.endswith(
        "and the fixtures are not versioned: what it said then cannot be served"
    )
    assert run.outcome.where == "replay of a real job"


def test_a_404_the_first_attempt_saw_is_kept_and_served_as_the_same_404(
    store: Store, tmp_path: Path
) -> None:
    """What a first attempt saw includes what was not there: kept as not found, and a replay
    answers it with the same words (never today's page, nor an error)."""
    fixtures = load_fixtures().source_set("acme-widgets-a")
    env = LeadEnv(sources=fixtures)
    gone = WEBSITE + "/old-news"
    with pytest.raises(ToolError, match="404 not found"):
        fetch_url(env, gone + " ")
    fetch_url(env, WEBSITE)
    wf = Workflow(store)
    claim = _claim(wf)
    done = wf.finish_attempt(claim, {"x": 1}, retrievals=env.retrievals())
    kept = wf.retrievals(done.id)
    assert [(r.source, r.found, r.title is None) for r in kept] == [
        (gone, False, True),
        (WEBSITE, True, False),
    ]
    replay = LeadEnv(
        sources=fixtures.model_copy(update={"pages": ()}), snapshot=Snapshot.of(kept, "t")
    )
    with pytest.raises(ToolError) as missing:
        fetch_url(replay, gone)
    assert str(missing.value) == f"404 not found: {gone} "
    assert fetch_url(replay, WEBSITE) == fetch_url(LeadEnv(sources=fixtures), WEBSITE)
    with pytest.raises(NotRetrieved, match=r"^replay of a real job: registry-search:acme was not "):
        search_registry(replay, "ACME")


def _claim(wf: Workflow) -> str:
    suffix = os.urandom(3).hex()
    wf.ensure_template(f"t-{suffix}", ["research"], title="t")
    human = wf.ensure_user(f"o-{suffix}", "operator")
    job = wf.create_job(f"t-{suffix}", created_by=human.id)
    return wf.claim_step(job.id, "research", wf.ensure_user(f"b-{suffix}", "agent").id).id
