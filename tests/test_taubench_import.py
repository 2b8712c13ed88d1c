"""``agentic-eval import tau-bench`` refuses a checkout whose parts do not fit together, and says
what it noticed in one that does: no tasks, a database the gold actions do not fit, tools with no
schema of tau-bench's, a table that is not JSON, a path that does not exist, a file replaced."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from agentic_eval.cli.main import main
from agentic_eval.domains.taubench import EVAL_FILE
from taubench_checkout import write_checkout

DATA = Path("tau_bench") / "envs" / "retail" / "data"


def _import(capsys: pytest.CaptureFixture[str], root: Path | str, into: Path) -> tuple[int, str]:
    code = main(shlex.split(f"import tau-bench {root} --into {into}"))
    out, err = capsys.readouterr()
    return code, out + err


def _error(out: str) -> str:
    (line,) = out.strip().splitlines()
    assert line.startswith("agentic-eval: error: "), line
    return line.removeprefix("agentic-eval: error: ")


def test_a_task_file_without_tasks_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_checkout(tmp_path / "tau", "TASKS_TEST = []\n")
    code, out = _import(capsys, root, tmp_path / "evals")
    assert code == 2
    assert _error(out) == f"{root / DATA.parent / 'tasks_test.py'}: holds no task"
    assert not (tmp_path / "evals" / EVAL_FILE).exists()


def test_a_database_the_gold_actions_do_not_fit_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_checkout(tmp_path / "tau")
    (root / DATA / "orders.json").write_text("{}")
    code, out = _import(capsys, root, tmp_path / "evals")
    assert code == 2
    line = _error(out)
    assert line.startswith(f"{root / DATA}: does not fit the tasks of tasks_test.py: "), line
    assert "gold actions that change the database are refused (task test-" in line
    assert "Error: order not found" in line


def test_what_the_import_noticed_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_checkout(tmp_path / "tau")
    code, out = _import(capsys, root, tmp_path / "evals")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"tau_bench_retail: 5 tasks from {root}"
    # the test checkout ships one tool's schema: the rest are shown with ours, and it says so
    assert lines[1].startswith("  no get_info() schema in the checkout for calculate, ")
    assert lines[-1] == f"wrote {tmp_path / 'evals' / EVAL_FILE}"
    code, out = _import(capsys, f"{tmp_path}/evals/../tau", tmp_path / "evals")
    assert code == 0, out
    assert out.splitlines()[0] == f"tau_bench_retail: 5 tasks from {root}"  # normalised
    assert out.splitlines()[-1] == f"replaced {tmp_path / 'evals' / EVAL_FILE}"
    assert repr(str(root)) in (tmp_path / "evals" / EVAL_FILE).read_text()


def test_a_table_that_is_not_json_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_checkout(tmp_path / "tau")
    (root / DATA / "products.json").write_text("{not json")
    code, out = _import(capsys, root, tmp_path / "evals")
    assert code == 2
    assert _error(out).startswith(f"{root / DATA / 'products.json'}: invalid JSON: ")


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_path_that_is_no_directory_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "nowhere"
    if kind == "file":
        path.write_text("x")
    code, out = _import(capsys, path, tmp_path / "evals")
    assert code == 2
    why = "no such directory" if kind == "missing" else "not a directory"
    assert _error(out) == f"{path}: {why}"


def test_the_eval_file_compiles_whatever_the_checkouts_path_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from agentic_eval.domains import unregister_domain

    root = write_checkout(tmp_path / 'odd\\N{x} """ dir')
    code, out = _import(capsys, shlex.quote(str(root)), tmp_path / "evals")
    assert code == 0, out
    written = tmp_path / "evals" / EVAL_FILE
    compile(written.read_text(), str(written), "exec")
    try:
        code = main(["list", "cases", str(written)])
        assert code == 0, capsys.readouterr()
    finally:
        unregister_domain("tau_bench_retail")


def test_a_relative_checkout_path_is_read_from_the_eval_files_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a one-file domain's ``cases=`` file is: the eval file means the same checkout from
    whatever folder the command runs in."""
    from agentic_eval.domains import unregister_domain

    write_checkout(tmp_path / "tau")
    evals = tmp_path / "suite" / "evals"
    evals.mkdir(parents=True)
    written = evals / "tau_eval.py"
    written.write_text(
        "from agentic_eval.domains.taubench import TauBenchDomain\n\n"
        "retail = TauBenchDomain('../../tau', 'retail')\n",
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    try:
        code = main(["list", "domains", str(written)])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert out.rstrip().endswith(f"from {(tmp_path / 'tau').resolve()}"), out
    finally:
        unregister_domain("tau_bench_retail")
