"""A sample is keyed (case, epoch, attempt): the attempt (a workflow step's rejection round) is a
field of its own beside the epoch, in the task spec, the transcript, the backend calls, the
recording file names and the sample rows; never packed into the epoch."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from agentic_eval.backends.base import CallContext, ModelBackend
from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.cli.main import main
from agentic_eval.core.canonical import canonical_file_text
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.domains.registry import get_domain
from agentic_eval.evaluation.runner import run_case, run_tasks
from agentic_eval.evaluation.scenario import reject_and_retry, run_scenario
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.recordings import RecordingBackend, ReplayBackend, read_transcript
from agentic_eval.recordings.layout import agent_dir, parse_transcript_name, transcript_name
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalSample
from agentic_eval.workflow.lead_intel.agents import AGENTS
from agentic_eval.workflow.scenarios import get_scenario
from agentic_eval.workflow.service import Workflow

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"
SCENARIO = "synthesize.missing_revenue"
REASON = "the revenue figure was wrong last time"
SUITE = "lead_intelligence"


# --- file names ---------------------------------------------------------------------------

CASE_IDS = ["a", "chase-001", "synthesize.missing_revenue", "x.json", "A_b.c-9", "0" * 128]


@pytest.mark.parametrize("case_id", CASE_IDS)
@pytest.mark.parametrize("epoch", [0, 1, 9, 10, 123])
@pytest.mark.parametrize("attempt", [1, 2, 9, 10, 11])
def test_a_transcript_name_round_trips_its_key(case_id: str, epoch: int, attempt: int) -> None:
    CaseSpec(id=case_id, kind="k", instruction="i", inputs={}, expected={})  # a valid case id
    name = transcript_name(case_id, epoch, attempt)
    assert parse_transcript_name(name) == (case_id, epoch, attempt)


def test_names_leave_out_the_first_epoch_and_the_first_attempt() -> None:
    from agentic_eval.batch.plan import SampleKey
    from agentic_eval.recordings.layout import sample_name

    assert transcript_name("c") == transcript_name("c", 0, 1) == "c.json"
    assert transcript_name("c", 2) == "c@2.json"  # a domain epoch: the name it always had
    assert transcript_name("c", 0, 2) == "c#2.json"
    assert transcript_name("c.d", 3, 4) == "c.d@3#4.json"
    for epoch, attempt in [(0, 1), (2, 1), (0, 2), (3, 4)]:  # as the CLI shows a sample
        assert (
            sample_name("c.d", epoch, attempt)
            == SampleKey(case="c.d", epoch=epoch, attempt=attempt).name()
        )
    key = parse_transcript_name("c.d@3#4.json")
    assert key is not None and (key.case_id, key.sample, key.attempt) == ("c.d", 3, 4)


@pytest.mark.parametrize(
    "name",
    [
        "scorecard.json",
        ".c.json",
        ".c@1.json.tmp",
        "c.txt",
        "c@0.json",  # epoch 0 is written c.json: one key, one name
        "c@01.json",
        "c#1.json",  # attempt 1 is written c.json
        "c#0.json",
        "c#02.json",
        "c@abc.json",  # '@' followed by no digits
        "c@1x.json",
        "c@.json",
        "c#.json",
        "c#two.json",
        "@1.json",
        "#2.json",
        "c#2@1.json",  # the epoch comes first
        "c@1@2.json",
        "c#2#3.json",
        "c@-1.json",
        "c#2\n.json",
    ],
)
def test_other_names_are_not_transcripts(name: str) -> None:
    assert parse_transcript_name(name) is None


@pytest.mark.parametrize("bad", ["c@1", "c#2", "@", "#"])
def test_a_case_id_never_holds_the_markers(bad: str) -> None:
    with pytest.raises(ValueError, match="must be 1-128 letters"):
        CaseSpec(id=bad, kind="k", instruction="i", inputs={}, expected={})


def test_first_attempts_serialise_as_they_did_before_attempts_existed() -> None:
    """No committed transcript carries the field at its first value; the learner's round holds
    its attempt, and every file is its own canonical text."""
    files = sorted(p for p in RECORDINGS.glob("*/*/*.json") if p.name != "scorecard.json")
    assert len(files) > 100
    for path in files:
        t = read_transcript(path)
        text = path.read_text(encoding="utf-8")
        assert canonical_file_text(t) == text, path
        assert ('"attempt"' in text) == (t.attempt > 1), path
        assert path.name == transcript_name(t.case_id, t.sample, t.attempt), path
    learner = RECORDINGS / SUITE / "learner"
    round_two = read_transcript(learner / f"{SCENARIO}#2.json")
    assert (round_two.sample, round_two.attempt) == (0, 2)
    assert not (learner / f"{SCENARIO}@1.json").exists()


# --- scenarios: epochs and rejection rounds -----------------------------------------------


def _learner() -> ScriptedBackend:
    return ScriptedBackend("learner", AGENTS["learner"])


async def _record_two_epochs_and_a_round(wf: Workflow, rec: Path) -> list[Any]:
    s = get_scenario(SCENARIO)
    backend = RecordingBackend(_learner(), rec)
    settings = RunSettings("scripted:learner")
    first = await run_scenario(wf, s, backend, settings, sample=0)
    second = await run_scenario(wf, s, backend, settings, sample=1)
    retry = await reject_and_retry(
        wf, first, REASON, workflow=s.workflow, backend=backend, settings=settings,
        case_id=s.name, extra_checks=s.checks,
    )  # fmt: skip
    return [first, second, retry]


def _stored_keys(store: Store) -> list[tuple[str, int, int]]:
    with store.engine.begin() as conn:
        rows = conn.execute(select(EvalSample.case_id, EvalSample.sample, EvalSample.attempt))
        return sorted((str(c), int(s), int(a)) for c, s, a in rows)


def test_two_epochs_and_a_rejection_round_record_and_replay_as_three_samples(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    wf = Workflow(Store(f"sqlite:///{tmp_path / 'record.db'}"))
    first, second, retry = asyncio.run(_record_two_epochs_and_a_round(wf, rec))
    assert [r.outcome.kind for r in (first, second, retry)] == ["check_failed"] * 2 + ["passed"]
    assert [(r.case.result.sample, r.case.attempt) for r in (first, second, retry)] == [
        (0, 1),
        (1, 1),
        (0, 2),
    ]
    assert retry.job_id == first.job_id != second.job_id  # a round retries its own job
    folder = agent_dir(rec, SUITE, "learner")
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"{SCENARIO}#2.json", f"{SCENARIO}.json", f"{SCENARIO}@1.json"]
    for name, key in [(f"{SCENARIO}@1.json", (1, 1)), (f"{SCENARIO}#2.json", (0, 2))]:
        t = read_transcript(folder / name)
        assert (t.sample, t.attempt) == key
    # each attempt is a run of one sample; its row holds the epoch and the round apart
    assert _stored_keys(wf.store) == [(SCENARIO, 0, 1), (SCENARIO, 0, 2), (SCENARIO, 1, 1)]
    refs = {r.transcript_ref for r in _rows(wf.store)}
    assert refs == {str(folder / n) for n in names}

    assert main(["scenarios", "--recordings", str(rec), "--agent", "learner"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(f"| {SUITE} | {SCENARIO}")]
    labels = [line.split(" | ")[1] for line in rows]
    assert labels == [SCENARIO, f"{SCENARIO} (rejection round 1)", f"{SCENARIO}@1"]
    assert all(line.endswith("| reproduced |") for line in rows), out
    assert "3/3 scenario recordings reproduced" in out
    # the replay's own rows: three samples, the round in the attempt column
    replayed = Store()  # the isolated home's store, which `scenarios` wrote
    assert _stored_keys(replayed) == [(SCENARIO, 0, 1), (SCENARIO, 0, 2), (SCENARIO, 1, 1)]


def _rows(store: Store) -> list[Any]:
    with store.engine.begin() as conn:
        return list(conn.execute(select(EvalSample.transcript_ref)))


def test_a_file_holding_another_key_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "rec"
    shutil.copytree(RECORDINGS / SUITE / "learner", rec / SUITE / "learner")
    folder = rec / SUITE / "learner"
    (folder / f"{SCENARIO}#2.json").rename(folder / f"{SCENARIO}@1.json")  # holds attempt 2
    assert main(["scenarios", "--recordings", str(rec), "--agent", "learner"]) == 1
    row = next(line for line in capsys.readouterr().out.splitlines() if f"{SCENARIO}@1 |" in line)
    assert "NOT reproduced" in row
    backend = ReplayBackend(folder)
    asyncio.run(backend.start_case(SUITE, SCENARIO, 1))
    (problem,) = backend.broken.values()
    assert f"holds case '{SCENARIO}' sample 0 attempt 2, not '{SCENARIO}' sample 1" in problem


def test_a_round_recorded_under_its_old_name_says_how_to_rename_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before attempts had a field, ``<name>@1.json`` (sample 1) was a rejection round; now it
    is an epoch: its replay is loud and names the new file."""
    rec = tmp_path / "rec"
    shutil.copytree(RECORDINGS / SUITE / "learner", rec / SUITE / "learner")
    folder = rec / SUITE / "learner"
    data = json.loads((folder / f"{SCENARIO}#2.json").read_text(encoding="utf-8"))
    data["sample"] = 1
    del data["attempt"]
    (folder / f"{SCENARIO}#2.json").unlink()
    (folder / f"{SCENARIO}@1.json").write_text(canonical_file_text(data), encoding="utf-8")
    assert main(["scenarios", "--recordings", str(rec), "--agent", "learner"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if f"| {SCENARIO}@1 |" in line)
    assert "NOT reproduced" in row
    assert f"rename {SCENARIO}@1.json to {SCENARIO}#2.json" in row, row


# --- the runner: one (case, epoch, attempt) is one sample ---------------------------------


def _retail_specs() -> list[Any]:
    domain = get_domain("retail_ops")
    return domain.task_specs([c for c in domain.load_cases() if c.id == "chase-001"])


def test_a_case_epoch_attempt_clash_is_refused_before_anything_runs() -> None:
    domain = get_domain("retail_ops")
    calls: list[CallContext] = []

    class Counting(ScriptedBackend):
        async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
            calls.append(call)
            return await super().complete(request, call)

    backend = Counting("reference", domain.agents()["reference"])
    (spec,) = _retail_specs()
    with pytest.raises(ValueError, match=r"sample chase-001 of retail_ops is given twice"):
        asyncio.run(run_tasks([spec, spec], backend, RunSettings("scripted:reference")))
    assert calls == []
    retry = dataclasses.replace(spec, attempt=2)
    with pytest.raises(ValueError, match=r"sample chase-001#2 of retail_ops is given twice"):
        asyncio.run(run_tasks([spec, retry, retry], backend, RunSettings("scripted:reference")))
    assert calls == []
    done = asyncio.run(run_tasks([retry, spec], backend, RunSettings("scripted:reference")))
    assert [(c.result.case_id, c.result.sample, c.attempt) for c in done.cases] == [
        ("chase-001", 0, 1),
        ("chase-001", 0, 2),
    ]
    assert {(c.sample, c.attempt) for c in calls} == {(0, 1), (0, 2)}
    with pytest.raises(ValueError, match="attempt must be >= 1"):
        dataclasses.replace(spec, attempt=0)


def test_a_sample_row_holds_its_attempt() -> None:
    from agentic_eval.evaluation.persist import sample_row

    domain = get_domain("retail_ops")
    (spec,) = _retail_specs()
    backend = ScriptedBackend("reference", domain.agents()["reference"])
    run = asyncio.run(
        run_case(dataclasses.replace(spec, attempt=3), backend, RunSettings("scripted:reference"))
    )
    assert run.transcript is not None and run.transcript.attempt == 3
    row = sample_row(run, None)
    assert (row["case_id"], row["sample"], row["attempt"]) == ("chase-001", 0, 3)
    assert json.loads(row["transcript"])["attempt"] == 3


class OldSignatures(ModelBackend):
    """A third-party backend written before attempts existed."""

    def __init__(self, inner: ModelBackend) -> None:
        self.inner = inner
        self.started: list[tuple[str, int]] = []

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        return await self.inner.complete(request, call)

    def info(self) -> Any:
        return self.inner.info()

    async def start_case(self, domain: str, case_id: str, sample: int = 0) -> None:  # type: ignore[override]
        self.started.append((case_id, sample))

    def transcript_ref(self, domain: str, case_id: str, sample: int = 0) -> str | None:  # type: ignore[override]
        return f"{domain}/{case_id}/{sample}"


def test_a_backend_with_the_old_signatures_keeps_working(tmp_path: Path) -> None:
    from agentic_eval.backends.base import sample_transcript_ref

    domain = get_domain("retail_ops")
    (spec,) = _retail_specs()
    old = OldSignatures(ScriptedBackend("reference", domain.agents()["reference"]))
    recorder = RecordingBackend(old, tmp_path)
    settings = RunSettings("scripted:reference")
    for attempt in (1, 2):
        run = asyncio.run(run_case(dataclasses.replace(spec, attempt=attempt), recorder, settings))
        assert run.result.outcome.kind == "passed"
    assert old.started == [("chase-001", 0), ("chase-001", 0)]
    assert sample_transcript_ref(old, "retail_ops", "chase-001", 0, 2) == "retail_ops/chase-001/0"
    folder = agent_dir(tmp_path, "retail_ops", "reference")
    assert sorted(p.name for p in folder.iterdir()) == ["chase-001#2.json", "chase-001.json"]
    assert recorder.transcript_ref("retail_ops", "chase-001", 0, 2) == str(
        folder / "chase-001#2.json"
    )


# --- domains: old @N names are epochs and still replay ------------------------------------


def test_domain_epochs_keep_their_at_n_names_and_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--cases", "chase-00[12]", "--recordings", str(tmp_path), "--no-history"]
    recorded = ["--backend", "scripted", "--agent", "reference", "--samples", "2", "--record"]
    assert main(["run", "retail_ops", *common, *recorded]) == 0, capsys.readouterr()
    folder = agent_dir(tmp_path, "retail_ops", "reference")
    names = sorted(p.name for p in folder.glob("chase-*.json"))
    assert names == ["chase-001.json", "chase-001@1.json", "chase-002.json", "chase-002@1.json"]
    for name in names:
        text = (folder / name).read_text(encoding="utf-8")
        assert '"attempt"' not in text  # the bytes such files had before attempts existed
    replay = ReplayBackend(folder)
    keys = [("chase-001", 0), ("chase-001", 1), ("chase-002", 0), ("chase-002", 1)]
    assert sorted(replay.paths) == keys
    assert sorted(replay.files) == [(c, s, 1) for c, s in keys]
    capsys.readouterr()
    assert main(["run", "retail_ops", *common]) == 0, capsys.readouterr()
