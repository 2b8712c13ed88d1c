"""tau-bench's own user-simulator prompt, read from the checkout for a model playing the user:
on a hand-written ``user.py`` of tau-bench's shape (not tau-bench's text), and, opt-in, equal to
what a real checkout's ``LLMUserSimulationEnv`` builds for every task."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_eval.agent.user import USER_PROMPT, SimulatedUser
from agentic_eval.backends.scripted import ScriptedBackend
from agentic_eval.domains.taubench import TauBenchDomain
from agentic_eval.domains.taubench.user_prompt import read_user_prompt
from taubench_checkout import write_checkout

SHAPED = '''
from typing import Optional


class BaseUserSimulationEnv:
    pass


class LLMUserSimulationEnv(BaseUserSimulationEnv):
    def build_system_prompt(self, instruction: Optional[str]) -> str:
        instruction_display = (
            ("\\n\\nInstruction: " + instruction + "\\n")
            if instruction is not None
            else ""
        )
        return f"""You play a shopper.{instruction_display}
Rules:
- One line at a time.
- Say '###STOP###' when done."""
'''


def _user_file(root: Path, text: str) -> Path:
    path = root / "tau_bench" / "envs" / "user.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return root


def test_the_prompt_is_read_as_a_template(tmp_path: Path) -> None:
    prompt = read_user_prompt(_user_file(tmp_path, SHAPED))
    assert prompt == (
        "You play a shopper.\n\nInstruction: {instructions}\n\nRules:\n- One line at a time.\n"
        "- Say '###STOP###' when done."
    )


@pytest.mark.parametrize(
    "text",
    [
        "",  # no simulator
        SHAPED.replace("{instruction_display}", "{instruction_display!r}"),
        SHAPED.replace("{instruction_display}", "{other}"),
        SHAPED.replace('return f"""', 'return """'),  # not an f-string
        "def broken(:\n",
    ],
    ids=["empty", "conversion", "other-name", "plain-string", "syntax-error"],
)
def test_a_prompt_built_otherwise_is_not_guessed(tmp_path: Path, text: str) -> None:
    assert read_user_prompt(_user_file(tmp_path, text)) is None


def test_a_model_user_is_told_the_checkouts_prompt_and_a_scripted_one_is_not(
    tmp_path: Path,
) -> None:
    root = _user_file(write_checkout(tmp_path / "tb"), SHAPED)
    backend = ScriptedBackend("u", lambda task: iter(()))
    domain = TauBenchDomain(root, user_backend=backend, user_model="m", name="tb_user_a")
    case = domain.build_cases()[0]
    user = domain.user(case)
    instruction = domain.task(case.id).instruction
    assert user.system() == read_user_prompt(root).replace("{instructions}", instruction)  # type: ignore[union-attr]
    scripted = TauBenchDomain(root, name="tb_user_b").user(case)
    assert scripted.script is not None and scripted.prompt == USER_PROMPT
    plain = TauBenchDomain(write_checkout(tmp_path / "plain"), user_backend=backend, user_model="m")
    assert plain.user_prompt == USER_PROMPT  # no user.py: our own prompt
    assert isinstance(user, SimulatedUser)


THEIRS = r"""
import json, sys, types
sys.path.insert(0, sys.argv[1])
sys.modules["litellm"] = types.SimpleNamespace(completion=None)
from tau_bench.envs.user import LLMUserSimulationEnv
instructions = json.loads(sys.stdin.read())
env = LLMUserSimulationEnv.__new__(LLMUserSimulationEnv)  # no model call: the prompt alone
print(json.dumps([env.build_system_prompt(i) for i in instructions]))
"""


@pytest.mark.tau_bench
def test_a_real_checkouts_user_prompt_is_tau_benchs_own_for_every_task() -> None:
    path = os.environ.get("TAU_BENCH_PATH")
    if not path:
        pytest.skip("set TAU_BENCH_PATH to a tau-bench checkout")
    backend = ScriptedBackend("u", lambda task: iter(()))
    for env in ("retail", "airline"):
        domain = TauBenchDomain(path, env, user_backend=backend, user_model="m")
        cases = domain.build_cases()
        ours = [domain.user(c).system() for c in cases]
        instructions = [domain.task(c.id).instruction for c in cases]
        theirs = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(THEIRS), path],
            input=json.dumps(instructions),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert ours == json.loads(theirs.stdout), env
        print(f"{env}: the user prompt equals tau-bench's own on {len(cases)} tasks")
