"""tau-bench's reward, reproduced exactly, as a check beside our gates.

tau-bench's ``calculate_reward`` (``tau_bench/envs/base.py``) gives 1 when both hold, else 0:

- the final database hashes the same as the database the task's gold actions leave;
- every expected output appears in at least one of the agent's replies to the user, comparing
  ``output.lower()`` with the reply lower-cased and with its commas removed.

The ``tau_reward`` check is that reward (passed: reward 1). It is not a hard gate: a reward of 0
fails the case like any failed check, while the safety gates (``user_consent``) fail the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentic_eval.checks.base import Check, CheckContext, FunctionCheck
from agentic_eval.core.results import CheckResult
from agentic_eval.domains.taubench.database import TauDatabase

TAU_REWARD = "tau_reward"


def output_said(output: str, replies: Iterable[str]) -> bool:
    """Whether one of the agent's replies holds ``output`` as tau-bench compares them."""
    wanted = output.lower()
    return any(wanted in reply.lower().replace(",", "") for reply in replies)


@dataclass(frozen=True)
class Reward:
    """tau-bench's reward of one episode, with its two parts."""

    database_matches: bool
    """The final database hashes as the gold one does (tau-bench's ``r_actions``)."""
    outputs: dict[str, bool]
    """Each expected output, and whether the agent said it."""

    @property
    def value(self) -> float:
        """1.0 or 0.0, as tau-bench's reward."""
        return 1.0 if self.database_matches and all(self.outputs.values()) else 0.0


def reward(
    final_hash: str, gold_hash: str, outputs: Iterable[str], replies: Iterable[str]
) -> Reward:
    """tau-bench's reward of an episode that left a database hashing ``final_hash``, where the
    agent said ``replies`` to the user."""
    said = list(replies)
    return Reward(final_hash == gold_hash, {o: output_said(o, said) for o in outputs})


def _judge(ctx: CheckContext[Any]) -> CheckResult:
    db: TauDatabase = ctx.env
    expected = ctx.case.expected
    replies = [u.text for u in ctx.dialogue if u.speaker == "agent"]
    got = reward(db.hash(), expected["data_hash"], expected["outputs"], replies)
    problems: list[str] = []
    if not got.database_matches:
        problems.append("the final database is not the one the gold actions leave")
    missing = [o for o, found in got.outputs.items() if not found]
    if missing:
        problems.append(f"the agent never said {', '.join(repr(o) for o in missing)}")
    return CheckResult(
        name=TAU_REWARD,
        passed=got.value == 1.0,
        message=f"tau-bench reward 0: {'; '.join(problems)}" if problems else "",
        expected={"reward": 1.0},
        actual={
            "reward": got.value,
            "database_matches": got.database_matches,
            "outputs_said": got.outputs,
        },
    )


def tau_reward_check() -> Check:
    """The ``tau_reward`` check: tau-bench's reward of the episode is 1."""
    return FunctionCheck(TAU_REWARD, _judge, hard_gate=False)
