"""Whether a checkout's parts fit together, checked by ``import tau-bench`` before it writes the
eval file: the task file holds tasks, the database fits them (a gold action that changes the
database is refused by its tool now and then in tau-bench's own data; most of them refused means
the database is not the one the tasks were written for), and every tool shows the agent
tau-bench's own schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic_eval.domains.taubench.answer_key import apply_gold
from agentic_eval.domains.taubench.checkout import TauBenchError, read_tool_infos
from agentic_eval.domains.taubench.domain import TauBenchDomain
from agentic_eval.domains.taubench.toolset import consent_tools, implementations

MOST_REFUSED = 0.5
"""More than this share of the gold actions that change the database refused: not a fit (the
real checkout's: 4 of 178 retail, 0 of 56 airline)."""


@dataclass(frozen=True)
class Fit:
    """What the import found."""

    tasks: int
    changes: int
    """Gold actions that change the database (over every task)."""
    refused: tuple[tuple[str, str, str], ...]
    """(case id, tool, answer) of each such action its tool refused."""
    unshown: tuple[str, ...]
    """Tools the checkout gives no schema of (the agent sees this package's own)."""

    def notes(self) -> list[str]:
        """Lines worth telling the user, beside the task count."""
        lines: list[str] = []
        if self.refused:
            lines.append(
                f"{len(self.refused)} of {self.changes} gold actions that change the database "
                "are refused by their tool (tau-bench's own data has such tasks); the answer key "
                "keeps them as tau-bench does"
            )
        if self.unshown:
            lines.append(
                f"no get_info() schema in the checkout for {', '.join(self.unshown)}: the agent "
                "is shown this package's description of those tools"
            )
        return lines


def check_fit(domain: TauBenchDomain) -> Fit:
    """Check that the domain's checkout fits together.

    Raises:
        TauBenchError: The task file holds no task, or most gold actions that change the
            database are refused (naming the first).
    """
    tasks_file = domain.where / f"tasks_{domain.split}.py"
    if not domain.tasks:
        raise TauBenchError(f"{tasks_file}: holds no task")
    tools, changing = implementations(domain.env), consent_tools(domain.env)
    refused: list[tuple[str, str, str]] = []
    changes = 0
    for case, task in zip(domain.build_cases(), domain.tasks, strict=True):
        found: list[tuple[str, str]] = []
        apply_gold(domain.pristine, tools, task, found)
        changes += sum(a.name in changing for a in task.actions)
        refused += [(case.id, name, answer) for name, answer in found if name in changing]
    if changes and len(refused) > MOST_REFUSED * changes:
        case_id, name, answer = refused[0]
        raise TauBenchError(
            f"{domain.where / 'data'}: does not fit the tasks of {tasks_file.name}: "
            f"{len(refused)} of {changes} gold actions that change the database are refused "
            f"(task {case_id}: {name}: {answer})"
        )
    infos = read_tool_infos(domain.where)
    unshown = tuple(sorted(name for name in tools if name not in infos))
    return Fit(len(domain.tasks), changes, tuple(refused), unshown)
