"""`agentic-eval batch` and the batch library: a run is a stored plan, its samples are rows
written as they finish, its gate is read back from the store, and an interrupted or killed batch
resumes from its plan without running or counting a sample twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import RunPlan, SampleKey, close_run, open_run, plan_of, run_samples
from agentic_eval.cli.main import main
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains import get_domain
from agentic_eval.store import Store
from agentic_eval.store.models import EvalSample

EXE = Path(sys.executable).parent / "agentic-eval"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _plan(agent: str = "reference", samples: int = 1, cases: str = "match-") -> RunPlan:
    ids = [c.id for c in get_domain("retail_ops").load_cases() if c.id.startswith(cases)]
    keys = tuple(SampleKey(case=c, epoch=e) for c in ids for e in range(samples))
    return RunPlan(
        suite="retail_ops",
        keys=keys,
        backend=BackendSpec(kind="scripted", agent=agent),
        model=f"scripted:{agent}",
        parameters=RunParameters(),
    )


def test_the_summary_has_the_seeds_shape_and_the_exit_follows_the_gate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _cli(capsys, "batch", "retail_ops", "--samples", "2")
    assert code == 0
    lines = out.splitlines()
    n = 2 * len(get_domain("retail_ops").load_cases())
    for expected in (f"samples: {n}", f"passed: {n}", "check_failed: 0",
                     "transient: 0 (excluded from the rate)", "failure rate: 0.0% (threshold 1%)",
                     "gate: PASS"):  # fmt: skip
        assert expected in lines, (expected, lines)
    assert any(line.startswith("upper bound (95%, Clopper-Pearson): ") for line in lines)
    assert any(line.startswith("pass^k (k=2): 1.00 over ") for line in lines)
    code, out, _ = _cli(capsys, "batch", "retail_ops", "--agent", "naive")
    assert code == 1 and "gate: FAIL (hard gate failed: " in out
    code, out, _ = _cli(capsys, "batch", "retail_ops", "--samples", "3", "--gate", "upper-bound")
    assert code == 1 and "gate: FAIL" in out  # 0 failures in 102 do not show <= 1%


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("batch", "no_such_domain"), "no_such_domain"),
        (("batch", "retail_ops", "--agent", "nobody"), "has no scripted agent 'nobody'"),
        (("batch", "retail_ops", "--cases", "zz-*"), "no case of retail_ops matches"),
        (("batch",), "name the DOMAIN"),
        (("batch", "--resume", "no-such-run"), "no run no-such-run in the store"),
        (("batch", "retail_ops", "--resume", "x"), "--resume takes the run's stored plan"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(capsys, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_the_plan_is_stored_and_the_gate_is_read_from_the_store() -> None:
    store = Store()
    plan = _plan()
    run_id = open_run(store, plan)
    run = store.run(run_id)
    assert run is not None and plan_of(run) == plan  # rebuilt from the row alone
    assert asyncio.run(run_samples(store, run_id)) == len(plan.keys)
    assert asyncio.run(run_samples(store, run_id)) == 0  # nothing left: nothing runs twice
    # a sample written by someone else (another worker) counts: the gate is read from the rows
    row = store.samples(run_id)[0]
    other = {c.name: getattr(row, c.name) for c in EvalSample.__table__.columns}
    other.update(id=None, run_id=None, sample=99, outcome="check_failed", hard_gate_failed=False)
    del other["id"], other["run_id"]
    store.add_samples(run_id, [other])
    s = close_run(store, run_id)
    assert s.samples == len(plan.keys) + 1 and s.counts["check_failed"] == 1
    assert s.gate.verdict == "FAIL"  # 1 failure in 6 > 1%
    (stored,) = [r for r in store.runs() if r.id == run_id]
    assert stored.gate == "FAIL" and stored.check_failed == 1 and stored.status == "finished"


def _spawn(home: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "AGENTIC_EVAL_HOME": str(home)}
    return subprocess.Popen(
        [str(EXE), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _rows(home: Path) -> int:
    try:
        store = Store(f"sqlite:///{home / 'agentic-eval.db'}")
        with store.engine.connect() as conn:
            n = len(conn.execute(select(EvalSample.id)).all())
        store.close()
        return n
    except Exception:
        return 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_stopped_or_killed_batch_resumes_without_losing_or_doubling_a_sample(
    sig: signal.Signals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(home))
    proc = _spawn(home, "batch", "retail_ops", "--samples", "40")
    try:
        deadline = time.monotonic() + 60
        while _rows(home) < 200:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    store = Store()
    (run,) = store.runs()
    planned = len(plan_of(run).keys)
    if sig == signal.SIGTERM:
        assert proc.returncode == 143 and f"resume: agentic-eval batch --resume {run.id}" in (
            out.decode()
        )
    stored_before = len(store.samples(run.id))
    assert 0 < stored_before < planned
    code, out2, err = _cli(capsys, "batch", "--resume", run.id)
    assert code == 0, err
    assert f"resuming run {run.id}: {stored_before} of {planned}" in err
    rows = store.samples(run.id)
    keys = [(r.case_id, r.sample) for r in rows]
    assert len(keys) == len(set(keys)) == planned  # none lost, none twice
    assert f"samples: {planned}" in out2.splitlines() and "gate: PASS" in out2
    assert _cli(capsys, "batch", "--resume", run.id)[0] == 0  # a finished run: nothing to do
    assert len(store.samples(run.id)) == planned
    from agentic_eval.history import load_history

    (entry,) = load_history("retail_ops")  # filed once, when the resume finished it
    assert entry.entry.run_id == run.id and entry.entry.samples == planned
    assert _cli(capsys, "report", "retail_ops")[0] == 0  # and the store agrees with it
    store.close()


def test_a_scenario_batch_is_an_ordinary_run_gated_on_its_samples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = ("batch", "--scenario", "synthesize.missing_revenue", "--samples", "20")
    code, out, _ = _cli(capsys, *scenario, "--agent", "hallucinating")
    assert code == 1 and "samples: 20" in out and "check_failed: 20" in out
    code, out, _ = _cli(capsys, *scenario, "--agent", "reference")
    assert code == 0 and "passed: 20" in out and "gate: PASS" in out
    code, _, err = _cli(capsys, "batch", "--scenario", "no.such_scenario")
    assert code == 2 and "unknown scenario 'no.such_scenario'" in err
    store = Store()
    runs = [r for r in store.runs() if r.plan is not None]
    assert sorted((r.samples, r.gate) for r in runs) == [(20, "FAIL"), (20, "PASS")]
    for r in runs:  # the plan names the scenario; each epoch is its own seeded job
        plan = plan_of(r)
        assert plan.kind == "scenario" and [k.epoch for k in plan.keys] == list(range(20))
        assert sorted(s.sample for s in store.samples(r.id)) == list(range(20))


def test_batches_write_history_entries_that_report_and_history_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentic_eval.history import load_history

    for agent in ("reference", "hallucinating"):
        _cli(capsys, "batch", "--scenario", "synthesize.missing_revenue", "--agent", agent,
             "--samples", "3")  # fmt: skip
    stored = load_history("lead_intelligence")  # read back: consistent with itself
    assert [s.entry.scorecard.totals.passed for s in stored] == [3, 0]
    assert stored[1].entry.previous_sha256 is None  # another agent: another series
    code, out, err = _cli(capsys, "report", "lead_intelligence", "--fail-on-regression")
    assert code == 2 and out.count("only one run in this series") == 2, err  # nothing alike
    pair = ("--base", stored[0].entry.run_id, "--head", stored[1].entry.run_id)
    code, out, err = _cli(capsys, "report", "lead_intelligence", *pair, "--fail-on-regression")
    assert code == 1 and "3 regressed" in out, err  # checked against the store's rows too
    code, _, _ = _cli(capsys, "batch", "retail_ops", "--no-history")
    assert code == 0 and load_history("retail_ops") == []
    code, _, err = _cli(capsys, "batch", "retail_ops", "--gate", "upper-bound", "--samples", "2")
    assert "no history entry for a batch gated on the upper bound" in err


@pytest.mark.parametrize(
    ("rate", "retries", "code", "verdict"),
    [(0.3, "0", 2, "INCONCLUSIVE"), (0.05, "2", 0, "PASS")],
    ids=["30%-529s-inconclusive", "5%-529s-retried-and-judged"],
)
def test_a_live_batch_against_a_failing_provider_is_gated_on_what_it_could_judge(
    rate: float,
    retries: str,
    code: int,
    verdict: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentic_eval.backends.scripted import respond
    from agentic_eval.core import ModelRequest, ModelResponse
    from agentic_eval.testing import FakeProvider

    def reference(request: ModelRequest) -> ModelResponse:
        return respond(get_domain("retail_ops").agents()["reference"], request)

    monkeypatch.setenv("OPENAI_API_KEY", "k-not-a-secret")
    with FakeProvider(reference, fail_rates={529: rate}, seed=7) as fake:
        got, out, err = _cli(capsys, "batch", "retail_ops", "--provider", "openai", "--base-url",
                             fake.openai_base_url, "--model", "m", "--samples", "2",
                             "--concurrency", "8", "--retries", retries)  # fmt: skip
    assert got == code, err
    assert f"gate: {verdict}" in out
    transient = int(next(x for x in out.splitlines() if x.startswith("transient: ")).split()[1])
    if rate == 0.3:
        assert transient > 0.1 * 68  # most cases met a 529 on one of their turns
    else:
        assert "passed: " in out and transient <= 0.1 * 68  # excluded, the rest judged
