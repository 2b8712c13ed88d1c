"""A tau-bench environment (retail or airline) as a domain, read from a checkout the user points
at.

The database is the fixtures (each case gets a copy-on-write copy), the policy (``wiki.md``) is
the system prompt, our re-implemented tools are the tools, each task is a case whose simulated
user gets the task's instruction, and the answer key applies the gold actions. Every case is
judged by tau-bench's reward (``tau_reward``) beside the ``user_consent`` hard gate (the policy's
explicit confirmation, for every tool that changes the database).
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentic_eval.agent.tools import ToolRegistry
from agentic_eval.agent.user import USER_PROMPT, SimulatedUser
from agentic_eval.backends.base import ModelBackend
from agentic_eval.backends.scripted import ScriptedAgent
from agentic_eval.core.case import CaseSpec
from agentic_eval.domains.base import Domain, Mutant
from agentic_eval.domains.taubench import checkout
from agentic_eval.domains.taubench.airline_reads import AIRPORTS
from agentic_eval.domains.taubench.answer_key import KIND, TURN_BUDGET, build_case
from agentic_eval.domains.taubench.checkout import TauTask
from agentic_eval.domains.taubench.database import Pristine, TauDatabase
from agentic_eval.domains.taubench.judging import tau_reward_check
from agentic_eval.domains.taubench.people import gold_agent, scripted_customer
from agentic_eval.domains.taubench.toolset import consent_tools, implementations, registry
from agentic_eval.domains.taubench.user_prompt import read_user_prompt
from agentic_eval.tasks.spec import TaskKind


class TauFixtures(BaseModel):
    """The database as loaded from the checkout (tau-bench's ``load_data()``)."""

    model_config = ConfigDict(extra="forbid")

    tables: dict[str, dict[str, Any]]


class NoAnswer(BaseModel):
    """A tau-bench task has no submitted answer: the final database and the replies are judged."""


def _beside_caller(path: Path, domain: object) -> Path:
    """``path`` made absolute from the folder of the file whose code built ``domain`` (the
    first frame above its ``__init__`` and any subclass's), else from the working folder."""
    if path.is_absolute():
        return path
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    while frame is not None and frame.f_code.co_name == "__init__":
        if frame.f_locals.get("self") is not domain:
            break
        frame = frame.f_back
    name = frame.f_globals.get("__file__") if frame is not None else None
    base = Path(name).resolve().parent if isinstance(name, str) else Path.cwd()
    return (base / path).resolve()


class TauBenchDomain(Domain[TauDatabase]):
    """tau-bench's ``env`` environment (``retail`` or ``airline``), its ``split`` tasks, from
    the checkout at ``path``.

    Args:
        path: The checkout (a directory holding ``tau_bench/envs/<env>/``); a relative path
            is read from the folder of the file that builds the domain (an eval file's own
            folder, as its ``cases=`` file is), not from wherever the command runs.
        env: The environment: ``retail`` or ``airline``.
        split: The task file (retail: ``test``, ``train`` or ``dev``; airline: ``test``).
        name: The domain's name (default ``tau_bench_<env>``, with ``_<split>`` unless test).
        user_backend: A model to play the user (default: the scripted customer).
        user_model: The user model's name, sent to ``user_backend``.
        user_prompt: The user model's system prompt (``{instructions}`` and ``{stop}`` are
            filled in; default: tau-bench's own, read from the checkout's
            ``tau_bench/envs/user.py``, else :data:`~agentic_eval.agent.user.USER_PROMPT`).

    Raises:
        TauBenchError: When ``path`` is not a tau-bench checkout holding what is read.
    """

    max_turns = TURN_BUDGET

    def __init__(
        self,
        path: str | Path,
        env: str = "retail",
        split: str = "test",
        *,
        name: str | None = None,
        user_backend: ModelBackend | None = None,
        user_model: str = "",
        user_prompt: str | None = None,
    ) -> None:
        self.root = _beside_caller(Path(path).expanduser(), self)
        self.where = checkout.check_checkout(self.root, env, split)
        implementations(env)  # refuses an environment whose tools are not re-implemented
        if user_backend is not None and not user_model:
            raise ValueError("a model playing the user needs user_model=")
        self.env, self.split = env, split
        self.name = name or f"tau_bench_{env}" + ("" if split == "test" else f"_{split}")
        self.description = f"tau-bench {env}, {split} tasks, from {self.root}"
        self.system_prompt = checkout.read_policy(self.where)
        if user_prompt is None:
            user_prompt = read_user_prompt(self.root) or USER_PROMPT
        self.user_backend, self.user_model, self.user_prompt = user_backend, user_model, user_prompt

    @functools.cached_property
    def _raw(self) -> dict[str, bytes]:
        return checkout.read_tables(self.where, self.env)

    @functools.cached_property
    def _constants(self) -> dict[str, object]:
        """What the tools read from the checkout's tool code (the airline's airport list)."""
        airports = checkout.read_airports(self.where) if self.env == "airline" else None
        return {} if airports is None else {AIRPORTS: airports}

    @functools.cached_property
    def pristine(self) -> Pristine:
        """The database as loaded (shared, never changed: cases get copies)."""
        try:
            return Pristine(self._raw, self._constants)
        except ValueError as exc:
            where = self.where / "data"
            for table, raw in self._raw.items():  # name the file at fault
                try:
                    json.loads(raw)
                except ValueError:
                    where = where / f"{table}.json"
                    break
            raise checkout.TauBenchError(f"{where}: invalid JSON: {exc}") from None

    @functools.cached_property
    def tasks(self) -> list[TauTask]:
        """The split's tasks, as the checkout's task file writes them."""
        return checkout.read_tasks(self.where, self.split)

    @functools.cached_property
    def _cases(self) -> list[CaseSpec]:
        tools = implementations(self.env)
        consent = consent_tools(self.env)
        return [build_case(self.split, t, self.pristine, tools, consent) for t in self.tasks]

    @functools.cached_property
    def _tools(self) -> ToolRegistry[TauDatabase]:
        return registry(self.env, checkout.read_tool_infos(self.where))

    def fixtures(self) -> TauFixtures:
        """The database (built without validation: it is tau-bench's JSON as loaded)."""
        return TauFixtures.model_construct(tables=self.pristine.tables)

    def fixtures_sha256(self) -> str:
        """sha256 over the database files' bytes (each named), not their canonical JSON, and
        over the constants read from the tools' code, when there are any."""
        digest = hashlib.sha256()
        for table, raw in self._raw.items():
            digest.update(f"{table}:{len(raw)}:".encode())
            digest.update(raw)
        if self._constants:
            text = json.dumps(self._constants, sort_keys=True).encode()
            digest.update(f"constants:{len(text)}:".encode())
            digest.update(text)
        return digest.hexdigest()

    def build_cases(self) -> list[CaseSpec]:
        """The answer key: every task of the split, its expectations computed (once)."""
        return list(self._cases)

    def task(self, case_id: str) -> TauTask:
        """The tau-bench task of a case.

        Raises:
            KeyError: When no case has that id.
        """
        for case, task in zip(self._cases, self.tasks, strict=True):
            if case.id == case_id:
                return task
        raise KeyError(case_id)

    def make_env(self, case: CaseSpec) -> TauDatabase:
        """A fresh copy of the database."""
        del case
        return self.pristine.copy()

    def tools(self) -> ToolRegistry[TauDatabase]:
        """The environment's tools, shown as the checkout describes them."""
        return self._tools

    def task_kind(self, case: CaseSpec) -> TaskKind:
        """No submitted answer; tau-bench's reward (``user_consent`` is added as a hard gate)."""
        del case
        return TaskKind(KIND, NoAnswer, (tau_reward_check(),), submit=False)

    def user(self, case: CaseSpec) -> SimulatedUser:
        """The case's customer: the task's instruction, played by the scripted customer or by
        ``user_backend``."""
        instruction = self.task(case.id).instruction
        if self.user_backend is not None:
            return SimulatedUser(
                instructions=instruction,
                backend=self.user_backend,
                model=self.user_model,
                prompt=self.user_prompt,
            )
        return SimulatedUser(
            instructions=instruction, script=scripted_customer(instruction), name="tau-customer"
        )

    def agents(self) -> dict[str, ScriptedAgent]:
        """``gold`` (also ``reference``): replays the gold actions, asking before each change."""
        gold = gold_agent(self.task, consent_tools(self.env))
        return {"reference": gold, "gold": gold}

    def mutants(self) -> tuple[Mutant, ...]:
        """Unsafe agents earning tau-bench's full reward, caught by the ``user_consent`` gate:
        ``gold_without_asking`` (the gold changes, never asking) and ``gold_asking_vaguely``
        (asks for a yes without saying what it will change)."""
        consent = consent_tools(self.env)
        return (
            Mutant(
                "gold_without_asking",
                gold_agent(self.task, consent, ask=False),
                ("user_consent",),
                "makes the gold changes without the customer's confirmation",
            ),
            Mutant(
                "gold_asking_vaguely",
                gold_agent(self.task, consent, details=False),
                ("user_consent",),
                "asks for a yes without naming what it will change",
            ),
        )
