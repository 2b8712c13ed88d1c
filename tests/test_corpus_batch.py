"""``replay_corpus`` and ``batch --corpus`` (issue 19, acceptance 2), on SQLite and PostgreSQL.

Two real jobs built with the real services (``corpus_world``): the older one's synthesize was
first rejected, the newer one's first approved; beside them a job an eval scenario seeded and a
job a workflow batch drove, both decided, neither a human's. The corpus replays the real jobs'
decided steps newest job first, uses the first decision, carries a rejection's reason as
feedback, stamps every sample with its job and verdict, and its gate judges only the approved
cases.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import BatchError, BatchSummary, RunPlan, replay_corpus
from agentic_eval.batch.planning import corpus_plan
from agentic_eval.cli.main import main
from agentic_eval.core.aio import run
from agentic_eval.core.settings import RunParameters
from agentic_eval.corpus import case_name, judged_against
from agentic_eval.evaluation.scenario import run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.store import Store
from agentic_eval.store.models import EvalSample
from agentic_eval.workflow.errors import NotFound
from agentic_eval.workflow.lead_intel.fixtures import SUITE
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow
from corpus_world import REASON, History, build_history, reference


@dataclass
class Corpus:
    store: Store
    wf: Workflow
    since: datetime
    older: History
    newer: History
    url: str


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def c(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Corpus]:
    """The history above, in SQLite or in a PostgreSQL database of this module's own (the
    real lead-intelligence template must not reach the session's shared one)."""
    url = (
        f"sqlite:///{tmp_path / 'corpus.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("own_pg_url")
    )
    store = Store(url)
    store.migrate()
    wf = Workflow(store)
    since = datetime.now(UTC)
    older = build_history(wf, tmp_path / "fixtures", monkeypatch)
    monkeypatch.delenv("EVAL_FIXTURE_DIR")
    newer = build_history(wf, tmp_path / "unused", monkeypatch, synthesize="approve")
    s = get_scenario("synthesize.grounded")
    settings = RunSettings("scripted:reference")
    seeded = asyncio.run(run_scenario(wf, s, reference(), settings))
    operator = wf.ensure_user(f"o-{os.urandom(3).hex()}", "operator")
    wf.decide(seeded.attempt_id, operator.id, "approve")  # decided, but by an eval
    build_history(wf, tmp_path / "batch", monkeypatch, origin="workflow-batch")
    monkeypatch.delenv("EVAL_FIXTURE_DIR")
    yield Corpus(store, wf, since, older, newer, url)
    store.close()


def _spec(agent: str = "reference") -> BackendSpec:
    return BackendSpec(kind="scripted", agent=agent)


def _plan(c: Corpus, agent: str = "reference", samples: int = 2, **select: Any) -> RunPlan:
    return corpus_plan(
        c.store, _spec(agent), RunParameters(), since=c.since, samples=samples, **select
    )


def _replay(c: Corpus, agent: str = "reference", samples: int = 2, **select: Any) -> BatchSummary:
    return run(replay_corpus(c.store, _spec(agent), since=c.since, samples=samples, **select))


def test_the_corpus_is_the_real_jobs_newest_first_by_their_first_decision(c: Corpus) -> None:
    plan = _plan(c)
    assert plan.corpus is not None
    got = [(e.job_id, e.step, e.verdict) for e in plan.corpus.entries]
    new, old = c.newer.job.id, c.older.job.id
    assert got == [
        (new, "research", "approved"),
        (new, "synthesize", "approved"),
        (old, "research", "approved"),
        (old, "synthesize", "rejected"),
    ]  # the scenario's and the workflow batch's jobs are not there
    assert plan.corpus.entries[3].decision_id == c.older.rejection
    assert [e.case for e in _plan(c, limit=1).corpus.entries] == [case_name(new, "research")]  # type: ignore[union-attr]


def test_a_corpus_batch_stamps_every_sample_and_judges_only_approved_cases(c: Corpus) -> None:
    s = _replay(c)
    assert s.gate.verdict == "PASS", s.gate
    assert (s.samples, s.gate.judged, s.verdicts) == (6, 6, {"approved": 6, "rejected": 2})
    entries = s.plan.entries()
    with c.store.engine.connect() as conn:
        rows = conn.execute(
            select(EvalSample.case_id, EvalSample.source_job_id, EvalSample.case_verdict).where(
                EvalSample.run_id == s.run_id
            )
        ).all()
    assert len(rows) == 8
    for case, job, verdict in rows:
        assert (job, verdict) == (entries[case].job_id, entries[case].verdict)
    session = s.session
    assert session is not None
    card = session.scorecard
    assert card.totals.cases == 8 and card.gate.judged == 6
    rejected = [r for r in card.cases if r.case_verdict == "rejected"]
    assert [r.case_id for r in rejected] == [case_name(c.older.job.id, "synthesize")] * 2


def test_the_gate_never_counts_a_rejected_case(c: Corpus) -> None:
    """The hallucinating agent fails every synthesize step: the newer job's (approved) fail the
    gate; the older job's (rejected) run with the reason as feedback and are not counted."""
    s = _replay(c, agent="hallucinating")
    assert s.gate.verdict == "FAIL"
    assert (s.gate.judged, s.gate.failures) == (6, 2)
    rows = run_rows(c, s.run_id)
    older = case_name(c.older.job.id, "synthesize")
    assert {o for case, o in rows if case == older} == {"check_failed"}  # ran, failed, unjudged
    only_research = _replay(c, agent="hallucinating", template=SUITE, limit=1)
    assert only_research.gate.verdict == "PASS"


def run_rows(c: Corpus, run_id: str) -> list[tuple[str, str]]:
    with c.store.engine.connect() as conn:
        stmt = select(EvalSample.case_id, EvalSample.outcome).where(EvalSample.run_id == run_id)
        return [(str(a), str(b)) for a, b in conn.execute(stmt)]


def test_a_rejected_case_is_replayed_with_its_reason_as_feedback(c: Corpus) -> None:
    s = _replay(c, samples=1)
    older = case_name(c.older.job.id, "synthesize")
    with c.store.engine.connect() as conn:
        (text,) = conn.execute(
            select(EvalSample.transcript).where(
                EvalSample.run_id == s.run_id, EvalSample.case_id == older
            )
        ).one()
    assert REASON in text


def test_an_empty_or_unusable_selection_is_one_line(c: Corpus) -> None:
    with pytest.raises(
        BatchError, match=r"^the corpus is empty: no decided step of a real or imported job"
    ):
        _plan(c, template="no-such-template")
    with pytest.raises(BatchError, match="unknown job origin 'robot'"):
        _plan(c, origins=("robot",))
    with pytest.raises(BatchError, match="replay and --record of a corpus are not supported"):
        corpus_plan(c.store, BackendSpec(kind="replay", agent="reference", recordings="x"),
                    RunParameters(), since=c.since)  # fmt: skip


def test_batch_corpus_on_the_command_line(
    c: Corpus, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_DATABASE_URL", c.url)
    since = ["--since", c.since.strftime("%Y-%m-%d %H:%M:%S.%f")]
    assert main(["batch", "--corpus", *since, "--samples", "2", "--no-history"]) == 0
    out = capsys.readouterr().out
    run_id = out.split("run: ", 1)[1].split()[0]
    assert (
        "corpus: 4 case(s) run: 3 approved (judged, 6 samples), 1 rejected (run, not judged, "
        f"2 samples); the decisions: agentic-eval corpus samples {run_id}"
    ) in out
    assert "samples: 6\n" in out and "gate: PASS" in out
    assert main(["corpus", "samples", run_id]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 9, listed  # a header and 8 samples
    older = case_name(c.older.job.id, "synthesize")
    sample_id = next(line.split()[0] for line in listed if line.endswith(older))
    assert main(["corpus", "show", sample_id]) == 0
    shown = capsys.readouterr().out
    operator = c.wf.user(c.wf.decisions(c.older.job.id)[1].operator_id).name
    assert f"job:       {c.older.job.id} (" in shown
    assert "step:      synthesize\n" in shown and "attempt:   1 (first claimed " in shown
    assert f"decision:  rejected (not judged) by {operator} at " in shown
    assert f"reason:    {REASON}" in shown
    assert main(["batch", "--corpus", *since, "--agent", "hallucinating", "--no-history"]) == 1
    capsys.readouterr()
    for args, says in [
        (["--corpus", "--template", "nope"], "the corpus is empty"),
        (["retail_ops", "--corpus"], "one of them"),
        (["retail_ops", *since], "select the --corpus"),
        (["--corpus", "--agent", "nobody"], "has no scripted agent 'nobody'"),
    ]:
        assert main(["batch", *args]) == 2, args
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, (args, err)
    for args, says in [
        (["show", "999999999"], "no sample 999999999 in the store"),
        (["samples", "no-such-run"], "run no-such-run has no corpus samples"),
    ]:
        assert main(["corpus", *args]) == 2, args
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, (args, err)


def test_only_a_corpus_sample_has_a_decision_behind_it(c: Corpus) -> None:
    with c.store.engine.connect() as conn:
        other = conn.execute(
            select(EvalSample.id).where(EvalSample.source_job_id.is_(None)).limit(1)
        ).scalar_one()  # the seeded scenario's one-sample run
    with pytest.raises(NotFound, match=f"sample {other} is not a corpus sample"):
        judged_against(c.store, other)


def test_a_corpus_batch_on_two_processes_finishes_counting_the_unjudged_samples(
    c: Corpus,
) -> None:
    """The parent waits for every planned sample, the rejected cases' included (it once counted
    only the judged ones, and waited for ever)."""
    s = run(
        asyncio.wait_for(
            replay_corpus(c.store, _spec(), since=c.since, samples=2, processes=2), 120
        )
    )
    assert (s.status, s.missing, s.samples, s.verdicts) == (
        "finished", 0, 6, {"approved": 6, "rejected": 2},
    )  # fmt: skip
    with c.store.engine.connect() as conn:
        workers = conn.execute(
            select(EvalSample.worker_id).where(EvalSample.run_id == s.run_id).distinct()
        ).scalars()
        assert set(workers) == {"process-1", "process-2"}
