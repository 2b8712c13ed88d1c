"""`run` is a stored plan: `run --resume RUN_ID` finishes a run that was stopped or killed.

Finished samples are not run again, none is counted twice, the samples that were in flight run
again, and the resumed run's scorecard (rebuilt from the store's rows) equals that of an
uninterrupted run of the same plan: for scripted and recorded runs and for a replay.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from agentic_eval.cli.main import main
from agentic_eval.store import Store
from agentic_eval.store.models import EvalRun, EvalSample

EXE = Path(sys.executable).parent / "agentic-eval"
REPO = Path(__file__).resolve().parent.parent
LONG = ("run", "retail_ops", "--backend", "scripted", "--samples", "15", "--no-history")


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AGENTIC_EVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTIC_EVAL_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.delenv("AGENTIC_EVAL_DATABASE_URL", raising=False)
    yield tmp_path


def _rows(store: Store, run_id: str | None = None) -> list[tuple[str, int]]:
    try:
        with store.engine.connect() as conn:
            stmt = select(EvalSample.case_id, EvalSample.sample)
            if run_id is not None:
                stmt = stmt.where(EvalSample.run_id == run_id)
            return [(c, s) for c, s in conn.execute(stmt)]
    except Exception:  # the tables are not there yet
        return []


def _run_row(store: Store, run_id: str) -> EvalRun:
    run = store.run(run_id)
    assert run is not None
    return run


def _start(args: tuple[str, ...], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(EXE), *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _stop_midway(
    proc: subprocess.Popen[bytes], store: Store, sig: int, at_least: int = 40
) -> tuple[str, int]:
    """Send ``sig`` once the run has stored ``at_least`` samples (and before it has them all);
    returns the run id and how many it had then."""
    deadline = time.monotonic() + 60
    while len(_rows(store)) < at_least:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no sample stored within 60 s"
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    (run,) = store.runs()
    return run.id, len(_rows(store, run.id))


def _uninterrupted(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0, capsys.readouterr().err
    capsys.readouterr()
    store = Store()
    newest = store.runs(1)[0]
    store.close()
    assert newest.status == "finished" and newest.scorecard_sha256
    return newest.scorecard_sha256


def test_a_killed_scripted_run_resumes_to_the_uninterrupted_scorecard(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store()
    proc = _start(LONG, dict(os.environ))
    run_id, before = _stop_midway(proc, store, signal.SIGKILL)
    planned = _run_row(store, run_id).planned_samples
    assert planned == 34 * 15 and 0 < before < planned
    assert _run_row(store, run_id).status == "running"  # killed: nobody finished it

    assert main(["run", "--resume", run_id]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    keys = _rows(store, run_id)
    assert len(keys) == len(set(keys)) == planned  # none lost, none twice
    resumed = _run_row(store, run_id)
    assert resumed.status == "finished" and resumed.samples == planned
    assert "abandoned" not in err  # its own process was gone: resumable at once

    expected = _uninterrupted(capsys, *LONG)
    assert resumed.scorecard_sha256 == expected
    store.close()


def test_sigint_marks_the_run_interrupted_and_names_the_resume_command(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store()
    proc = _start(LONG, dict(os.environ))
    deadline = time.monotonic() + 60
    while len(_rows(store)) < 40:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    (run,) = store.runs()
    assert run.status == "interrupted"
    assert f"agentic-eval run --resume {run.id}" in err.decode()
    stored = len(_rows(store, run.id))
    assert stored < run.planned_samples

    assert main(["run", "--resume", run.id]) == 0
    capsys.readouterr()
    assert sorted(_rows(store, run.id)) == sorted(set(_rows(store, run.id)))
    assert _run_row(store, run.id).samples == run.planned_samples
    store.close()


def test_a_recorded_run_resumed_writes_the_same_recording(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec, whole = home / "rec", home / "whole"
    args = (*LONG[:4], "--samples", "6", "--no-history", "--record")
    store = Store()
    proc = _start((*args, "--recordings", str(rec)), dict(os.environ))
    run_id, _ = _stop_midway(proc, store, signal.SIGKILL, at_least=30)
    folder = rec / "retail_ops" / "reference"
    assert not (folder / "scorecard.json").exists()  # written when the run is complete

    assert main(["run", "--resume", run_id]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main([*args, "--recordings", str(whole)]) == 0
    capsys.readouterr()
    ours = (folder / "scorecard.json").read_bytes()
    assert ours == (whole / "retail_ops" / "reference" / "scorecard.json").read_bytes()
    names = {p.name for p in folder.iterdir()}
    assert names == {p.name for p in (whole / "retail_ops" / "reference").iterdir()}
    # and the resumed recording replays, reproduced
    assert main(["run", "retail_ops", "--recordings", str(rec), "--no-history"]) == 0
    store.close()


def test_an_interrupted_replay_resumes_reproduced(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = home / "rec"
    shutil.copytree(REPO / "evals" / "recordings" / "retail_ops", rec / "retail_ops")
    store = Store()
    # a replay is fast: stop it from inside, after its first samples
    from agentic_eval.cli import execute

    calls = {"n": 0}
    original = execute.Stopper.__call__

    def stop_after_five(self: execute.Stopper) -> bool:
        calls["n"] += 1
        return calls["n"] > 5 or original(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(execute.Stopper, "__call__", stop_after_five)
        code = main(["run", "retail_ops", "--agent", "reference", "--recordings", str(rec)])
    err = capsys.readouterr().err
    assert code != 0
    (run,) = store.runs()
    assert run.status == "interrupted" and 0 < len(_rows(store, run.id)) < run.planned_samples
    assert f"agentic-eval run --resume {run.id}" in err

    assert main(["run", "--resume", run.id]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    done = _run_row(store, run.id)
    assert done.status == "finished" and done.reproduced is True
    assert done.samples == done.planned_samples == 34
    assert "34/34" in out
    store.close()


def test_resume_refuses_what_it_cannot_finish(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--resume", "no-such-run"]) == 2
    assert "no run no-such-run in the store" in capsys.readouterr().err

    assert main(["run", "retail_ops", "--backend", "scripted", "--cases", "match-001"]) == 0
    capsys.readouterr()
    store = Store()
    (done,) = store.runs()
    assert main(["run", "--resume", done.id]) == 2
    assert "is finished: nothing to resume" in capsys.readouterr().err

    assert main(["run", "--resume", done.id, "--samples", "3"]) == 2
    assert "drop --samples" in capsys.readouterr().err

    # a run whose process is alive (this one) with a fresh heartbeat is not taken over
    with store.engine.begin() as conn:
        from sqlalchemy import update

        conn.execute(update(EvalRun).where(EvalRun.id == done.id).values(status="running"))
    assert main(["run", "--resume", done.id]) == 2
    assert "is running in" in capsys.readouterr().err
    store.close()


def test_a_stopped_run_is_filed_in_the_history_once_resumed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store()
    args = tuple(a for a in LONG if a != "--no-history")
    proc = _start(args, dict(os.environ))
    run_id, _ = _stop_midway(proc, store, signal.SIGINT)
    assert _run_row(store, run_id).status == "interrupted"
    history = home / "history" / "retail_ops"
    assert not history.exists() or not list(history.glob("*.json"))  # nothing filed yet
    assert store.history_texts([run_id]) == {}

    assert main(["run", "--resume", run_id]) == 0
    capsys.readouterr()
    (entry,) = history.glob("*.json")
    assert run_id in entry.name and '"status":"finished"' in entry.read_text().replace(" ", "")
    assert run_id in store.history_texts([run_id])
    assert main(["history", "retail_ops"]) == 0
    err = capsys.readouterr().err
    assert "differs" not in err and "warning" not in err, err
    store.close()


def test_a_write_killed_midway_leaves_a_temporary_file_the_next_recording_removes(
    tmp_path: Path,
) -> None:
    """A SIGKILL between writing a transcript's temporary file and renaming it leaves that file
    behind; the next recording into the folder removes it, but never a live writer's, nor a
    file of another shape."""
    import subprocess
    import sys

    from agentic_eval.recordings.files import remove_orphaned_temp_files, write_atomic

    folder = tmp_path / "retail_ops" / "reference"
    folder.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    gone = int(done.stdout)  # a process that has exited
    orphan = folder / f".gate-001@1.json.{gone}.ab12_x.tmp"
    live = folder / f".gate-002.json.{os.getpid()}.cd34.tmp"
    other = folder / ".notes.tmp"
    for path in (orphan, live, other):
        path.write_text("{")
    write_atomic(folder / "gate-003.json", "{}")
    assert sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp")) == sorted(
        [orphan.name, live.name, other.name]
    )  # writing does not sweep: the recording backend does, once per folder
    assert remove_orphaned_temp_files(folder) == [orphan]
    assert live.exists() and other.exists() and not orphan.exists()
