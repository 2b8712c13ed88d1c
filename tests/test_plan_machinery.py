"""A run is a stored plan, finished from its rows through the sinks its backend spec implies.

The pieces the commands are built on: sinks chosen from the stored spec (not from the backend
object), a scorecard rebuilt from the rows equal to the one held in memory, the sample key's
attempt in the store's unique key, a scenario attempt stored as a real run of one sample with
its count and gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import RunPlan, SampleKey, open_run, run_agent_batch
from agentic_eval.batch.finish import finish_plan, plan_sinks, run_plan, stored_runs
from agentic_eval.batch.planning import replay_plan, scenario_plan, suite_plan
from agentic_eval.cli.main import main
from agentic_eval.core.scorecard import ProducedBy
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains.registry import get_domain
from agentic_eval.evaluation.gate import build_scorecard
from agentic_eval.evaluation.sinks import RecordingSink, ReplaySink
from agentic_eval.recordings.compare import scorecard_sha256
from agentic_eval.store import Store

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.delenv("AGENTIC_EVAL_DATABASE_URL", raising=False)
    s = Store()
    s.migrate()
    yield s
    s.close()


def _params(**kw: Any) -> RunParameters:
    return RunParameters(**kw)


def test_sinks_follow_from_the_stored_spec() -> None:
    domain = get_domain("retail_ops")
    cases = domain.load_cases()[:2]
    scripted = suite_plan(domain, cases, BackendSpec(kind="scripted"), _params())
    assert plan_sinks(scripted) == []
    recorded = BackendSpec(kind="scripted", record=True, recordings="/tmp/r")
    (sink,) = plan_sinks(suite_plan(domain, cases, recorded, _params(), full=False))
    assert isinstance(sink, RecordingSink) and sink.full is False
    replay = replay_plan(domain, cases, RECORDINGS, "reference")
    (sink,) = plan_sinks(replay)
    assert isinstance(sink, ReplaySink) and sink.scorecard
    assert sink.directory == RECORDINGS / "retail_ops" / "reference"
    scenario = scenario_plan(
        "synthesize.grounded",
        BackendSpec(kind="replay", agent="reference", recordings=str(RECORDINGS)),
        _params(),
    )
    (sink,) = plan_sinks(scenario)
    assert isinstance(sink, ReplaySink) and not sink.scorecard  # no scorecard file there


def test_a_replay_plan_carries_the_recorded_samples_and_parameters() -> None:
    domain = get_domain("retail_ops")
    plan = replay_plan(domain, domain.load_cases(), RECORDINGS, "reference")
    card = (RECORDINGS / "retail_ops" / "reference" / "scorecard.json").read_text()
    assert len(plan.keys) == card.count('"case_id"')
    assert plan.parameters.approval_mode == "enforce"
    assert plan.backend.kind == "replay" and plan.full


def test_the_scorecard_rebuilt_from_rows_is_the_one_held_in_memory(store: Store) -> None:
    domain = get_domain("retail_ops")
    plan = suite_plan(
        domain, domain.load_cases(), BackendSpec(kind="scripted", agent="naive"), _params(),
        samples=2,
    )  # fmt: skip
    seen: list[Any] = []
    run_id = open_run(store, plan)
    session = asyncio.run(run_plan(store, run_id, on_case=lambda c: seen.append(c.result)))
    produced = ProducedBy(
        agent="naive", agent_kind="scripted", backend="scripted", model="scripted:naive",
        approval_mode="enforce",
    )  # fmt: skip
    in_memory = build_scorecard(
        "retail_ops", produced, seen, max_failure_rate=0.01, max_transient=0.2
    )
    assert session.scorecard == in_memory
    row = store.run(run_id)
    assert row is not None and row.scorecard_sha256 == scorecard_sha256(in_memory)
    assert row.samples == 2 * len(domain.load_cases()) and row.gate == "FAIL"
    # finishing again from the rows alone gives the same scorecard (a resume, a worker's end)
    again = finish_plan(store, run_id)
    assert again.scorecard == in_memory and again.status == "finished"


def test_the_attempt_is_part_of_the_sample_key_in_the_store(store: Store) -> None:
    domain = get_domain("retail_ops")
    plan = suite_plan(domain, domain.load_cases()[:1], BackendSpec(kind="scripted"), _params())
    run_id = open_run(store, plan)
    asyncio.run(run_plan(store, run_id))
    (row,) = store.samples(run_id)
    now = datetime.now(UTC)
    base = {c.name: getattr(row, c.name) for c in row.__table__.columns if c.name not in ("id",)}
    base.pop("run_id")
    store.add_samples(run_id, [{**base, "attempt": 2, "started_at": now, "finished_at": now}])
    store.add_samples(run_id, [{**base, "attempt": 2}])  # the same key again: one row kept
    rows = store.samples(run_id)
    assert [(r.case_id, r.sample, r.attempt) for r in rows] == [
        (row.case_id, 0, 1),
        (row.case_id, 0, 2),
    ]
    verdicts = store.sample_verdicts([run_id])[run_id]
    assert sorted(v.attempt for v in verdicts) == [1, 2]
    assert sorted(r.attempt for r in stored_runs(store, run_id)) == [1, 2]


def test_a_plan_of_later_attempts_is_refused() -> None:
    with pytest.raises(ValueError, match="first attempts"):
        RunPlan(
            suite="retail_ops",
            keys=(SampleKey(case="match-001", attempt=2),),
            backend=BackendSpec(kind="scripted"),
            model="scripted:reference",
            parameters=_params(),
        )


@pytest.mark.parametrize(("agent", "gate", "code"), [("reference", "PASS", 0),
                                                      ("hallucinating", "FAIL", 1)])  # fmt: skip
def test_a_step_attempt_is_a_run_of_one_sample_with_its_gate(
    store: Store, capsys: pytest.CaptureFixture[str], agent: str, gate: str, code: int
) -> None:
    assert main(["step", "--scenario", "synthesize.missing_revenue", "--agent", agent]) == code
    capsys.readouterr()
    runs = [r for r in store.runs() if r.domain == "lead_intelligence"]
    (run,) = runs
    assert run.samples == 1 and run.gate == gate and run.status == "finished"
    assert run.scorecard_sha256 is not None
    assert run.passed == (1 if gate == "PASS" else 0)


def test_a_scenario_batch_through_run_agent_batch_files_real_counts(store: Store) -> None:
    plan = scenario_plan(
        "synthesize.missing_revenue",
        BackendSpec(kind="scripted", agent="hallucinating"),
        _params(max_failure_rate=0.0),
        samples=3,
    )
    s = asyncio.run(run_agent_batch(store, plan))
    assert s.samples == 3 and s.counts["check_failed"] == 3 and s.gate.verdict == "FAIL"
    assert s.session is not None and s.session.scorecard.totals.cases == 3
    row = store.run(s.run_id)
    assert row is not None and row.samples == 3 and row.gate == "FAIL"


def test_threads_asking_for_a_domain_at_once_all_see_the_plugins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker's thread pool asks the registry at once: none may see it half loaded."""
    import threading
    import time

    from agentic_eval.domains import registry

    real = registry.entry_points

    def slow(**kw: Any) -> Any:
        time.sleep(0.2)  # the first load takes a while: the others arrive meanwhile
        return real(**kw)

    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_done", False, raising=False)
    monkeypatch.setattr(registry, "_domains", {})
    monkeypatch.setattr(registry, "entry_points", slow)
    found: list[str] = []

    def ask() -> None:
        try:
            found.append(registry.get_domain("retail_ops").name)
        except registry.UnknownDomainError as exc:
            found.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert found == ["retail_ops"] * 8


def test_batch_replays_every_recorded_sample_and_says_whether_it_reproduced(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = ("--recordings", str(RECORDINGS), "--no-history")
    assert main(["batch", "retail_ops", "--backend", "replay", "--agent", "naive", *rec]) == 1
    out = capsys.readouterr().out
    assert "samples: 34\n" in out and "replay: 34/34 samples reproduced" in out
    assert main(["batch", "retail_ops", "--backend", "replay", *rec]) == 0
    assert "replay: 34/34 samples reproduced" in capsys.readouterr().out
    # an epoch never recorded is a loud miss, and the batch is not reproduced (exit 1)
    code = main(["batch", "--scenario", "synthesize.grounded", "--backend", "replay",
                 "--samples", "2", *rec])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1 and "replay: 1/2 samples reproduced; NOT reproduced: " in out
    assert "no recording" in out
    assert main(["batch", "retail_ops", "--backend", "replay", "--samples", "2", *rec]) == 2
    assert "drop --samples" in capsys.readouterr().err
