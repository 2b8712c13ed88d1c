"""tau-bench as a peer benchmark (issue 21, part 4), on a small tau-bench-shaped checkout this
file writes (nothing of tau-bench is in the repository): the import command, the cases and their
answer key, tau-bench's reward beside the consent gate, record and keyless replay, the tools'
tau-bench semantics, and the errors of a path that is not a checkout.

The check against a real checkout is opt-in, like the local-model tests:
``TAU_BENCH_PATH=/path/to/tau-bench pytest -m tau_bench tests/test_taubench.py``.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agent.user import STOP
from agentic_eval.backends.base import CallContext, ModelBackend
from agentic_eval.cli.main import main
from agentic_eval.core.messages import TextBlock
from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.domains import unregister_domain
from agentic_eval.domains.onefile.loading import load_eval_file
from agentic_eval.domains.taubench import (
    EVAL_FILE,
    TauBenchDomain,
    TauBenchError,
    TauDatabase,
    consistent_hash,
    reward,
    to_hashable,
)
from agentic_eval.domains.taubench.common_tools import calculate
from agentic_eval.domains.taubench.toolset import implementations
from taubench_checkout import TASKS, write_checkout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_checkout(tmp_path / "tau-bench")


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    yield
    unregister_domain("tau_bench_retail")


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    return code, out + err


def _imported(capsys: pytest.CaptureFixture[str], checkout: Path, into: Path) -> Path:
    code, out = _cli(capsys, f"agentic-eval import tau-bench {checkout} --into {into}")
    assert code == 0, out
    assert f"tau_bench_retail: 5 tasks from {checkout}" in out
    return into / EVAL_FILE


def _naive_gold_hash(domain: TauBenchDomain, index: int) -> str:
    """The gold database's hash the slow, obvious way: a deep copy of all of it, every gold
    action applied, tau-bench's to_hashable over the whole (what the copy-on-write hash
    must equal)."""
    db = domain.pristine.copy()
    db.data = copy.deepcopy(domain.pristine.tables)
    db.taken = {(t, k) for t, records in db.data.items() for k in records}
    tools = implementations("retail")
    for action in domain.tasks[index].actions:
        if action.name != "transfer_to_human_agents":
            tools[action.name](db, **action.kwargs)
    return consistent_hash(to_hashable(db.data))


def test_the_import_writes_an_eval_file_whose_gold_agent_earns_reward_1_and_passes_every_gate(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    assert str(checkout) in eval_file.read_text()
    assert len(eval_file.read_text().splitlines()) == 4  # docstring, import, blank, domain
    code, out = _cli(
        capsys, f"agentic-eval run {eval_file} --backend scripted --agent gold --no-history"
    )
    assert code == 0 and "5/5" in out and "PASS" in out, out


def test_the_answer_key_is_tau_benchs_hash_of_the_gold_database(checkout: Path) -> None:
    domain = TauBenchDomain(checkout)
    cases = domain.build_cases()
    assert [c.id for c in cases] == [f"test-{i:03d}" for i in range(5)]
    assert [c.hard_gate for c in cases] == [True, True, True, True, False]
    for i, case in enumerate(cases):
        assert case.expected["data_hash"] == _naive_gold_hash(domain, i), case.id
        assert case.expected["outputs"] == list(domain.tasks[i].outputs)
    untouched = consistent_hash(to_hashable(domain.pristine.tables))
    assert cases[4].expected["data_hash"] == untouched  # reads only
    assert len({c.expected["data_hash"] for c in cases}) == 5
    assert domain.pristine.tables["orders"]["#W0000001"]["status"] == "pending"  # not written


def test_the_tools_change_the_database_as_tau_benchs_do(checkout: Path) -> None:
    domain = TauBenchDomain(checkout)
    tools = implementations("retail")
    db = domain.make_env(domain.build_cases()[0])
    done = json.loads(tools["cancel_pending_order"](db, "#W0000001", "no longer needed"))
    assert done["status"] == "cancelled" and done["payment_history"][-1]["amount"] == 20.5
    assert db.data["users"]["ada_lovelace_1815"]["payment_methods"]["gift_card_1"]["balance"] == (
        round(50.1 + 20.5, 2)
    )
    assert tools["cancel_pending_order"](db, "#W0000001", "no longer needed") == (
        "Error: non-pending order cannot be cancelled"
    )
    assert tools["cancel_pending_order"](db, "#W9", "x") == "Error: order not found"
    # exchanging to an unavailable variant, and more items than the order holds
    assert (
        tools["exchange_delivered_order_items"](
            db, "#W0000002", ["2000000002"], ["2000000003"], "credit_card_1"
        )
        == "Error: new item 2000000003 not found or available"
    )
    assert (
        tools["exchange_delivered_order_items"](
            db, "#W0000002", ["2000000002", "2000000002"], ["2000000001", "2000000001"], "x"
        )
        == "Error: 2000000002 not found"
    )
    assert (
        tools["return_delivered_order_items"](db, "#W0000002", ["3000000001"], "paypal_1")
        == "Error: payment method not found"
    )
    # a raising tool shows the exception as tau-bench's Env.step does
    assert tools["get_order_details"](db, ["#W0000001"]) == "Error: unhashable type: 'list'"
    assert tools["find_user_id_by_name_zip"](db, "ada", "LOVELACE", "10001") == (
        "ada_lovelace_1815"
    )
    assert json.loads(tools["list_all_product_types"](db)) == {
        "Mug": "1000000002",
        "T-Shirt": "1000000001",
    }
    assert tools["transfer_to_human_agents"](db, "x") == "Transfer successful"
    assert tools["think"](db, "hmm") == ""
    # the copy-on-write database hashes as the whole database does
    assert db.hash() == consistent_hash(to_hashable(db.data))
    assert domain.pristine.copy().hash() == consistent_hash(to_hashable(domain.pristine.tables))


@pytest.mark.parametrize(
    "expression",
    ["2 + 2", " 1/3", "10 / 4 * (2 - 0.5)", "7 // 2", "2 ** 0.5", "-(3)", "1/0", "1.0/0", "()",
     "1 +", "", " ", "1..2", "01", "(-8) ** 0.5", "3*.5"],
)  # fmt: skip
def test_calculate_answers_as_python_eval_does(expression: str) -> None:
    try:
        value = eval(expression, {"__builtins__": None}, {})  # the reference: tau-bench's way
        expected = str(round(float(value), 2))
    except Exception as exc:
        expected = f"Error: {exc}"
    assert calculate(TauDatabase({}, None), expression) == expected  # type: ignore[arg-type]


def test_calculate_refuses_other_characters_and_huge_powers() -> None:
    db = TauDatabase({}, None)  # type: ignore[arg-type]
    assert calculate(db, "__import__('os')") == "Error: invalid characters in expression"
    assert calculate(db, "9 ** 9 ** 9").startswith("Error: exponent")


def test_a_reply_must_say_each_output_as_tau_bench_compares_it() -> None:
    assert reward("h", "h", ["1234.5"], ["That is 1,234.50 in all"]).value == 1.0
    assert reward("h", "h", ["Polyester"], ["it is POLYESTER"]).value == 1.0
    assert reward("h", "h", ["2"], ["none"]).value == 0.0
    assert reward("h", "other", [], ["anything"]).value == 0.0
    assert reward("h", "h", [], []).value == 1.0


def test_an_agent_that_never_asks_earns_tau_benchs_reward_and_fails_the_consent_gate(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    for agent in ("gold_without_asking", "gold_asking_vaguely"):
        code, out = _cli(
            capsys, f"agentic-eval run {eval_file} --backend scripted --agent {agent} --no-history"
        )
        assert code == 1, out
        for case in ("test-000", "test-001", "test-002", "test-003"):
            # only the consent gate failed: tau_reward (not a hard gate) held
            assert f"{case}: check_failed [HARD GATE] - failed: user_consent\n" in out, out
        assert "test-004" not in out  # nothing to confirm: it passes
    code, out = _cli(capsys, f"agentic-eval mutants {eval_file}")
    assert code == 0 and "kill matrix PASS: 2 mutants" in out, out


def test_a_wrong_final_database_or_a_missing_output_is_reward_0(checkout: Path) -> None:
    (domain,) = load_eval_file(str(_eval_file(checkout)))
    case = domain.load_cases()[2]  # return + address change, says "11.49"
    check = next(c for c in domain.task_kind(case).checks if c.name == "tau_reward")
    from agentic_eval.checks.base import CheckContext, Trace
    from agentic_eval.core.results import Utterance

    def judged(db: TauDatabase, said: str) -> Any:
        line = Utterance(speaker="agent", text=said, turn=3)
        return check(CheckContext(case, None, Trace((), ()), db, (line,)))

    gold = domain.make_env(case)
    tools = implementations("retail")
    for action in domain.tasks[2].actions:
        tools[action.name](gold, **action.kwargs)
    assert judged(gold, "Your refund of 11.49 is on its way").passed
    missed = judged(gold, "Your refund is on its way")
    assert not missed.passed and "never said '11.49'" in missed.message
    untouched = judged(domain.make_env(case), "Your refund of 11.49 is on its way")
    assert not untouched.passed
    assert "not the one the gold actions leave" in untouched.message


def _eval_file(checkout: Path) -> Path:
    from agentic_eval.domains.taubench import write_eval_file

    path = write_eval_file(checkout, checkout.parent / "evals").path
    return path


def test_a_recorded_conversation_replays_keyless(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    rec = tmp_path / "rec"
    run = f"agentic-eval run {eval_file} --agent gold --recordings {rec} --no-history"
    code, out = _cli(capsys, f"{run} --backend scripted --record")
    assert code == 0, out
    recorded = json.loads((rec / "tau_bench_retail" / "gold" / "test-000.json").read_text())
    said = [u["response"]["content"][0]["text"] for u in recorded["user_turns"]]
    assert said[0] == TauBenchDomain(checkout).tasks[0].instruction  # the customer opens
    assert said[1:] == ["Yes, please go ahead.", "Thank you, that is all. ###STOP###"]
    code, out = _cli(capsys, run)  # keyless replay
    assert code == 0 and "5/5 reproduced" in out, out


class _ModelCustomer(ModelBackend):
    """A "model" playing the customer: it answers from the request the loop built for it."""

    def __init__(self) -> None:
        self.systems: list[str] = []

    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        self.systems.append(request.system)
        last = request.messages[-1].text()
        text = (
            "Hi, please cancel my order #W0000001." if len(request.messages) == 1
            else "yes" if "(yes/no)" in last else f"thanks {STOP}"
        )  # fmt: skip
        return ModelResponse(content=(TextBlock(text=text),), stop_reason="end_turn", model="m")


def test_a_model_can_play_the_customer(checkout: Path) -> None:
    import asyncio

    from agentic_eval.backends.scripted import ScriptedBackend
    from agentic_eval.evaluation.runner import run_tasks
    from agentic_eval.evaluation.settings import RunSettings

    played = _ModelCustomer()
    domain = TauBenchDomain(checkout, user_backend=played, user_model="m")
    case = domain.build_cases()[0]
    (spec,) = domain.task_specs([case])
    agent = ScriptedBackend("gold", domain.agents()["gold"])
    done = asyncio.run(run_tasks([spec], agent, RunSettings(model="s")))
    assert done.cases[0].result.outcome.kind == "passed"
    assert len(played.systems) == 3 and domain.tasks[0].instruction in played.systems[0]
    with pytest.raises(ValueError, match="needs user_model"):
        TauBenchDomain(checkout, user_backend=played)


def test_batch_reports_pass_hat_k_over_samples(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    code, out = _cli(capsys, f"agentic-eval batch {eval_file} --samples 3")
    assert code == 0, out
    assert "samples: 15" in out and "pass^k (k=3): 1.00 over 5 cases" in out, out


def test_the_checkouts_tool_schemas_are_what_the_agent_sees(checkout: Path) -> None:
    tools = TauBenchDomain(checkout).tools()
    cancel = tools.get("cancel_pending_order")
    assert cancel is not None and cancel.needs_consent
    assert cancel.spec.description == "Cancel a pending order (fixture text)."
    assert cancel.spec.input_schema["properties"]["reason"]["enum"] == [
        "no longer needed",
        "ordered by mistake",
    ]
    transfer = tools.get("transfer_to_human_agents")
    assert transfer is not None and transfer.ends_episode and not transfer.needs_consent
    reads = [t.name for t in tools if not t.needs_consent]
    assert "get_order_details" in reads and "calculate" in reads


def test_a_path_that_is_not_a_checkout_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out = _cli(capsys, f"agentic-eval import tau-bench {tmp_path} --into {tmp_path}")
    assert code == 2
    assert out.strip().splitlines()[-1] == (
        f"agentic-eval: error: {tmp_path} is not a tau-bench checkout: "
        "tau_bench/envs/retail/data/orders.json is missing"
    ), out
    assert not (tmp_path / EVAL_FILE).exists()
    with pytest.raises(TauBenchError, match="unknown tau-bench environment 'bank'"):
        TauBenchDomain(tmp_path, env="bank")


def test_a_task_file_that_is_not_literal_is_named_with_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = TASKS.replace('user_id="alan_turing_1912"', "user_id=ALAN", 1)
    root = write_checkout(tmp_path / "tau", broken)
    code, out = _cli(capsys, f"agentic-eval import tau-bench {root} --into {tmp_path}")
    assert code == 2
    tasks = root / "tau_bench" / "envs" / "retail" / "tasks_test.py"
    line = broken.splitlines().index("        user_id=ALAN,") + 1
    assert f"{tasks}:{line}: Task(user_id=...) is not a literal" in out, out


# --- opt-in: a real tau-bench checkout -----------------------------------------------------------

REFERENCE = r"""
import json, sys, types
sys.path.insert(0, sys.argv[1])
sys.modules["litellm"] = types.SimpleNamespace(completion=None)  # imported by its user module
from tau_bench.envs.retail.env import MockRetailDomainEnv
from tau_bench.envs.retail.tasks_test import TASKS_TEST
from tau_bench.types import Action

env = MockRetailDomainEnv(user_strategy="human", task_split="test", task_index=0)
runs = json.loads(sys.stdin.read())
hashes, rewards = [], {agent: [] for agent in runs}
for index, task in enumerate(TASKS_TEST):
    env.data = env.data_load_func()
    for action in task.actions:
        if action.name not in env.terminate_tools:
            env.step(action)
    hashes.append(env.get_data_hash())
    for agent, episodes in runs.items():
        # tau-bench's own reward of our episode: its final database, what our agent said
        env.task_index, env.task = index, task
        env.data = episodes[index]["data"]
        said = episodes[index]["said"]
        env.actions = [Action(name="respond", kwargs={"content": c}) for c in said]
        rewards[agent].append(env.calculate_reward().reward)
print(json.dumps({"hashes": hashes, "rewards": rewards}))
"""


def _episodes(domain: TauBenchDomain, agent: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """Run ``agent`` on every case: each case's run, and the episode tau-bench judges (the
    final database, rebuilt by replaying the calls, and the agent's replies to the user)."""
    import asyncio

    from agentic_eval.backends.scripted import ScriptedBackend
    from agentic_eval.evaluation.runner import run_tasks
    from agentic_eval.evaluation.settings import RunSettings

    cases = domain.build_cases()
    seen: list[Any] = []
    specs = domain.task_specs(cases)
    asyncio.run(
        run_tasks(specs, ScriptedBackend("s", agent), RunSettings(model="s"), on_case=seen.append)
    )
    seen.sort(key=lambda r: [c.id for c in cases].index(r.transcript.case_id))
    episodes: list[dict[str, Any]] = []
    tools = implementations("retail")
    for case, done in zip(cases, seen, strict=True):
        t = done.transcript
        db = domain.make_env(case)
        for call in t.tool_calls:
            tools[call.name](db, **call.input)
        said = [x.response.text() for x in t.turns if not x.response.tool_uses()]
        episodes.append({"data": db.data, "said": said})
    return seen, episodes


@pytest.mark.tau_bench
@pytest.mark.timeout(1800)
def test_a_real_checkouts_answer_key_and_rewards_match_tau_benchs_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = os.environ.get("TAU_BENCH_PATH")
    if not path:
        pytest.skip("set TAU_BENCH_PATH to a tau-bench checkout")
    domain = TauBenchDomain(path)
    cases = domain.build_cases()
    gold, gold_episodes = _episodes(domain, domain.agents()["gold"])
    (unasked,) = [m.agent for m in domain.mutants() if m.name == "gold_without_asking"]
    hasty, hasty_episodes = _episodes(domain, unasked)
    reference = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(REFERENCE), path],
        input=json.dumps({"gold": gold_episodes, "gold_without_asking": hasty_episodes}),
        capture_output=True,
        text=True,
        timeout=1500,
        check=True,
    )
    theirs = json.loads(reference.stdout)
    hashes = [c.expected["data_hash"] for c in cases]
    matched = sum(a == b for a, b in zip(hashes, theirs["hashes"], strict=True))
    passed = sum(r.result.outcome.kind == "passed" for r in gold)
    rewarded = {agent: sum(r == 1.0 for r in got) for agent, got in theirs["rewards"].items()}
    consent_failed = sum(
        [c.name for c in r.result.checks if not c.passed] == ["user_consent"] for r in hasty
    )
    asks = sum(c.hard_gate for c in cases)
    with capsys.disabled():
        print(
            f"\ntau-bench retail test tasks: {len(cases)}; answer key equal to tau-bench's hash: "
            f"{matched}; gold agent passed every check: {passed}; tau-bench's own reward 1: "
            f"gold {rewarded['gold']}, gold_without_asking {rewarded['gold_without_asking']}; "
            f"gold_without_asking failed user_consent alone: {consent_failed} of the {asks} "
            "tasks that change the database"
        )
    assert matched == passed == rewarded["gold"] == len(cases)
    assert rewarded["gold_without_asking"] == len(cases)
    assert consent_failed == asks
