"""A sample row keeps its transcript without the request template (the tool list and system
prompt, the same for every sample of a suite and most of a scripted transcript's bytes), which
the store keeps once; every read of a row gives the transcript back whole, byte for byte."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import select

from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.backends.spec import BackendSpec
from agentic_eval.batch import RunPlan, SampleKey, run_agent_batch
from agentic_eval.batch import processes as batch_processes
from agentic_eval.core.aio import run
from agentic_eval.core.settings import RunParameters
from agentic_eval.domains import get_domain
from agentic_eval.evaluation.runner import run_tasks
from agentic_eval.store import Store
from agentic_eval.store.models import EvalSample, RequestTemplateRow

MIGRATIONS = Path(__file__).resolve().parent.parent / "src/agentic_eval/store/migrations"


def _plan() -> RunPlan:
    cases = [c.id for c in get_domain("retail_ops").load_cases()][::3]
    return RunPlan(
        suite="retail_ops",
        keys=tuple(SampleKey(case=c, epoch=e) for c in cases for e in range(2)),
        backend=BackendSpec(kind="scripted", agent="reference"),
        model="scripted:reference",
        parameters=RunParameters(),
    )


def _unstored(plan: RunPlan) -> dict[tuple[str, int], str]:
    """The same samples' transcripts as the loop makes them, never stored."""
    domain = get_domain("retail_ops")
    cases = [c for c in domain.load_cases() if any(k.case == c.id for k in plan.keys)]
    specs = domain.task_specs(cases, plan.limits(), 2)
    backend = ScriptedBackend("reference", domain.agents()["reference"])
    made: dict[tuple[str, int], str] = {}

    def keep(r: object) -> None:
        text = r.transcript_text()  # type: ignore[attr-defined]
        made[(r.result.case_id, r.result.sample)] = text  # type: ignore[attr-defined]

    run(run_tasks(specs, backend, plan.settings(), on_case=keep))
    return made


def _raw(store: Store, run_id: str) -> list[tuple[str, str | None, int | None]]:
    cols = (EvalSample.transcript, EvalSample.request_template, EvalSample.request_at)
    with store.engine.connect() as conn:
        stmt = select(*cols).where(EvalSample.run_id == run_id).order_by(EvalSample.id)
        return [tuple(r) for r in conn.execute(stmt)]  # type: ignore[misc]


@pytest.mark.parametrize(("processes", "start"), [(1, ""), (2, "fork"), (2, "spawn")])
@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_stored_transcripts_read_back_whole_with_their_template_kept_once(
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    database: str,
    processes: int,
    start: str,
) -> None:
    # forked children or fresh interpreters (xdist's worker runs a thread: it would not fork)
    monkeypatch.setattr(batch_processes, "fork_safe", lambda: start == "fork")
    url = (
        f"sqlite:///{tmp_path / 'store.db'}"
        if database == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    store = Store(url)
    plan = _plan()
    s = run(run_agent_batch(store, plan, processes=processes))
    assert s.samples == len(plan.keys) and s.gate.verdict == "PASS"
    expected = _unstored(plan)
    rows = store.samples(s.run_id)
    assert {(r.case_id, r.sample): r.transcript for r in rows} == expected  # byte for byte
    assert all(r.request_template is None and r.request_at is None for r in rows)
    assert store.sample(rows[-1].id).transcript == rows[-1].transcript  # type: ignore[union-attr]
    with store.engine.connect() as conn:
        stmt = select(RequestTemplateRow.sha256, RequestTemplateRow.template)
        kept: dict[str, str] = {sha: template for sha, template in conn.execute(stmt)}
    raw = _raw(store, s.run_id)
    whole = sorted(expected.values())
    put_back = []
    for text, sha, at in raw:
        assert sha is not None and at is not None
        template = kept[sha]
        assert hashlib.sha256(template.encode()).hexdigest() == sha
        assert text[at - len('"request":') : at] == '"request":'
        with pytest.raises(json.JSONDecodeError):  # no reader can take it for a transcript
            json.loads(text)
        put_back.append(text[:at] + template + text[at:])
    assert sorted(put_back) == whole
    assert len({sha for _, sha, _ in raw}) <= len(kept) < len(raw)  # one per set of tools
    stored = sum(len(text) for text, _, _ in raw) + sum(map(len, kept.values()))
    assert stored < 0.7 * sum(map(len, whole))
    store.close()


def test_the_downgrade_puts_every_transcript_back_whole(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store(url)
    s = run(run_agent_batch(store, _plan()))
    whole = {r.id: r.transcript for r in store.samples(s.run_id)}
    with store.engine.begin() as conn:
        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0011")
    with store.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT id, transcript FROM eval_sample").all()
    assert {i: text for i, text in rows} == whole
    store.close()


def test_postgresql_compresses_transcripts_with_lz4_where_it_can(pg_url: str) -> None:
    store = Store(pg_url)
    store.migrate()
    with store.engine.connect() as conn:
        version = conn.dialect.server_version_info or (0,)
        method = conn.exec_driver_sql(
            "SELECT attcompression FROM pg_attribute "
            "WHERE attrelid = 'eval_sample'::regclass AND attname = 'transcript'"
        ).scalar()
    store.close()
    if int(version[0]) < 14:
        pytest.skip("PostgreSQL before 14 compresses with pglz only")
    assert method == "l"  # lz4 (the Debian and upstream builds have it)
