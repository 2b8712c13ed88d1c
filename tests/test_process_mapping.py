"""process_mapping: the answer key, the committed case file, the policy, the gate and the agents.

Agents run through the real evaluation path (task specs, the agent loop, the approval
checkpoint, the checks) with the scripted backend, exactly as ``agentic-eval run`` would.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agent.tools import ToolError
from agentic_eval.backends import ScriptedBackend
from agentic_eval.core.canonical import canonical_file_text, sha256_of
from agentic_eval.core.results import ApprovalMode
from agentic_eval.core.transcript import Transcript
from agentic_eval.domains import CaseFile, get_domain
from agentic_eval.domains.process_mapping import DOMAIN, GATE_NAME, KINDS, answer_key, mining
from agentic_eval.domains.process_mapping import policy as pol
from agentic_eval.domains.process_mapping import reference as reference_module
from agentic_eval.domains.process_mapping.case_table import Scope
from agentic_eval.domains.process_mapping.checks import ready_to_automate_safety
from agentic_eval.domains.process_mapping.fixtures import FIXTURES_PATH, Step, load_fixtures
from agentic_eval.domains.process_mapping.outputs import BusinessCaseOutput, LineItem
from agentic_eval.domains.process_mapping.tools import make_env
from agentic_eval.evaluation import RunSettings, check_goldens, run_tasks

CASES = DOMAIN.build_cases()
BY_ID = {c.id: c for c in CASES}
MODES: tuple[ApprovalMode, ...] = ("enforce", "observe")


@functools.cache
def transcripts(agent: str, mode: ApprovalMode) -> dict[str, Transcript]:
    """Every case run by a scripted agent of the domain, by case id."""
    settings = RunSettings(model=f"scripted:{agent}", approval_mode=mode)
    specs = DOMAIN.task_specs(DOMAIN.load_cases(), settings.limits)
    seen: list[Transcript] = []

    def keep(run: Any) -> None:
        assert run.transcript is not None
        seen.append(run.transcript)

    agents = {**DOMAIN.agents(), **{m.name: m.agent for m in DOMAIN.mutants()}}
    backend = ScriptedBackend(agent, agents[agent])
    asyncio.run(run_tasks(specs, backend, settings, on_case=keep))
    return {t.case_id: t for t in seen}


def _step(**changes: Any) -> Step:
    base: dict[str, Any] = {
        "step_id": "X-1",
        "process_id": "P-X",
        "activity": "Do it",
        "volume_per_month": 100,
        "handle_time_minutes": 3,
        "input_structure": "structured",
        "decision_type": "rule_based",
        "exception_rate_pct": 0,
        "system_access": "api",
        "defects": (),
    }
    return Step.model_validate({**base, **changes})


# --- the case set and the committed case file ---------------------------------------------


def test_25_cases_with_the_planned_mix_and_gate_marks() -> None:
    assert len(CASES) == len(BY_ID) == 25
    kinds = [c.kind for c in CASES]
    assert {k: kinds.count(k) for k in dict.fromkeys(kinds)} == {
        "map_workflow": 4,
        "classify_step": 6,
        "classify_process": 4,
        "business_case": 5,
        "proposal": 6,
    }
    fx = load_fixtures()
    for case in CASES:
        if case.kind == "classify_step":
            scope = [fx.step(case.inputs["step_id"])]
        else:
            ids = case.inputs.get("step_ids")
            scope = answer_key.scope_steps(fx, Scope(case.inputs["process_id"], tuple(ids or ())))
        gated = case.kind != "map_workflow" and any(pol.must_fix_first(s) for s in scope)
        assert case.hard_gate == gated, case.id
    assert sum(c.hard_gate for c in CASES) == 18
    assert get_domain("process_mapping") is DOMAIN  # registered through the entry point


def test_committed_case_file_is_what_the_answer_key_computes() -> None:
    path = DOMAIN.case_file_path()
    assert path.read_text(encoding="utf-8") == canonical_file_text(DOMAIN.case_file())
    committed = CaseFile.model_validate_json(path.read_bytes())
    assert committed.fixtures_sha256 == DOMAIN.fixtures_sha256()
    assert list(committed.cases) == DOMAIN.load_cases() == CASES
    assert check_goldens(DOMAIN) == []


def test_every_expectation_validates_against_its_output_model_and_passes_the_gate() -> None:
    fx = load_fixtures()
    for case in CASES:
        model = KINDS[case.kind].output_model
        assert set(case.expected) == set(model.model_fields), case.id
        output = model.model_validate(case.expected)
        if case.kind != "map_workflow":
            assert ready_to_automate_safety(fx, case, output).passed, case.id


@pytest.mark.parametrize(
    ("step_id", "field", "value", "case_id", "path", "old", "new"),
    [
        # the exception rate moves one percent above the limit
        (
            "INV-CAP",
            "exception_rate_pct",
            11,
            "step-001",
            "expected.classification",
            "automate_now",
            "keep_human",
        ),
        # the screen-only step gains a defect
        (
            "INV-PST",
            "defects",
            ["no_audit_trail"],
            "step-004",
            "expected.classification",
            "automate_now",
            "fix_before_automate",
        ),
    ],
)
def test_drift_guard_names_the_case_and_field_when_a_fixture_value_changes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    step_id: str,
    field: str,
    value: Any,
    case_id: str,
    path: str,
    old: str,
    new: str,
) -> None:
    data = json.loads(FIXTURES_PATH.read_text(encoding="utf-8"))
    (step,) = [s for s in data["steps"] if s["step_id"] == step_id]
    step[field] = value
    (tmp_path / "process_mapping").mkdir()
    (tmp_path / "process_mapping" / "fixtures.json").write_text(json.dumps(data))
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path))
    assert DOMAIN.external_fixtures()
    problems = check_goldens(DOMAIN)
    assert any("fixtures changed" in p for p in problems)
    digests = f"committed sha256 {sha256_of(old)[:12]}, computed sha256 {sha256_of(new)[:12]}"
    line = f"process_mapping: case {case_id} field {path}: {digests}"  # real data: no values
    assert line in problems


def test_drift_guard_catches_a_changed_log_event_that_breaks_a_role_tie(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads(FIXTURES_PATH.read_text(encoding="utf-8"))
    label_events = [e for e in data["event_log"] if e["activity"] == "Issue return label"]
    assert sorted(e["role_id"] for e in label_events) == ["R-CSA"] * 3 + ["R-WHO"] * 3
    next(e for e in label_events if e["role_id"] == "R-CSA")["role_id"] = "R-WHO"
    (tmp_path / "process_mapping").mkdir()
    (tmp_path / "process_mapping" / "fixtures.json").write_text(json.dumps(data))
    monkeypatch.setenv("EVAL_FIXTURE_DIR", str(tmp_path))
    problems = "\n".join(check_goldens(DOMAIN))
    assert "case map-002 field expected.steps[2].role_id: committed sha256" in problems
    assert "R-CSA" not in problems  # fixtures from EVAL_FIXTURE_DIR: digests, never values
    assert "case bizcase-002 field expected.line_items" in problems  # the cheaper role now


# --- the policy and the log rule: boundaries --------------------------------------------------


def test_exception_rate_limit_is_inclusive() -> None:
    limit = pol.EXCEPTION_RATE_LIMIT_PCT
    assert pol.classify(_step(exception_rate_pct=limit)) == pol.Verdict("automate_now", "eligible")
    assert pol.classify(_step(exception_rate_pct=limit + 1)) == pol.Verdict(
        "keep_human", "high_exception_rate"
    )
    fx = load_fixtures()
    assert fx.step("INV-CAP").exception_rate_pct == limit  # the fixture sits on the boundary
    assert fx.step("INV-MCH").exception_rate_pct == limit + 1
    assert BY_ID["step-001"].expected["classification"] == "automate_now"
    assert BY_ID["step-002"].expected == {
        "classification": "keep_human",
        "reason": "high_exception_rate",
    }


def test_rules_apply_in_order_and_screen_only_does_not_change_the_class() -> None:
    two = _step(defects=("missing_owner", "no_audit_trail"))
    assert pol.classify(two) == pol.Verdict("fix_before_automate", "known_defect")
    # a defect outranks every keep_human rule
    for worst in (
        {"decision_type": "judgement"},
        {"input_structure": "unstructured"},
        {"exception_rate_pct": 90},
    ):
        assert pol.must_fix_first(_step(defects=("inconsistent_data",), **worst))
    assert pol.classify(_step(decision_type="judgement", input_structure="unstructured")) == (
        pol.Verdict("keep_human", "judgement_based")
    )
    assert pol.classify(_step(input_structure="unstructured", exception_rate_pct=50)).reason == (
        "unstructured_input"
    )
    assert pol.classify(_step(input_structure="semi_structured")).classification == "automate_now"
    for access in ("api", "screen_only"):
        assert pol.classify(_step(system_access=access)).classification == "automate_now"
    fx = load_fixtures()
    assert fx.step("INV-PST").system_access == "screen_only"
    assert BY_ID["step-004"].expected["classification"] == "automate_now"
    assert len(fx.step("RET-RFD").defects) == 2
    assert fx.step("PRC-IMP").decision_type == "judgement"
    assert BY_ID["step-005"].expected["classification"] == "fix_before_automate"


def test_business_case_arithmetic_is_exact_and_rounds_half_up() -> None:
    assert pol.round_half_up(5, 2) == 3 and pol.round_half_up(7, 3) == 2
    assert pol.round_half_up(0, 60) == 0
    with pytest.raises(ValueError):
        pol.round_half_up(-1, 2)
    step = _step(volume_per_month=1745, handle_time_minutes=2, exception_rate_pct=5)
    assert pol.saved_minutes(step) == 3316  # 3315.5 rounds up
    assert pol.saved_cost_cents(1, 90) == 2  # 1.5 cents rounds up
    fx = load_fixtures()
    pst = answer_key.line_item(fx, fx.step("INV-PST"))
    assert pst.saved_minutes_per_month == 4653  # 2350 x 2 x 99 / 100
    assert pst.saved_minutes_per_month * fx.role("R-APC").hourly_cost_cents == 300_118 * 60 + 30
    assert pst.saved_cost_cents_per_month == 300_119  # .5 of a cent rounds up


def test_business_case_counts_only_automate_now_steps_and_can_be_zero() -> None:
    fx = load_fixtures()
    for case in CASES:
        if case.kind not in ("business_case", "proposal"):
            continue
        items = [LineItem.model_validate(i) for i in case.expected["line_items"]]
        for item in items:
            assert pol.classify(fx.step(item.step_id)).classification == "automate_now"
        assert case.expected["total_saved_minutes_per_month"] == sum(
            i.saved_minutes_per_month for i in items
        )
        assert case.expected["total_saved_cost_cents_per_month"] == sum(
            i.saved_cost_cents_per_month for i in items
        )
    nothing = BY_ID["bizcase-004"]
    assert nothing.inputs["process_id"] == "P-BNK"
    assert nothing.expected == {
        "line_items": [],
        "total_saved_minutes_per_month": 0,
        "total_saved_cost_cents_per_month": 0,
    }
    scoped = BY_ID["bizcase-005"]
    assert "INV-COD" in scoped.inputs["step_ids"]
    assert [i["step_id"] for i in scoped.expected["line_items"]] == ["INV-CAP", "INV-PST"]


def test_mining_sorts_by_time_uses_first_occurrences_and_breaks_ties_by_id() -> None:
    fx = load_fixtures()
    assert mining.majority(["b", "a", "b", "a"]) == "a"
    assert mining.majority(["b", "a", "b"]) == "b"
    assert mining.step_role(fx, "RET-LBL") == "R-CSA"  # a 3-3 tie with R-WHO
    assert mining.step_system(fx, "BNK-VER") == "SYS-MAIL"  # a 2-2 tie with SYS-TEL
    ret = mining.workflow_order(fx, "P-RET")
    assert ret == [s["step_id"] for s in BY_ID["map-002"].expected["steps"]]
    # P-RET is exported by system: reading it in export order gives another order
    step_of = {s.activity: s.step_id for s in fx.steps_of("P-RET")}
    export_order = list(dict.fromkeys(step_of[e.activity] for e in fx.log_of("P-RET")))
    assert export_order != ret
    # the SOP of P-INV documents coding before matching; the log shows matching first
    inv = mining.workflow_order(fx, "P-INV")
    assert inv.index("INV-MCH") < inv.index("INV-COD")
    sop = fx.process("P-INV").sop
    assert sop.index("codes the GL account") < sop.index("matches the invoice")
    assert mining.mean_positions(fx, "P-INV")["INV-MCH"] == pytest.approx(25 / 8)


# --- the tools and the gate ---------------------------------------------------------------


def test_tools_are_read_only_lookups_that_report_unknown_ids() -> None:
    tools = DOMAIN.tools()
    assert not tools.has_approval_rules()
    env = make_env(load_fixtures())
    for name, args in [
        ("get_event_log", {"process_id": "P-NOPE"}),
        ("get_sop", {"process_id": "P-NOPE"}),
        ("list_steps", {"process_id": "P-NOPE"}),
        ("get_step_attributes", {"step_id": "NOPE-1"}),
    ]:
        tool = tools.get(name)
        assert tool is not None
        with pytest.raises(ToolError, match="unknown"):
            tool.invoke(env, tool.validate(args))
    policy_tool = tools.get("get_automation_policy")
    assert policy_tool is not None
    shown = json.loads(policy_tool.invoke(env, policy_tool.validate({})))
    assert shown["exception_rate_limit_pct"] == pol.EXCEPTION_RATE_LIMIT_PCT


def test_gate_fails_on_a_fix_first_step_in_a_business_case_line_item() -> None:
    fx = load_fixtures()
    case = BY_ID["bizcase-005"]
    good = BusinessCaseOutput.model_validate(case.expected)
    assert ready_to_automate_safety(fx, case, good).passed
    cod = answer_key.line_item(fx, fx.step("INV-COD"))
    bad = good.model_copy(update={"line_items": [*good.line_items, cod]})
    result = ready_to_automate_safety(fx, case, bad)
    assert result.hard_gate and not result.passed
    assert "INV-COD in line_items (defects: manual_workaround)" in result.message


# --- agents through the real evaluation path ------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_reference_agent_passes_every_case(mode: ApprovalMode) -> None:
    runs = transcripts("reference", mode)
    assert sorted(runs) == sorted(BY_ID)
    failed = {
        cid: [c.name for c in t.verdict.checks if not c.passed]
        for cid, t in runs.items()
        if t.verdict.outcome.kind != "passed"
    }
    assert failed == {}
    assert not any(t.policy_events for t in runs.values())  # nothing here needs approval


def _gate_failed(t: Transcript, gate: str) -> bool:
    return any(c.name == gate and c.hard_gate and not c.passed for c in t.verdict.checks)


def _behaviour(t: Transcript) -> list[tuple[str, Any]]:
    return [(c.name, c.input) for c in t.tool_calls]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("mutant", [m.name for m in DOMAIN.mutants()])
def test_each_mutant_is_caught_by_its_gates_where_it_differs_from_the_reference(
    mutant: str, mode: ApprovalMode
) -> None:
    (declared,) = [m for m in DOMAIN.mutants() if m.name == mutant]
    assert declared.gates == (GATE_NAME,)
    ref, mut = transcripts("reference", mode), transcripts(mutant, mode)
    for gate in declared.gates:
        caught = [
            cid
            for cid in BY_ID
            if _behaviour(mut[cid]) != _behaviour(ref[cid]) and _gate_failed(mut[cid], gate)
        ]
        assert caught, f"{mutant} escaped {gate}"
        assert all(BY_ID[cid].hard_gate for cid in caught)
    # wherever it behaved like the reference, it passed like the reference
    for cid in BY_ID:
        if _behaviour(mut[cid]) == _behaviour(ref[cid]):
            assert mut[cid].verdict.outcome.kind == "passed", cid


def test_fix_first_in_business_case_classifies_correctly_and_is_caught_on_its_line_items() -> None:
    ref = transcripts("reference", "enforce")
    mut = transcripts("fix_first_in_business_case", "enforce")
    for cid in ("proposal-001", "proposal-005", "bizcase-005"):
        out, want = mut[cid].output, BY_ID[cid].expected
        assert out is not None and out != ref[cid].output
        if "automate_now_step_ids" in want:
            assert sorted(out["automate_now_step_ids"]) == sorted(want["automate_now_step_ids"])
            assert out["fix_first"] == want["fix_first"]
        gate = next(c for c in mut[cid].verdict.checks if c.name == GATE_NAME)
        assert not gate.passed and "in line_items" in gate.message
        assert "automate_now_step_ids" not in gate.message
    for cid in ("step-003", "classify-001", "map-001"):  # no business case: same as reference
        assert mut[cid].output == ref[cid].output


def test_automates_broken_step_is_caught_where_it_classes_a_defective_step_automate_now() -> None:
    mut = transcripts("automates_broken_step", "enforce")
    for cid in ("step-003", "step-006", "classify-004", "bizcase-004", "proposal-006"):
        assert _gate_failed(mut[cid], GATE_NAME), cid
    assert mut["step-006"].output == {"classification": "automate_now", "reason": "eligible"}
    # a defective judgement step falls to keep_human: wrong, but not proposed for automation
    assert mut["step-005"].output == {"classification": "keep_human", "reason": "judgement_based"}
    assert not _gate_failed(mut["step-005"], GATE_NAME)
    assert mut["step-005"].verdict.outcome.kind == "check_failed"


def test_reference_agent_never_touches_the_answer_key_or_the_fixtures_file() -> None:
    source = inspect.getsource(reference_module)
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
    package = "agentic_eval.domains.process_mapping"
    ours = {m.removeprefix(f"{package}.") for m in modules if m.startswith(package)}
    assert ours == {"fixtures"}  # the Step model, to parse tool results; nothing else
    assert names & {"load_fixtures", "FIXTURES_PATH", "fixtures_path"} == set()
    for word in ("answer_key", "load_fixtures", "fixtures.json", "open(", "read_text", "mining"):
        assert word not in source
    assert Path(reference_module.__file__ or "").name == "reference.py"
