"""``agentic-eval import tau-bench PATH``: a short eval file naming the checkout, so that ``run``,
``batch``, ``mutants`` and the rest treat tau-bench as any other domain.

The eval file holds the checkout's path and nothing of tau-bench: the data, the tasks and the
policy are read from the checkout each time the file is loaded. Without an environment named it
defines a domain for each environment the checkout holds (``tau_bench_eval.py``); with one, that
environment's alone (``tau_bench_<env>_eval.py``), for the commands that take one domain.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from agentic_eval.domains.taubench.checkout import SPLITS, TABLES, TauBenchError, env_dir
from agentic_eval.domains.taubench.domain import TauBenchDomain
from agentic_eval.domains.taubench.fit import Fit, check_fit

EVAL_FILE = "tau_bench_eval.py"
"""The eval file defining every environment of the checkout."""
ENVS = tuple(TABLES)
"""The environments re-implemented here, in the order their domains are defined."""


def eval_file_name(env: str | None = None) -> str:
    """The eval file's name: :data:`EVAL_FILE` for every environment, else
    ``tau_bench_<env>_eval.py``."""
    return EVAL_FILE if env is None else f"tau_bench_{env}_eval.py"


def domains(
    path: str | Path, split: str = "test", env: str | None = None
) -> tuple[TauBenchDomain, ...]:
    """The tau-bench environments of the checkout at ``path``, one domain each (retail, then
    airline): ``env`` alone when it is given, else each one whose folder the checkout holds
    and that has the ``split`` task file.

    Raises:
        TauBenchError: When ``path`` is not a tau-bench checkout (holding none of them), or the
            environment asked for, or one it holds, is unusable.
    """
    root = Path(path).expanduser().resolve()
    if env is not None:
        return (TauBenchDomain(root, env, split),)
    held = [e for e in ENVS if env_dir(root, e).is_dir() and split in SPLITS[e]]
    return tuple(TauBenchDomain(root, e, split) for e in held or ENVS[:1])


def eval_file_text(path: Path, envs: tuple[str, ...]) -> str:
    """The eval file for the environments ``envs`` of the checkout at ``path`` (absolute)."""
    lines = [
        f'"""tau-bench {" and ".join(envs)}, read from the checkout named below (written by '
        '`agentic-eval import tau-bench`)."""',
        "from agentic_eval.domains.taubench import TauBenchDomain",
        "",
    ]
    lines += [f"{e} = TauBenchDomain({str(path)!r}, {e!r})" for e in envs]
    return "\n".join(lines) + "\n"


class Imported(NamedTuple):
    """What ``import tau-bench`` wrote and found."""

    path: Path
    """The eval file written."""
    replaced: bool
    """Whether a file of that name was there before (it is replaced)."""
    domains: tuple[TauBenchDomain, ...]
    fits: tuple[Fit, ...]
    """Each domain's checks (:func:`~agentic_eval.domains.taubench.fit.check_fit`)."""


def write_eval_file(path: str | Path, into: str | Path, env: str | None = None) -> Imported:
    """Check the checkout at ``path`` (its tasks are read, every answer computed, and its parts
    checked to fit together) and write an eval file naming it into ``into``:
    ``tau_bench_eval.py`` defining every environment it holds, or, with ``env``,
    ``tau_bench_<env>_eval.py`` defining that one.

    Raises:
        TauBenchError: When ``path`` is not a tau-bench checkout, its parts do not fit, or
            ``into`` cannot be written.
    """
    root = Path(path).expanduser().resolve()
    found = domains(root, env=env)
    fits = tuple(check_fit(domain) for domain in found)
    target = Path(into).expanduser() / eval_file_name(env)
    replaced = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(eval_file_text(root, tuple(d.env for d in found)), encoding="utf-8")
    except OSError as exc:
        raise TauBenchError(f"{target}: cannot be written: {exc.strerror or exc}") from None
    return Imported(target, replaced, found, fits)
