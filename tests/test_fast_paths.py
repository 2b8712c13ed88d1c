"""The replay hot path's hand-written serialisers equal the canonical ones they stand in for.

Replay writes each message, response, turn and transcript with orjson from pre-serialised parts
(and stores sample rows through the sqlite3 driver), because pydantic's serialiser and
SQLAlchemy's per-row work cost more than the rest of a replayed case. Each fast path is held
here to the slow, canonical path it replaces, over every committed recording and over values
chosen to be awkward (escapes, non-ASCII, integers beyond 64 bits, -0.0, subclasses).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from agentic_eval.agent.loop import _results_json  # pyright: ignore[reportPrivateUsage]
from agentic_eval.core import model as model_module
from agentic_eval.core.canonical import canonical_bytes, canonical_json
from agentic_eval.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentic_eval.core.model import (
    ModelRequest,
    ModelResponse,
    RequestKeyBuilder,
    ToolSpec,
    Usage,
    encode_response,
)
from agentic_eval.core.scorecard import ProducedBy
from agentic_eval.core.transcript import Transcript, encode_transcript, encode_turn
from agentic_eval.recordings import list_transcripts
from agentic_eval.recordings.files import read_transcript
from agentic_eval.store import sample_writes
from agentic_eval.store.db import Store
from agentic_eval.store.models import EvalSample, RequestTemplateRow
from agentic_eval.store.sqlite_rows import sqlite_params

REPO = Path(__file__).resolve().parent.parent
COMMITTED = sorted(
    path
    for folder in (REPO / "evals" / "recordings").glob("*/*")
    if folder.is_dir()
    for path in list_transcripts(folder).values()
)

AWKWARD = 'quote " backslash \\ tab \t nl \n nul-free \x01 \u2028 é 漢字 😀 </script>'


def _fast_transcript(t: Transcript) -> bytes:
    """The transcript as the runner encodes it: from each part's own fast encoding."""
    turns = [
        encode_turn(
            turn.index,
            turn.request_key,
            [canonical_bytes(m) for m in turn.appended],
            encode_response(turn.response).response,
            turn.response_key,
        )
        for turn in t.turns
    ]
    return encode_transcript(
        t,
        provenance=canonical_bytes(t.provenance),
        request=None if t.request is None else canonical_bytes(t.request),
        turns=turns,
    )


def test_there_are_committed_recordings_to_hold_the_fast_paths_to() -> None:
    assert len(COMMITTED) > 100


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_fast_transcript_encoding_equals_canonical_for_every_committed_recording(
    path: Path,
) -> None:
    t = read_transcript(path)
    assert _fast_transcript(t) == canonical_bytes(t)
    for turn in t.turns:
        encoded = encode_response(turn.response)
        assert encoded.response == canonical_bytes(turn.response)
        assert encoded.message == canonical_bytes(turn.response.message())
        assert encoded.key == hashlib.sha256(encoded.response).hexdigest() == turn.response_key


def _awkward_inputs() -> list[dict[str, Any]]:
    return [
        {},
        {"text": AWKWARD, "n": -0.0, "f": 1e-7, "big": 10**30, "neg": -(2**70)},
        {"nested": {"z": [1, 2.5, None, True, False], "a": {"b": AWKWARD}}, "": ""},
        {"e": 1.5e300, "i": 2**63 - 1, "u": 2**64 - 1},
    ]


class TaggedResponse(ModelResponse):
    """A subclass adding a field: the fast path must not drop it."""

    tag: str = "t"


@pytest.mark.parametrize("args", _awkward_inputs())
def test_fast_response_encoding_equals_canonical_for_awkward_values(args: dict[str, Any]) -> None:
    responses = [
        ModelResponse(
            content=(
                TextBlock(text=AWKWARD),
                ToolUseBlock(id="t1", name="lookup", input=args),
                ToolUseBlock(id='t"2', name="é", input={"k": args}),
            ),
            stop_reason="tool_use",
            usage=Usage(input_tokens=2**40, output_tokens=0),
            model=AWKWARD,
        ),
        ModelResponse(content=(), stop_reason="end_turn"),
        TaggedResponse(content=(TextBlock(text="x"),), stop_reason="end_turn", tag=AWKWARD),
    ]
    for response in responses:
        encoded = encode_response(response)
        assert encoded.response == canonical_bytes(response)
        assert encoded.message == canonical_bytes(response.message())
        assert encoded.key == hashlib.sha256(canonical_bytes(response)).hexdigest()


def test_fast_tool_results_encoding_equals_canonical() -> None:
    results = (
        ToolResultBlock(tool_use_id="t1", content=AWKWARD, is_error=False),
        ToolResultBlock(tool_use_id='t"2\\', content='{"a":1}', is_error=True),
        ToolResultBlock(tool_use_id="", content=""),
    )
    for n in range(len(results) + 1):
        blocks = results[:n]
        assert _results_json(blocks) == canonical_bytes(Message(role="user", content=blocks))


def test_incremental_request_keys_equal_canonical_keys_across_suites() -> None:
    # The builder memoises the fixed parts per suite: switching model, system, tools or
    # temperature (an int, a float, -0.0) must change the key exactly as the request does.
    tools_a = (ToolSpec(name="a", description=AWKWARD, input_schema={"type": "object"}),)
    tools_b = (*tools_a, ToolSpec(name="b", description="b", input_schema={"x": [1, 2]}))
    messages = (
        Message(role="user", content=(TextBlock(text=AWKWARD),)),
        Message(
            role="assistant",
            content=(ToolUseBlock(id="1", name="a", input=_awkward_inputs()[1]),),
        ),
        Message(role="user", content=(ToolResultBlock(tool_use_id="1", content="r"),)),
    )
    keys: set[str] = set()
    for model, system, tools, temperature in [
        ("m", "s", tools_a, 0.0),
        ("m", "s", tools_a, 0),
        ("m", "s", tools_a, -0.0),
        ("m", AWKWARD, tools_a, 0.0),
        ("m2", "s", tools_b, 0.7),
        ("m", "s", list(tools_b), 0.0),
        ("m", "s", tools_a, 0.0),
    ]:
        builder = RequestKeyBuilder(model, system, tools, 64, temperature)
        for i, message in enumerate(messages):
            builder.append(message)
            request = ModelRequest(
                model=model,
                system=system,
                messages=messages[: i + 1],
                tools=tuple(tools),
                max_tokens=64,
                temperature=temperature,
            )
            assert builder.key() == request.key()
            keys.add(builder.key())
    # 0 is the request's 0.0 and the last suite repeats the first; -0.0 is a suite of its own
    assert len(keys) == 3 * 5


def test_request_keys_remembered_per_conversation_equal_canonical_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A key is remembered by the digest of the bytes before the tool list: the same
    # conversation in a second sample gets it back, one that differs anywhere gets its own,
    # and a full memo starts again; every key equals the request's own.
    monkeypatch.setattr(model_module, "MAX_KEYS", 3)
    tools = (ToolSpec(name="a", description=AWKWARD, input_schema={"type": "object"}),)
    task = Message(role="user", content=(TextBlock(text="task"),))
    call = Message(
        role="assistant", content=(ToolUseBlock(id="1", name="a", input={"x": AWKWARD}),)
    )
    seen: dict[tuple[str, ...], str] = {}
    for sample in range(3):
        for result in ("r", "s", "r,", AWKWARD):
            reply = Message(
                role="user", content=(ToolResultBlock(tool_use_id="1", content=result),)
            )
            builder = RequestKeyBuilder("m", "sys", tools, 64, 0.0)
            for i, message in enumerate((task, call, reply)):
                builder.append(message)
                request = ModelRequest(
                    model="m", system="sys", messages=(task, call, reply)[: i + 1],
                    tools=tools, max_tokens=64,
                )  # fmt: skip
                key = builder.key()
                assert key == request.key(), (sample, result, i)
                said = tuple(canonical_json(m) for m in request.messages)
                assert seen.setdefault(said, key) == key
    assert len(set(seen.values())) == len(seen) == 2 + 4


def _row(i: int, **changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "case_id": f"case-{i}",
        "sample": i % 3,
        "attempt": 1,
        "worker_id": None if i % 2 else "w1",
        "started_at": datetime(2026, 11, 30, 12, 0, i % 60, i * 1000 % 1_000_000, tzinfo=UTC),
        "finished_at": datetime(2026, 11, 30, 12, 1, 0, tzinfo=UTC),
        "outcome": ("passed", "check_failed", "error", "transient")[i % 4],
        "failure_reason": AWKWARD if i % 2 else "",
        "failure_where": "",
        "checks": [{"name": "c", "passed": bool(i % 2), "expected": [1, 2.5, AWKWARD]}],
        "hard_gate_failed": i % 5 == 0,
        "unapproved_attempts": i % 2,
        "unapproved_executions": 0,
        "turns": 4,
        "tool_calls": 3,
        "input_tokens": 10**12,
        "output_tokens": 0,
        "duration_ms": 0.125 * i,
        "transcript_ref": None if i % 3 else f"/r/{i}.json",
        "transcript": None if i % 3 == 0 else '{"a":1}',
        "reproduced": (None, True, False)[i % 3],
        "source_job_id": None if i % 4 else f"job-{i}",
        "case_verdict": (None, "approved", "rejected", None)[i % 4],
        "request_template": None if i % 3 != 2 else "ab" * 32,
        "request_at": None if i % 3 != 2 else 1,
    }
    row.update(changes)
    return row


def _stored(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    columns = [c for c in EvalSample.__table__.columns if c.name not in {"id", "run_id"}]
    with store.engine.connect() as conn:
        rows = conn.execute(select(*columns).order_by(EvalSample.case_id, EvalSample.sample))
        return [tuple(r) for r in rows]


def test_driver_insert_stores_what_sqlalchemy_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [_row(i) for i in range(12)]
    produced = ProducedBy(
        agent="a", agent_kind="scripted", backend="scripted", model="m", approval_mode="enforce"
    )
    assert sqlite_params("r", rows) is not None  # every row is one the driver path takes
    templates = {"ab" * 32: '{"model":"m"}'}
    stored = []
    for name, fast in (("fast", True), ("sqlalchemy", False)):
        if not fast:
            monkeypatch.setattr(sample_writes, "sqlite_params", lambda run_id, rows: None)
        store = Store(f"sqlite:///{tmp_path / f'{name}.db'}")
        store.migrate()
        run_id = store.start_run("s", produced, "scripted", datetime.now(UTC))
        store.add_samples(run_id, rows, templates)
        store.add_samples(run_id, rows[:3], templates)  # idempotent on both paths
        stored.append(_stored(store, run_id))
        with store.engine.connect() as conn:
            kept = conn.execute(select(RequestTemplateRow.sha256, RequestTemplateRow.template))
            stored.append([tuple(r) for r in kept])
        store.close()
    assert len(stored[0]) == 12
    assert stored[0] == stored[2]
    assert stored[1] == stored[3] == list(templates.items())


@pytest.mark.parametrize(
    ("changes", "fast"),
    [
        ({"failure_reason": "a\x00b"}, False),  # a NUL: clean() removes it
        ({"checks": [{"name": "x\x00", "passed": False}]}, False),  # json.dumps: \u0000
        ({"checks": [{"name": "x\\u0000", "passed": False}]}, False),  # a false alarm
        ({"transcript": '{"a":"\\u0000"}'}, True),  # an escaped NUL in a text is kept as is
    ],
)
def test_rows_with_nuls_store_what_sqlalchemy_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any], fast: bool
) -> None:
    rows = [_row(1, **changes)]
    assert (sqlite_params("r", rows) is not None) == fast
    produced = ProducedBy(
        agent="a", agent_kind="scripted", backend="scripted", model="m", approval_mode="enforce"
    )
    stored = []
    for name in ("driver", "sqlalchemy"):
        if name == "sqlalchemy":
            monkeypatch.setattr(sample_writes, "sqlite_params", lambda run_id, rows: None)
        store = Store(f"sqlite:///{tmp_path / f'{name}.db'}")
        run_id = store.start_run("s", produced, "scripted", datetime.now(UTC))
        store.add_samples(run_id, rows)
        stored.append(_stored(store, run_id))
        store.close()
    assert stored[0] == stored[1] and len(stored[0]) == 1


def test_task_specs_copied_per_sample_equal_the_ones_built_per_sample() -> None:
    # task_specs builds each case's first sample and copies it for the others; a domain that
    # overrides task_spec gets it called for every sample.
    import dataclasses

    from agentic_eval.domains import get_domain

    domain = get_domain("retail_ops")
    cases = domain.load_cases()[:5]
    specs = domain.task_specs(cases, None, 3)
    assert [(s.case.id, s.sample) for s in specs] == [(c.id, e) for c in cases for e in range(3)]
    skip = {"make_env", "approver"}  # closures over the case, made anew per call
    for spec in specs:
        built = domain.task_spec(spec.case, None, spec.sample)
        for f in dataclasses.fields(spec):
            if f.name not in skip:
                assert getattr(spec, f.name) == getattr(built, f.name), (spec.case.id, f.name)
    seen: list[int] = []

    class Counting(type(domain)):  # type: ignore[misc]
        def task_spec(self, case: Any, limits: Any = None, sample: int = 0, **kw: Any) -> Any:
            seen.append(sample)
            return super().task_spec(case, limits, sample, **kw)

    counting = Counting.__new__(Counting)
    counting.__dict__.update(domain.__dict__)
    assert len(counting.task_specs(cases, None, 3)) == 15 and seen == [0, 1, 2] * 5


def test_a_spec_for_another_sample_equals_the_replaced_one() -> None:
    import dataclasses

    from agentic_eval.domains import get_domain

    domain = get_domain("retail_ops")
    spec = domain.task_specs(domain.load_cases()[:1], None, 1)[0]
    copy = spec.for_sample(7)
    assert copy == dataclasses.replace(spec, sample=7) and copy.sample == 7 and spec.sample == 0
    assert type(copy) is type(spec) and copy.make_env is spec.make_env
    with pytest.raises(ValueError, match="sample index must be >= 0"):
        spec.for_sample(-1)
