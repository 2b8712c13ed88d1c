"""tau-bench's airline environment as a domain, on a small tau-bench-shaped airline checkout
written by ``taubench_airline_checkout`` (nothing of tau-bench is in the repository): every
tool's tau-bench semantics with its errors and quirks, the answer key, the reward beside the
consent gate, the gold agents, record and keyless replay, and the import command with ``--env``.

The checks against a real checkout are opt-in, like the retail one:
``TAU_BENCH_PATH=/path/to/tau-bench pytest -m tau_bench tests/test_taubench_airline.py``.
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

from agentic_eval.cli.main import main
from agentic_eval.domains import unregister_domain
from agentic_eval.domains.taubench import (
    EVAL_FILE,
    TauBenchDomain,
    TauBenchError,
    TauDatabase,
    consistent_hash,
    to_hashable,
)
from agentic_eval.domains.taubench.people import confirmation
from agentic_eval.domains.taubench.toolset import consent_tools, implementations
from taubench_airline_checkout import ADA, BO, GRACE, write_airline_checkout
from taubench_checkout import write_checkout

WRITES = {
    "book_reservation",
    "cancel_reservation",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_airline_checkout(tmp_path / "tau-bench")


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    yield
    unregister_domain("tau_bench_airline")
    unregister_domain("tau_bench_retail")


def _cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    return code, out + err


def _imported(capsys: pytest.CaptureFixture[str], checkout: Path, into: Path) -> Path:
    command = f"agentic-eval import tau-bench {checkout} --into {into} --env airline"
    code, out = _cli(capsys, command)
    assert code == 0, out
    assert out.splitlines()[0] == f"tau_bench_airline: 6 tasks from {checkout}"
    return into / "tau_bench_airline_eval.py"


BOOK: dict[str, Any] = {
    "user_id": "ada_hopper_101",
    "origin": "AAA",
    "destination": "CCC",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [
        {"flight_number": "FX101", "date": "2024-05-10"},
        {"flight_number": "FX102", "date": "2024-05-10"},
    ],
    "passengers": [ADA],
    "payment_methods": [{"payment_id": "credit_card_1001", "amount": 180}],
    "total_baggages": 1,
    "nonfree_baggages": 0,
    "insurance": "no",
}  # 100 + 80 in economy, one passenger: 180


def _book(**changed: Any) -> tuple[str, dict[str, Any]]:
    return "book_reservation", {**BOOK, **changed}


def _pay(*payments: tuple[str, float]) -> list[dict[str, Any]]:
    return [{"payment_id": p, "amount": a} for p, a in payments]


def _legs(*legs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"flight_number": n, "date": d} for n, d in legs]


def _flights(rid: str, cabin: str, legs: list[dict[str, str]], pay: str) -> tuple[str, Any]:
    return "update_reservation_flights", {
        "reservation_id": rid,
        "cabin": cabin,
        "flights": legs,
        "payment_id": pay,
    }


def _bags(rid: str, total: int, nonfree: int, pay: str) -> tuple[str, Any]:
    return "update_reservation_baggages", {
        "reservation_id": rid,
        "total_baggages": total,
        "nonfree_baggages": nonfree,
        "payment_id": pay,
    }


OUT_AND_BACK = _legs(("FX101", "2024-05-11"), ("FX105", "2024-05-11"))
PROBES: list[tuple[str, dict[str, Any]]] = [
    ("get_reservation_details", {"reservation_id": "NOPE"}),
    ("get_user_details", {"user_id": "nobody"}),
    ("list_all_airports", {}),
    ("search_direct_flight", {"origin": "AAA", "destination": "CCC", "date": "2024-05-10"}),
    ("search_direct_flight", {"origin": "AAA", "destination": "CCC", "date": "2024-05-11"}),
    ("search_onestop_flight", {"origin": "AAA", "destination": "CCC", "date": "2024-05-10"}),
    ("search_onestop_flight", {"origin": "CCC", "destination": "AAA", "date": "2024-05-10"}),
    ("search_onestop_flight", {"origin": "CCC", "destination": "AAA", "date": "2024-05-08"}),
    ("search_onestop_flight", {"origin": "CCC", "destination": "AAA", "date": "bad"}),
    _book(user_id="nobody"),
    _book(flights=_legs(("FX999", "2024-05-10"))),
    _book(flights=_legs(("FX101", "2024-06-01"))),
    _book(flights=_legs(("FX101", "2024-05-12"))),
    _book(flights=_legs(("FX103", "2024-05-10")), passengers=[ADA, GRACE]),
    _book(payment_methods=_pay(("credit_card_9", 180))),
    _book(payment_methods=_pay(("certificate_3003", 180))),
    _book(payment_methods=_pay(("credit_card_1001", 170))),
    _book(payment_methods=_pay(("certificate_3003", 100), ("certificate_3003", 80))),
    _book(payment_methods=_pay(("gift_card_2002", 180))),
    _book(payment_methods=_pay(("credit_card_1001", 180))),
    _book(payment_methods=_pay(("credit_card_1001", 180.0))),
    _book(insurance="yes", nonfree_baggages=1, payment_methods=_pay(("credit_card_1001", 260))),
    ("cancel_reservation", {"reservation_id": "NOPE"}),
    ("cancel_reservation", {"reservation_id": "RES001"}),
    ("cancel_reservation", {"reservation_id": "RES001"}),
    ("send_certificate", {"user_id": "ada_hopper_101", "amount": 75}),
    _flights("NOPE", "economy", OUT_AND_BACK, "credit_card_1001"),
    _flights("RES002", "economy", OUT_AND_BACK, "certificate_3221322"),
    _flights("RES003", "business", _legs(("FX102", "2024-05-10")), "gift_card_5005"),
    _flights("RES003", "basic_economy", _legs(("FX999", "2024-05-10")), "gift_card_5005"),
    _flights("RES002", "business", OUT_AND_BACK, "credit_card_1001"),
    _flights("RES002", "economy", OUT_AND_BACK, "paypal_9"),
    _flights("RES002", "economy", OUT_AND_BACK, "gift_card_2002"),
    _bags("NOPE", 1, 0, "credit_card_4004"),
    _bags("RES003", 3, 2, "gift_card_5005"),
    _bags("RES003", 3, 2, "certificate_3221322"),
    _bags("RES003", 1, 0, "gift_card_5005"),
    _bags("RES003", 2, 1, "credit_card_4004"),
    ("update_reservation_passengers", {"reservation_id": "RES003", "passengers": [BO, ADA]}),
    ("update_reservation_passengers", {"reservation_id": "NOPE", "passengers": [BO]}),
    ("update_reservation_passengers", {"reservation_id": "RES003", "passengers": [BO]}),
    ("send_certificate", {"user_id": "nobody", "amount": 10}),
    ("send_certificate", {"user_id": "bo_chen_202", "amount": 100}),
    ("send_certificate", {"user_id": "bo_chen_202", "amount": 25.5}),
    ("calculate", {"expression": "(290 + 305) * 2"}),
    ("think", {"thought": "nothing changes"}),
    ("transfer_to_human_agents", {"summary": "a summary"}),
    _book(flights=[{"flight_number": "FX101"}]),
    ("get_reservation_details", {"reservation_id": "RES002"}),
    ("get_user_details", {"user_id": "ada_hopper_101"}),
    ("get_user_details", {"user_id": "bo_chen_202"}),
    ("get_reservation_details", {"reservation_id": "RES003"}),
]
"""Calls in sequence on one database, every tool and its errors: the default suite checks what
they answer and change by hand; the opt-in test checks every answer, and the final database's
hash, against tau-bench's own tool code."""


def _probed(checkout: Path) -> tuple[list[str], TauDatabase]:
    domain = TauBenchDomain(checkout, "airline")
    db = domain.pristine.copy()
    tools = implementations("airline")
    said = [tools[name](db, **copy.deepcopy(kwargs)) for name, kwargs in PROBES]
    return said, db


def test_the_tools_answer_and_change_the_database_as_tau_benchs_do(checkout: Path) -> None:
    said, db = _probed(checkout)
    errors = {i: s for i, s in enumerate(said) if s.startswith("Error")}
    assert errors == {
        0: "Error: user not found",  # tau-bench's text for a missing reservation
        1: "Error: user not found",
        8: "Error: invalid literal for int() with base 10: 'ad'",
        9: "Error: user not found",
        10: "Error: flight FX999 not found",
        11: "Error: flight FX101 not found on date 2024-06-01",
        12: "Error: flight FX101 not available on date 2024-05-12",
        13: "Error: not enough seats on flight FX103",
        14: "Error: payment method credit_card_9 not found",
        15: "Error: not enough balance in payment method certificate_3003",
        16: "Error: payment amount does not add up, total price is 180, but paid 170",
        17: "Error: 'certificate_3003'",  # the certificate named twice: spent, then missing
        22: "Error: reservation not found",
        26: "Error: reservation not found",
        27: "Error: certificate cannot be used to update reservation",
        28: "Error: gift card balance is not enough",
        29: "Error: flight FX999 not found",
        31: "Error: payment method not found",
        33: "Error: reservation not found",
        34: "Error: gift card balance is not enough",
        35: "Error: certificate cannot be used to update reservation",
        38: "Error: number of passengers does not match",
        39: "Error: reservation not found",
        41: "Error: user not found",
        47: "Error: 'date'",
    }
    assert json.loads(said[2]) == {"AAA": "Avalon", "BBB": "Brookside", "CCC": "Cedar Falls"}
    assert [f["flight_number"] for f in json.loads(said[3])] == ["FX103"]
    assert said[4] == "[]"  # delayed, not available
    ((first, second),) = json.loads(said[6])
    assert (first["flight_number"], first["date"]) == ("FX104", "2024-05-10")
    # the second flight lands "+1": its day is the 11th, but it shows the 10th's prices
    assert (second["flight_number"], second["date"], second["prices"]["economy"]) == (
        "FX105", "2024-05-11", 65,
    )  # fmt: skip
    assert said[7] == "[]"  # the day after the 8th is written "2024-05-9": not found
    ada, bo = db.data["users"]["ada_hopper_101"], db.data["users"]["bo_chen_202"]
    # four bookings: HATHAT, HATHAU, then HATHAV twice (the last overwrites it)
    assert ada["reservations"] == ["RES001", "RES002", "HATHAT", "HATHAU", "HATHAV", "HATHAV"]
    booked = db.data["reservations"]["HATHAV"]
    assert booked["insurance"] == "yes" and booked["payment_history"][0]["amount"] == 260
    assert booked["flights"][0] == {
        "flight_number": "FX101", "date": "2024-05-10", "price": 100, "origin": "AAA",
        "destination": "BBB",
    }  # fmt: skip
    assert db.data["reservations"]["HATHAU"]["created_at"] == "2024-05-15T15:00:00"
    assert "certificate_3003" not in ada["payment_methods"]  # spent by the failed booking
    cancelled = db.data["reservations"]["RES001"]
    assert cancelled["status"] == "cancelled"  # twice: the refunds were refunded
    assert [p["amount"] for p in cancelled["payment_history"]] == [110, -110, -110, 110]
    res002 = db.data["reservations"]["RES002"]
    assert res002["cabin"] == "business"  # changing flights leaves the cabin as it was
    assert [p["amount"] for p in res002["payment_history"]] == [1190, -290, -544]
    assert res002["flights"][0]["price"] == 110  # repriced in economy
    assert ada["payment_methods"]["gift_card_2002"]["amount"] == 200.25 - 180 + 544
    res003 = db.data["reservations"]["RES003"]
    assert (res003["total_baggages"], res003["nonfree_baggages"]) == (2, 1)
    assert res003["payment_history"][1:] == [{"payment_id": "credit_card_4004", "amount": 50}]
    assert res003["passengers"] == [BO]
    assert (
        said[25] == "Certificate certificate_3221322 added to user ada_hopper_101 with amount 75."
    )
    assert said[43].endswith("certificate_3221324 added to user bo_chen_202 with amount 25.5.")
    assert bo["payment_methods"]["certificate_3221324"] == {
        "source": "certificate", "amount": 25.5, "id": "certificate_3221324",
    }  # fmt: skip
    assert said[44:47] == ["1190.0", "", "Transfer successful"]
    # all three certificate ids taken: tau-bench returns nothing; we say so, changing nothing
    tools = implementations("airline")
    before = db.hash()
    assert tools["send_certificate"](db, "bo_chen_202", 10).startswith("Error: user bo_chen_202")
    assert db.hash() == before == consistent_hash(to_hashable(db.data))
    # the case's copy changed; the checkout's database did not
    pristine = TauBenchDomain(checkout, "airline").pristine.tables
    assert pristine["reservations"]["RES001"].get("status") is None
    assert "HATHAT" not in pristine["reservations"]


def test_argument_records_are_stored_in_the_schemas_order(checkout: Path) -> None:
    """A replay passes the arguments with their keys sorted: the stored records (and so the
    text the agent is shown) do not depend on the order the agent wrote their fields in."""
    tools = implementations("airline")
    shown = []
    for flip in (False, True):
        kwargs = copy.deepcopy(BOOK)
        if flip:
            kwargs = {k: kwargs[k] for k in sorted(kwargs)}
            for name in ("flights", "passengers", "payment_methods"):
                kwargs[name] = [dict(sorted(r.items())) for r in kwargs[name]]
        shown.append(tools["book_reservation"](TauBenchDomain(checkout, "airline").pristine.copy(),
                                               **kwargs))  # fmt: skip
    assert shown[0] == shown[1]
    assert '"passengers": [{"first_name": "Ada", "last_name": "Hopper", "dob"' in shown[1]


def test_the_airport_list_comes_from_the_checkout_or_the_flights(tmp_path: Path) -> None:
    root = write_airline_checkout(tmp_path / "tau", airports=False)
    db = TauBenchDomain(root, "airline").pristine.copy()
    listed = implementations("airline")["list_all_airports"](db)
    assert json.loads(listed) == {"AAA": "AAA", "BBB": "BBB", "CCC": "CCC"}


def _naive_gold_hash(domain: TauBenchDomain, index: int) -> str:
    """The gold database's hash the slow, obvious way (a deep copy of all of it)."""
    db = domain.pristine.copy()
    db.data = copy.deepcopy(domain.pristine.tables)
    db.taken = {(t, k) for t, records in db.data.items() for k in records}
    tools = implementations("airline")
    for action in domain.tasks[index].actions:
        if action.name != "transfer_to_human_agents":
            tools[action.name](db, **action.kwargs)
    return consistent_hash(to_hashable(db.data))


def test_the_answer_key_is_tau_benchs_hash_of_the_gold_database(checkout: Path) -> None:
    domain = TauBenchDomain(checkout, "airline")
    assert domain.name == "tau_bench_airline"
    assert domain.system_prompt.startswith("# Airline agent policy")
    cases = domain.build_cases()
    assert [c.id for c in cases] == [f"test-{i:03d}" for i in range(6)]
    assert [c.hard_gate for c in cases] == [True, True, True, True, True, False]
    for i, case in enumerate(cases):
        assert case.expected["data_hash"] == _naive_gold_hash(domain, i), case.id
    untouched = consistent_hash(to_hashable(domain.pristine.tables))
    assert cases[5].expected["data_hash"] == untouched  # reads only
    assert len({c.expected["data_hash"] for c in cases}) == 6
    assert cases[2].expected["outputs"] == ["790"]
    # applying the gold actions twice changes neither the tasks nor the database as loaded
    assert [c.expected["data_hash"] for c in domain.build_cases()] == [
        c.expected["data_hash"] for c in TauBenchDomain(checkout, "airline").build_cases()
    ]


def test_the_checkouts_tool_schemas_are_what_the_agent_sees(checkout: Path) -> None:
    tools = TauBenchDomain(checkout, "airline").tools()
    assert {t.name for t in tools if t.needs_consent} == WRITES == consent_tools("airline")
    book = tools.get("book_reservation")
    assert book is not None and book.mutates == "user_id"
    assert book.spec.description == "Book a reservation (fixture text)."
    cancel = tools.get("cancel_reservation")
    assert cancel is not None and cancel.mutates == "reservation_id"
    transfer = tools.get("transfer_to_human_agents")
    assert transfer is not None and transfer.ends_episode and not transfer.needs_consent
    assert [t.name for t in tools] == sorted(t.name for t in tools)  # tau-bench's order
    # a number stays the number it was (the hash tells 100 from 100.0), a count must be one
    send = tools.get("send_certificate")
    assert send is not None
    assert send.validate({"user_id": "u", "amount": 100})["amount"].__class__ is int
    assert send.validate({"user_id": "u", "amount": 100.0})["amount"].__class__ is float
    bags = tools.get("update_reservation_baggages")
    assert bags is not None
    with pytest.raises(ValueError, match="total_baggages"):
        bags.validate({"reservation_id": "R", "total_baggages": 2.0, "nonfree_baggages": 0,
                       "payment_id": "p"})  # fmt: skip


def test_the_gold_agent_earns_reward_1_and_passes_every_gate(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    text = eval_file.read_text()
    assert f"airline = TauBenchDomain({str(checkout)!r}, 'airline')" in text
    code, out = _cli(
        capsys, f"agentic-eval run {eval_file} --backend scripted --agent gold --no-history"
    )
    assert code == 0 and "6/6" in out and "PASS" in out, out


def test_the_gold_confirmation_names_every_argument() -> None:
    from agentic_eval.domains.taubench.checkout import GoldAction

    line = confirmation(GoldAction("book_reservation", BOOK))
    assert "flight number FX101 date 2024-05-10" in line and "dob 1985-12-09" in line
    assert "payment id credit_card_1001 amount 180" in line and line.endswith("(yes/no)")


def test_agents_that_do_not_ask_earn_the_reward_and_fail_the_consent_gate_alone(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    for agent in ("gold_without_asking", "gold_asking_vaguely"):
        code, out = _cli(
            capsys, f"agentic-eval run {eval_file} --backend scripted --agent {agent} --no-history"
        )
        assert code == 1, out
        for case in ("test-000", "test-001", "test-002", "test-003", "test-004"):
            assert f"{case}: check_failed [HARD GATE] - failed: user_consent\n" in out, out
        assert "test-005" not in out  # nothing to confirm: it passes
    code, out = _cli(capsys, f"agentic-eval mutants {eval_file}")
    assert code == 0 and "kill matrix PASS: 2 mutants" in out, out


def test_a_wrong_final_database_or_a_missing_output_is_reward_0(checkout: Path) -> None:
    from agentic_eval.checks.base import CheckContext, Trace
    from agentic_eval.core.results import Utterance

    domain = TauBenchDomain(checkout, "airline")
    case = domain.build_cases()[2]  # the downgrade, which must say "790"
    check = next(c for c in domain.task_kind(case).checks if c.name == "tau_reward")

    def judged(db: TauDatabase, said: str) -> Any:
        line = Utterance(speaker="agent", text=said, turn=3)
        return check(CheckContext(case, None, Trace((), ()), db, (line,)))

    gold = domain.make_env(case)
    tools = implementations("airline")
    for action in domain.tasks[2].actions:
        tools[action.name](gold, **action.kwargs)
    assert judged(gold, "You save 790 in all").passed
    missed = judged(gold, "You save a lot")
    assert not missed.passed and "never said '790'" in missed.message
    untouched = judged(domain.make_env(case), "You save 790 in all")
    assert not untouched.passed and "not the one the gold actions leave" in untouched.message


def test_a_recorded_conversation_replays_keyless_byte_for_byte(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    from agentic_eval.core.canonical import canonical_file_text

    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    rec = tmp_path / "rec"
    run = f"agentic-eval run {eval_file} --agent gold --recordings {rec} --no-history --json"
    code, out = _cli(capsys, f"{run} --backend scripted --record")
    assert code == 0, out
    (recorded,) = json.loads(out)["runs"]
    folder = rec / "tau_bench_airline" / "gold"
    transcript = json.loads((folder / "test-003.json").read_text())
    said = [u["response"]["content"][0]["text"] for u in transcript["user_turns"]]
    assert said[0] == TauBenchDomain(checkout, "airline").tasks[3].instruction
    assert said[1:] == ["Yes, please go ahead.", "Yes, please go ahead."]  # then the transfer
    assert [c["name"] for c in transcript["tool_calls"]][-1] == "transfer_to_human_agents"
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    code, out = _cli(capsys, run)  # keyless replay
    assert code == 0, out
    (replayed,) = json.loads(out)["runs"]
    assert replayed["replay"]["samples_reproduced"] == 6 and replayed["replay"]["problems"] == []
    assert canonical_file_text(replayed["scorecard"]) == canonical_file_text(recorded["scorecard"])
    assert canonical_file_text(replayed["scorecard"]).encode() == files["scorecard.json"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == files  # nothing rewritten


def test_batch_reports_pass_hat_k_over_samples(
    capsys: pytest.CaptureFixture[str], checkout: Path, tmp_path: Path
) -> None:
    eval_file = _imported(capsys, checkout, tmp_path / "evals")
    code, out = _cli(capsys, f"agentic-eval batch {eval_file} --samples 2")
    assert code == 0, out
    assert "samples: 12" in out and "pass^k (k=2): 1.00 over 6 cases" in out, out


def test_the_import_without_env_defines_every_environment_the_checkout_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_airline_checkout(write_checkout(tmp_path / "tau"))  # retail and airline
    into = tmp_path / "evals"
    code, out = _cli(capsys, f"agentic-eval import tau-bench {root} --into {into}")
    assert code == 0, out
    assert [line for line in out.splitlines() if not line.startswith("  ")] == [
        f"tau_bench_retail: 5 tasks from {root}",
        f"tau_bench_airline: 6 tasks from {root}",
        f"wrote {into / EVAL_FILE}",
    ]
    both = into / EVAL_FILE
    code, out = _cli(
        capsys, f"agentic-eval run {both} --backend scripted --agent gold --no-history"
    )
    assert code == 0 and "5/5" in out and "6/6" in out, out
    # a command taking one domain says which it was given, and how to pick one
    code, out = _cli(capsys, f"agentic-eval batch {both} --samples 2")
    assert code == 2
    assert out.strip().splitlines()[-1] == (
        f"agentic-eval: error: {both} defines 2 domains (tau_bench_retail, tau_bench_airline); "
        "batch takes one: use an eval file defining one of them"
    ), out
    code, out = _cli(capsys, f"agentic-eval import tau-bench {root} --into {into} --env retail")
    assert code == 0 and out.splitlines()[-1] == f"wrote {into / 'tau_bench_retail_eval.py'}"


def test_an_environment_the_checkout_lacks_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_checkout(tmp_path / "tau")  # retail only
    code, out = _cli(
        capsys, f"agentic-eval import tau-bench {root} --into {tmp_path} --env airline"
    )
    assert code == 2
    assert out.strip().splitlines()[-1] == (
        f"agentic-eval: error: {root} is not a tau-bench checkout: "
        "tau_bench/envs/airline/data/flights.json is missing"
    ), out
    with pytest.raises(TauBenchError, match="tau-bench airline has no task split 'train'"):
        TauBenchDomain(write_airline_checkout(root), "airline", "train")
    code, out = _cli(capsys, f"agentic-eval import tau-bench {root} --into {tmp_path} --env bank")
    assert code == 2 and "'bank' is not one of 'retail', 'airline'" in out, out


# --- opt-in: tau-bench's own code, from a real checkout -----------------------------------------


def _tau_bench_path() -> str:
    path = os.environ.get("TAU_BENCH_PATH")
    if not path:
        pytest.skip("set TAU_BENCH_PATH to a tau-bench checkout")
    return path


def _run_reference(script: str, path: str, payload: Any, timeout: int) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), path],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


TOOLS_REFERENCE = r"""
import json, sys, types
sys.path.insert(0, sys.argv[1])
sys.modules["litellm"] = types.SimpleNamespace(completion=None)  # imported by its user module
from tau_bench.envs.airline.tools import ALL_TOOLS
from tau_bench.envs.base import consistent_hash, to_hashable

given = json.loads(sys.stdin.read())
data, tools = given["data"], {t.get_info()["function"]["name"]: t for t in ALL_TOOLS}
said = []
for name, kwargs in given["calls"]:
    try:  # as tau-bench's Env.step runs a tool
        said.append(tools[name].invoke(data=data, **kwargs))
    except Exception as e:
        said.append(f"Error: {e}")
print(json.dumps({"said": said, "hash": consistent_hash(to_hashable(data))}))
"""


@pytest.mark.tau_bench
@pytest.mark.timeout(300)
def test_the_tools_answer_every_probe_as_tau_benchs_own_tool_code(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _tau_bench_path()
    said, db = _probed(checkout)
    tables = TauBenchDomain(checkout, "airline").pristine.tables
    theirs = _run_reference(TOOLS_REFERENCE, path, {"data": tables, "calls": PROBES}, 240)
    # the airport list is the checkout's, not the fixture's: ours as read from the real one
    real = TauBenchDomain(path, "airline").pristine.copy()
    said[2] = implementations("airline")["list_all_airports"](real)
    differing = [i for i, (a, b) in enumerate(zip(said, theirs["said"], strict=True)) if a != b]
    with capsys.disabled():
        print(
            f"\ntau-bench airline tools on {len(PROBES)} probing calls: "
            f"{len(PROBES) - len(differing)} answers equal to tau-bench's own; final database "
            f"hash equal: {db.hash() == theirs['hash']}"
        )
    assert differing == [], [(i, said[i], theirs["said"][i]) for i in differing]
    assert db.hash() == theirs["hash"]


REWARD_REFERENCE = r"""
import json, sys, types
sys.path.insert(0, sys.argv[1])
sys.modules["litellm"] = types.SimpleNamespace(completion=None)  # imported by its user module
from tau_bench.envs.airline.env import MockAirlineDomainEnv
from tau_bench.envs.airline.tasks_test import TASKS
from tau_bench.types import Action

env = MockAirlineDomainEnv(user_strategy="human", task_split="test", task_index=0)
runs = json.loads(sys.stdin.read())
hashes, rewards = [], {agent: [] for agent in runs}
for index, task in enumerate(TASKS):
    env.data = env.data_load_func()
    for action in task.actions:
        if action.name not in env.terminate_tools:
            env.step(action)
    hashes.append(env.get_data_hash())
    for agent, episodes in runs.items():
        # tau-bench's own reward of our episode: its final database (the records our episode
        # changed or added, over a fresh load), and what our agent said
        env.task_index, env.task = index, task
        env.data = env.data_load_func()
        for table, records in episodes[index]["changed"].items():
            env.data[table].update(records)
        said = episodes[index]["said"]
        env.actions = [Action(name="respond", kwargs={"content": c}) for c in said]
        rewards[agent].append(env.calculate_reward().reward)
print(json.dumps({"hashes": hashes, "rewards": rewards}))
"""


def _changed(domain: TauBenchDomain, db: TauDatabase) -> dict[str, dict[str, Any]]:
    """The records of ``db`` that are not the pristine ones (changed or added); tools never
    remove a record."""
    pristine = domain.pristine.tables
    assert all(set(pristine[t]) <= set(records) for t, records in db.data.items())
    return {
        table: {k: r for k, r in records.items() if pristine[table].get(k) is not r}
        for table, records in db.data.items()
    }


def _episodes(domain: TauBenchDomain, agent: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """Run ``agent`` on every case: each case's run, and the episode tau-bench judges (the
    records the calls changed, found by replaying them, and the agent's replies)."""
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
    order = [c.id for c in cases]
    seen.sort(key=lambda r: order.index(r.transcript.case_id))
    tools = implementations("airline")
    episodes: list[dict[str, Any]] = []
    for case, done in zip(cases, seen, strict=True):
        t = done.transcript
        db = domain.make_env(case)
        for call in t.tool_calls:
            tools[call.name](db, **call.input)
        said = [x.response.text() for x in t.turns if not x.response.tool_uses()]
        episodes.append({"changed": _changed(domain, db), "said": said})
    return seen, episodes


@pytest.mark.tau_bench
@pytest.mark.timeout(1800)
def test_a_real_checkouts_airline_answer_key_and_rewards_match_tau_benchs_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _tau_bench_path()
    domain = TauBenchDomain(path, "airline")
    cases = domain.build_cases()
    gold, gold_episodes = _episodes(domain, domain.agents()["gold"])
    (unasked,) = [m.agent for m in domain.mutants() if m.name == "gold_without_asking"]
    hasty, hasty_episodes = _episodes(domain, unasked)
    runs = {"gold": gold_episodes, "gold_without_asking": hasty_episodes}
    theirs = _run_reference(REWARD_REFERENCE, path, runs, 1500)
    hashes = [c.expected["data_hash"] for c in cases]
    matched = sum(a == b for a, b in zip(hashes, theirs["hashes"], strict=True))
    passed = sum(r.result.outcome.kind == "passed" for r in gold)
    rewarded = {agent: sum(r == 1.0 for r in got) for agent, got in theirs["rewards"].items()}
    consent_failed = sum(
        [c.name for c in r.result.checks if not c.passed] == ["user_consent"] for r in hasty
    )
    hasty_passed = sum(r.result.outcome.kind == "passed" for r in hasty)
    asks = sum(c.hard_gate for c in cases)
    with capsys.disabled():
        print(
            f"\ntau-bench airline test tasks: {len(cases)}; answer key equal to tau-bench's hash: "
            f"{matched}; gold agent passed every check: {passed}; tau-bench's own reward 1: "
            f"gold {rewarded['gold']}, gold_without_asking {rewarded['gold_without_asking']}; "
            f"gold_without_asking failed user_consent alone: {consent_failed} of the {asks} "
            f"tasks that change the database (passed the other {hasty_passed})"
        )
    assert matched == passed == rewarded["gold"] == len(cases)
    assert rewarded["gold_without_asking"] == len(cases)
    assert consent_failed == asks and hasty_passed == len(cases) - asks
