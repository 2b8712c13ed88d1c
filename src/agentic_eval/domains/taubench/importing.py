"""``agentic-eval import tau-bench PATH``: a two-line eval file naming the checkout, so that
``run``, ``batch``, ``mutants`` and the rest treat tau-bench as any other domain.

The eval file holds the checkout's path and nothing of tau-bench: the data, the tasks and the
policy are read from the checkout each time the file is loaded.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.domains.taubench.checkout import TauBenchError
from agentic_eval.domains.taubench.domain import TauBenchDomain

EVAL_FILE = "tau_bench_eval.py"


def domains(path: str | Path, split: str = "test") -> tuple[TauBenchDomain, ...]:
    """The tau-bench environments of the checkout at ``path`` that are re-implemented here
    (retail; airline is not yet), one domain each.

    Raises:
        TauBenchError: When ``path`` is not a tau-bench checkout.
    """
    return (TauBenchDomain(path, "retail", split),)


def eval_file_text(path: Path) -> str:
    """The eval file for the checkout at ``path`` (absolute)."""
    return (
        f'"""tau-bench retail, read from {path} (written by `agentic-eval import tau-bench`)."""\n'
        "from agentic_eval.domains.taubench import TauBenchDomain\n\n"
        f"retail = TauBenchDomain({str(path)!r})\n"
    )


def write_eval_file(path: str | Path, into: str | Path) -> tuple[Path, TauBenchDomain]:
    """Check the checkout at ``path`` (its tasks are read and every answer computed) and write
    ``<into>/tau_bench_eval.py`` naming it.

    Returns:
        The file written, and the domain it defines.

    Raises:
        TauBenchError: When ``path`` is not a tau-bench checkout, or ``into`` cannot be written.
    """
    root = Path(path).expanduser().absolute()
    (domain,) = domains(root)
    domain.build_cases()
    target = Path(into).expanduser() / EVAL_FILE
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(eval_file_text(root), encoding="utf-8")
    except OSError as exc:
        raise TauBenchError(f"{target}: cannot be written: {exc.strerror or exc}") from None
    return target, domain
