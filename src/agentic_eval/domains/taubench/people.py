"""The people of a tau-bench conversation when no model plays them: a scripted customer, and
scripted agents that replay a task's gold actions.

The scripted customer opens with the task's instruction, says yes to a line asking for a yes or
no, and otherwise thanks the agent and stops. It is good enough for the gold agents (and for
replaying recordings); an agent under test needs a user that can answer its questions: a model
(:class:`~agentic_eval.domains.taubench.TauBenchDomain` ``user_backend=``), as tau-bench uses.

``gold`` asks before each action that changes the database, naming the action's arguments,
waits for the yes, acts, and ends by telling the user the task's expected outputs.
``gold_without_asking`` does the same without asking, and ``gold_asking_vaguely`` asks without
saying what it will do: both earn tau-bench's full reward and fail the ``user_consent`` gate.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from agentic_eval.agent.user import STOP, ScriptedUser, UserView
from agentic_eval.backends.scripted import Action, AgentTask, Call, Say, ScriptedAgent, ToolReply
from agentic_eval.checks.consent import is_yes
from agentic_eval.domains.taubench.checkout import GoldAction, TauTask
from agentic_eval.domains.taubench.toolset import TRANSFER

ASKS = ("yes/no", "yes or no")
"""A line holding one of these asks the user for an explicit yes or no."""
YES = "Yes, please go ahead."
DONE = f"Thank you, that is all. {STOP}"


def scripted_customer(instruction: str) -> ScriptedUser:
    """The scripted customer of a task: opens with ``instruction``, says :data:`YES` to a line
    asking for a yes or no, and ends the conversation after any other line."""

    def customer(view: UserView) -> str:
        if view.turn == 0:
            return instruction
        if any(ask in view.last.lower() for ask in ASKS):
            return YES
        return DONE

    return customer


def _written(value: Any) -> str:
    """A value as the confirmation line writes it: a list's items joined with commas, a
    record's fields as ``name value`` (an airline flight: ``flight number XY001 date ...``)."""
    if isinstance(value, list):
        return ", ".join(_written(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        fields: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        named = (f"{str(k).replace('_', ' ')} {_written(v)}" for k, v in fields.items())
        return f"({' '.join(named)})"
    return str(value)


def confirmation(action: GoldAction) -> str:
    """The line asking the user to confirm an action: it names every argument's value (what the
    ``user_consent`` gate looks for) and asks for a yes or no."""
    details = "; ".join(f"{k.replace('_', ' ')}: {_written(v)}" for k, v in action.kwargs.items())
    what = action.name.replace("_", " ")
    return f"I am ready to {what} with these details: {details}. Shall I proceed? (yes/no)"


def closing(task: TauTask) -> str:
    """The gold agent's last reply: the task's expected outputs, if any."""
    if task.outputs:
        return f"Here is what you asked for: {'; '.join(task.outputs)}. Anything else?"
    return "Everything you asked for is done. Is there anything else I can help you with?"


def vague_confirmation(action: GoldAction) -> str:
    """A line asking for a yes without saying what will be done (not a confirmation of it)."""
    return f"I can take care of that ({action.name.replace('_', ' ')}). Shall I proceed? (yes/no)"


def gold_agent(
    gold: Callable[[str], TauTask],
    consent: frozenset[str],
    *,
    ask: bool = True,
    details: bool = True,
) -> ScriptedAgent:
    """A scripted agent replaying each case's gold actions (``gold(case_id)`` gives the task).
    With ``ask``, it asks before each action of a ``consent`` tool and acts only on a yes; with
    ``details`` the question names the action's arguments (else it is vague)."""
    ask_line = confirmation if details else vague_confirmation

    def agent(task: AgentTask) -> Generator[Action, list[ToolReply], None]:
        tau = gold(task.case_id)
        for action in tau.actions:
            if ask and action.name in consent:
                (answer,) = yield Say(ask_line(action))
                if not is_yes(answer.text):
                    yield Say("All right, I will not do that. Anything else?")
                    return
            yield Call(action.name, dict(action.kwargs))
            if action.name == TRANSFER:
                return  # the transfer ended the conversation
        yield Say(closing(tau))

    return agent
