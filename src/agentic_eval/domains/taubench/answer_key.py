"""The answer key: each tau-bench task as a case, its expectations computed by applying the
task's gold actions with our tools to a fresh copy of the database.

As tau-bench's ``calculate_reward`` does, every gold action but the terminating one
(``transfer_to_human_agents``) is applied in order, an action whose tool refuses or raises
changes what it changed before failing, and an unknown action changes nothing. The expected
final database is kept as tau-bench's hash of it; the expected outputs are the task's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.taubench.checkout import TauTask
from agentic_eval.domains.taubench.database import Pristine, TauDatabase
from agentic_eval.domains.taubench.toolset import TRANSFER

KIND = "tau_bench"
TURN_BUDGET = 30
"""tau-bench's step budget (``max_num_steps``), our turn budget for a tau-bench task."""


def apply_gold(
    pristine: Pristine,
    tools: Mapping[str, Callable[..., str]],
    task: TauTask,
    refused: list[tuple[str, str]] | None = None,
) -> TauDatabase:
    """The database the task's gold actions leave (a fresh copy of ``pristine``); each action
    its tool refuses (an ``Error:`` answer) is added to ``refused`` as (tool, answer)."""
    db = pristine.copy()
    for action in task.actions:
        if action.name == TRANSFER or action.name not in tools:
            continue
        answer = tools[action.name](db, **action.kwargs)
        if refused is not None and answer.startswith("Error"):
            refused.append((action.name, answer))
    return db


def case_id(split: str, index: int) -> str:
    """A task's case id: its split and index (``test-007``)."""
    return f"{split}-{index:03d}"


def gold_turns(task: TauTask, consent: frozenset[str]) -> int:
    """The model turns the gold agent takes: one per action, one per confirmation asked, and
    the closing reply."""
    return len(task.actions) + sum(a.name in consent for a in task.actions) + 1


def build_case(
    split: str,
    task: TauTask,
    pristine: Pristine,
    tools: Mapping[str, Callable[..., str]],
    consent: frozenset[str],
) -> CaseSpec:
    """One task as a case: the expected database hash and outputs, and the gold actions (which
    the gold agent replays; an agent under test never sees them)."""
    needed = gold_turns(task, consent)
    return CaseSpec(
        id=case_id(split, task.index),
        kind=KIND,
        instruction="Help the user who opens the conversation, following the policy.",
        inputs={},
        expected={
            "data_hash": apply_gold(pristine, tools, task).hash(),
            "outputs": list(task.outputs),
            "user_id": task.user_id,
            "gold_actions": [{"name": a.name, "kwargs": a.kwargs} for a in task.actions],
        },
        hard_gate=any(a.name in consent for a in task.actions),
        max_turns=needed if needed > TURN_BUDGET else None,
    )
