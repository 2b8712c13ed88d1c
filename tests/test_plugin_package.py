"""A domain packaged outside this repository, as a new user would do it from the README.

The package in tests/plugin_pkg is really built and installed (pip, offline, into a private
site folder put on PYTHONPATH), then the CLI runs in a fresh process: a bare ``run`` still
replays every recorded domain and says in one line which domain has nothing recorded; a plugin
that fails to import and an entry point naming a class are reported, not fatal; the new domain
records and replays from its own folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = Path(__file__).resolve().parent / "plugin_pkg"
EXE = Path(sys.executable).parent / "agentic-eval"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("plugin")
    src = work / "pkg"
    shutil.copytree(PACKAGE, src)
    target = work / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(target),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert list(target.glob("acme_eval_domains-*.dist-info/entry_points.txt"))
    return target


def _cli(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "AGENTIC_EVAL_HOME": str(tmp_path / "home"),
        "COLUMNS": "200",
    }
    return subprocess.run(
        [str(EXE), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_bare_run_replays_what_exists_and_reports_plugins(site: Path, tmp_path: Path) -> None:
    out = _cli(site, tmp_path, "run", "--json")
    assert out.returncode == 0, out.stderr
    runs = json.loads(out.stdout)
    assert {r["scorecard"]["domain"] for r in runs["runs"]} >= {"retail_ops"}
    assert all(r["replay"]["reproduced"] for r in runs["runs"])
    assert runs["not_recorded"] == ["acme_refunds"]
    err = out.stderr
    assert "acme_refunds: skipped: nothing recorded under evals/recordings" in err
    assert "domain plugin 'acme_broken' failed to load and is skipped: cannot import" in err
    assert "acme_dependency_that_is_not_installed" in err
    assert "domain plugin 'acme_class' failed to load" in err
    assert "the class acme_eval_domains.AcmeRefunds" in err
    assert "Traceback" not in err


def test_a_broken_plugin_does_not_stop_other_domains(site: Path, tmp_path: Path) -> None:
    out = _cli(site, tmp_path, "run", "retail_ops", "--agent", "reference")
    assert out.returncode == 0, out.stderr
    assert "34/34 reproduced" in out.stdout
    named = _cli(site, tmp_path, "run", "acme_broken")
    assert named.returncode == 2 and len(named.stderr.strip().splitlines()) == 1
    assert "domain plugin 'acme_broken' failed to load" in named.stderr


def test_the_packaged_domain_records_and_replays_from_its_own_folder(
    site: Path, tmp_path: Path
) -> None:
    rec = str(tmp_path / "acme-recordings")
    listed = _cli(site, tmp_path, "list", "domains")
    assert "acme_refunds\t2 cases" in listed.stdout
    out = _cli(
        site,
        tmp_path,
        "run",
        "acme_refunds",
        "--backend",
        "scripted",
        "--record",
        "--recordings",
        rec,
    )
    assert out.returncode == 0, out.stderr
    replay = _cli(site, tmp_path, "run", "acme_refunds", "--recordings", rec, "--json")
    assert replay.returncode == 0, replay.stderr
    (run,) = json.loads(replay.stdout)["runs"]
    assert run["replay"]["samples_reproduced"] == 2 and run["scorecard"]["totals"]["passed"] == 2
