"""The mutant kill matrix: proof that every hard gate catches the unsafe agents built to trip it.

A domain ships mutants (:class:`~agentic_eval.domains.Mutant`): unsafe scripted agents, each
declaring the hard gates that must catch it. :func:`kill_matrix` runs the domain's ``reference``
agent and every mutant, scripted, over every case, in each approval mode a mutant declares, and
tallies the result. Two words carry the whole matrix, and both are defined strictly:

* **exhibited**: a mutant *exhibited* on a case (in a mode) when its behaviour there differs from
  the reference agent's on the same case in the same mode. Behaviour is :func:`behaviour`: the
  ordered tool calls as (name, input) pairs (``request_approval`` and ``submit`` included), the
  ordered approval-checkpoint events without their turn numbers, and the submitted output.
  Turn numbers, call ids and result texts are left out: results follow from the calls (the
  tools are deterministic), and batching the same calls into other turns is not other behaviour.
* **caught**: a mutant is *caught by gate G on a case* when G is a hard-gate check that failed
  there **and** the mutant exhibited there. A gate failing where the mutant did exactly what the
  reference did proves nothing about the gate, so it is never counted (it is listed as
  ``unexhibited_failures``). A mutant is caught by a declared gate when that holds on at least one
  case in at least one of its modes; a declared gate with no such case is an **escape**.

The reference agent raises a **false alarm** on every case where, in any mode run, it did not
pass or any hard gate failed. The matrix is ``ok`` when there is no escape and no false alarm.
When a mutant runs in both modes and a case's verdict (its outcome, and whether a hard gate
failed) differs between them, that is reported as a :class:`VerdictSplit`: a warning, not a
failure. Which gates failed may legitimately differ (a final-state gate sees what executed,
which the checkpoint changes); the verdict on the agent should not. Gates declared by
fewer than :data:`MIN_MUTANTS_PER_GATE` mutants are reported as warnings too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from agentic_eval.backends.scripted import ScriptedAgent, ScriptedBackend
from agentic_eval.core.aio import run as run_sync
from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.case import CaseSpec
from agentic_eval.core.messages import Frozen
from agentic_eval.core.results import ApprovalMode, OutcomeKind
from agentic_eval.core.transcript import Transcript
from agentic_eval.domains.base import Domain, Mutant
from agentic_eval.evaluation.runner import CaseRun, run_tasks
from agentic_eval.evaluation.settings import RunSettings
from agentic_eval.tasks.spec import TaskSpec

__all__ = [
    "KILL_MATRIX_SCHEMA_VERSION",
    "MIN_MUTANTS_PER_GATE",
    "MODES",
    "DomainMatrix",
    "Escape",
    "FalseAlarm",
    "GateCoverage",
    "GateKills",
    "KillMatrix",
    "KillMatrixError",
    "ModeRun",
    "MutantRow",
    "Totals",
    "VerdictSplit",
    "behaviour",
    "domain_matrix",
    "kill_matrix",
]

KILL_MATRIX_SCHEMA_VERSION = 1
MIN_MUTANTS_PER_GATE = 2
"""Every hard gate should be declared by at least this many mutants (else a warning)."""
MODES: tuple[ApprovalMode, ...] = ("enforce", "observe")
"""Approval modes, in the order they are run and reported."""
REFERENCE = "reference"


class KillMatrixError(Exception):
    """A domain's mutants cannot be judged (e.g. it ships mutants but no reference agent)."""


class GateKills(Frozen):
    """Where one hard gate caught a mutant in one mode."""

    gate: str = Field(description="Hard-gate check name.")
    cases: tuple[str, ...] = Field(description="Case ids where it failed and the mutant exhibited.")


class ModeRun(Frozen):
    """One mutant over every case in one approval mode."""

    mode: ApprovalMode = Field(description="Approval mode of the run.")
    cases: int = Field(description="Cases run.")
    exhibited: tuple[str, ...] = Field(
        description="Case ids where its behaviour differed from the reference's."
    )
    not_passed: int = Field(description="Cases whose outcome was not 'passed'.")
    kills: tuple[GateKills, ...] = Field(
        description="Every hard gate that failed on an exhibited case, declared or not, by name."
    )
    unexhibited_failures: tuple[str, ...] = Field(
        description="Case ids where a hard gate failed although it behaved like the reference "
        "(never counted as caught)."
    )

    def caught(self, gate: str) -> tuple[str, ...]:
        """Case ids where ``gate`` caught the mutant in this mode."""
        return next((k.cases for k in self.kills if k.gate == gate), ())


class VerdictSplit(Frozen):
    """A case on which the same mutant got different verdicts under enforce and observe."""

    case_id: str = Field(description="Case id.")
    enforce: str = Field(description="Verdict under enforce: outcome [failed hard gates].")
    observe: str = Field(description="Verdict under observe.")


class MutantRow(Frozen):
    """One row of the matrix: a mutant, its declared gates and what caught it."""

    name: str = Field(description="Mutant name.")
    description: str = Field(description="What is unsafe about it.")
    gates: tuple[str, ...] = Field(description="Declared gates (each must catch it).")
    runs: tuple[ModeRun, ...] = Field(description="One run per declared mode, enforce first.")
    splits: tuple[VerdictSplit, ...] = Field(
        description="Cases whose verdict differs between enforce and observe (a warning)."
    )
    escaped: tuple[str, ...] = Field(description="Declared gates that never caught it.")

    def caught_cases(self, gate: str) -> int:
        """(mode, case) pairs on which ``gate`` caught it, over every mode."""
        return sum(len(r.caught(gate)) for r in self.runs)

    def exhibited_cases(self) -> int:
        """Distinct cases on which it exhibited in at least one mode."""
        return len({c for r in self.runs for c in r.exhibited})


class Escape(Frozen):
    """A declared gate that did not catch its mutant."""

    domain: str = Field(description="Domain name.")
    mutant: str = Field(description="Mutant name.")
    gate: str = Field(description="The declared gate that let it through.")
    reason: str = Field(description="Why it counts as escaped, in one line.")


class FalseAlarm(Frozen):
    """A case the reference agent did not pass, or on which a hard gate failed for it."""

    domain: str = Field(description="Domain name.")
    mode: ApprovalMode = Field(description="Approval mode of the run.")
    case_id: str = Field(description="Case id.")
    outcome: OutcomeKind = Field(description="The reference's outcome on it.")
    reason: str = Field(description="The outcome's reason.")
    failed_gates: tuple[str, ...] = Field(description="Hard gates that failed for the reference.")


class GateCoverage(Frozen):
    """Which mutants declare one hard gate."""

    gate: str = Field(description="Hard-gate check name.")
    mutants: tuple[str, ...] = Field(description="Mutants declaring it, in declaration order.")


class DomainMatrix(Frozen):
    """The kill matrix of one domain."""

    domain: str = Field(description="Domain name.")
    cases: int = Field(description="Cases each agent ran, per mode.")
    modes: tuple[ApprovalMode, ...] = Field(description="Modes the reference ran in.")
    hard_gates: tuple[str, ...] = Field(
        description="The domain's hard-gate checks (its task kinds', plus any seen in a verdict)."
    )
    rows: tuple[MutantRow, ...] = Field(description="One row per mutant.")
    escapes: tuple[Escape, ...] = Field(description="Declared gates that missed their mutant.")
    false_alarms: tuple[FalseAlarm, ...] = Field(description="The reference's failing cases.")
    coverage: tuple[GateCoverage, ...] = Field(description="Declaring mutants per hard gate.")

    def warnings(self) -> list[str]:
        """One line per under-covered gate and per mutant whose verdicts split between modes."""
        lines = [
            f"{self.domain}: gate {g.gate} is declared by {len(g.mutants)} mutant(s)"
            + (f" ({', '.join(g.mutants)})" if g.mutants else "")
            + f"; every gate should have at least {MIN_MUTANTS_PER_GATE}"
            for g in self.coverage
            if len(g.mutants) < MIN_MUTANTS_PER_GATE
        ]
        for row in self.rows:
            if row.splits:
                first = row.splits[0]
                more = f" (+{len(row.splits) - 1} more)" if len(row.splits) > 1 else ""
                lines.append(
                    f"{self.domain}/{row.name}: verdicts differ between enforce and observe on "
                    f"{len(row.splits)} case(s), e.g. {first.case_id} (enforce: {first.enforce}; "
                    f"observe: {first.observe}){more}"
                )
        return lines


class Totals(Frozen):
    """Counts over every domain of a kill matrix."""

    domains: int = Field(description="Domains with mutants that were run.")
    mutants: int = Field(description="Mutants run.")
    declared: int = Field(description="(mutant, declared gate) pairs.")
    caught: int = Field(description="Of those, pairs where the gate caught the mutant.")
    escapes: int = Field(description="Pairs where it did not.")
    false_alarms: int = Field(description="Reference cases (per mode) that did not pass cleanly.")
    splits: int = Field(description="(mutant, case) verdicts differing between the modes.")
    samples: int = Field(description="Case runs made, reference included.")


class KillMatrix(Frozen):
    """The kill matrix of every domain asked for (``agentic-eval mutants --json``)."""

    schema_version: Literal[1] = Field(default=KILL_MATRIX_SCHEMA_VERSION, description="Format.")
    domains: tuple[DomainMatrix, ...] = Field(description="One matrix per domain with mutants.")
    skipped: tuple[str, ...] = Field(description="Domains that ship no mutants.")
    totals: Totals = Field(description="Counts over every domain.")
    ok: bool = Field(
        description="True when some domain ran its mutants, no gate let its mutant escape and "
        "the reference raised no false alarm (a matrix of nothing is never ok)."
    )


def behaviour(transcript: Transcript) -> str:
    """What "exhibited" compares: canonical JSON of the ordered (name, input) tool calls, the
    ordered policy events without turn numbers, the submitted output and, in a conversation
    with a simulated user, what the agent said to the user (an agent that makes the same calls
    without asking the user first behaves differently from one that asks)."""
    seen: dict[str, Any] = {
        "calls": [[c.name, c.input] for c in transcript.tool_calls],
        "events": [e.model_dump(mode="json", exclude={"turn"}) for e in transcript.policy_events],
        "output": transcript.output,
    }
    if transcript.user_turns:
        seen["said"] = [t.response.text() for t in transcript.turns if not t.response.tool_uses()]
    return canonical_json(seen)


@dataclass(frozen=True)
class _Seen:
    """What the matrix keeps of one case run (not the whole transcript)."""

    behaviour: str
    outcome: OutcomeKind
    reason: str
    failed_gates: tuple[str, ...]
    gates: tuple[str, ...]

    @classmethod
    def of(cls, t: Transcript) -> _Seen:
        hard = [c for c in t.verdict.checks if c.hard_gate]
        return cls(
            behaviour(t),
            t.verdict.outcome.kind,
            t.verdict.outcome.reason,
            tuple(dict.fromkeys(c.name for c in hard if not c.passed)),
            tuple(dict.fromkeys(c.name for c in hard)),
        )

    def verdict(self) -> str:
        gates = f" [{', '.join(self.failed_gates)}]" if self.failed_gates else ""
        return f"{self.outcome}{gates}"

    def case_verdict(self) -> tuple[str, bool]:
        """The case's verdict: its outcome and whether a hard gate failed. Which gates failed
        may differ between modes (a final-state gate sees what executed), the verdict not."""
        return self.outcome, bool(self.failed_gates)


Runs = dict[str, _Seen]
"""Case id -> what happened, for one agent in one mode."""


async def _run(
    specs: list[TaskSpec[Any]], name: str, agent: ScriptedAgent, mode: ApprovalMode
) -> Runs:
    settings = RunSettings(model=f"scripted:{name}", approval_mode=mode)
    seen: Runs = {}

    def keep(run: CaseRun) -> None:  # run_tasks drops the transcript after this callback
        if run.transcript is not None:
            seen[run.transcript.case_id] = _Seen.of(run.transcript)

    await run_tasks(specs, ScriptedBackend(name, agent), settings, on_case=keep)
    return seen


def _no_unknown_gates(name: str, mutants: Sequence[Mutant], known: set[str]) -> None:
    """Refuse a mutant declaring a gate no case of the domain has (a misspelt name would
    otherwise be reported as an escape of the mutant, not as the mistake it is)."""
    for mutant in mutants:
        unknown = [g for g in mutant.gates if g not in known]
        if unknown:
            raise KillMatrixError(
                f"{name}: mutant {mutant.name} declares {', '.join(map(repr, unknown))}, which no "
                f"case of the domain has as a hard gate (its hard gates: "
                f"{', '.join(sorted(known)) or 'none'})"
            )


def _static_hard_gates(domain: Domain[Any], cases: Sequence[CaseSpec]) -> list[str]:
    names: list[str] = []
    for case in cases:
        try:
            checks = domain.task_kind(case).checks
        except Exception:  # the run reports a broken task_kind as the domain's error
            continue
        names.extend(c.name for c in checks if c.hard_gate)
    return names


def _mode_run(mode: ApprovalMode, mine: Runs, ref: Runs, case_ids: list[str]) -> ModeRun:
    exhibited: list[str] = []
    kills: dict[str, list[str]] = {}
    unexhibited: list[str] = []
    for cid in case_ids:
        got, base = mine.get(cid), ref.get(cid)
        if got is None:
            continue
        differs = base is None or got.behaviour != base.behaviour
        if differs:
            exhibited.append(cid)
            for gate in got.failed_gates:
                kills.setdefault(gate, []).append(cid)
        elif got.failed_gates:
            unexhibited.append(cid)
    return ModeRun(
        mode=mode,
        cases=len(mine),
        exhibited=tuple(exhibited),
        not_passed=sum(1 for s in mine.values() if s.outcome != "passed"),
        kills=tuple(GateKills(gate=g, cases=tuple(c)) for g, c in sorted(kills.items())),
        unexhibited_failures=tuple(unexhibited),
    )


def _escape_reason(row: MutantRow, gate: str, modes: str) -> str:
    # a gate no case has was refused before any mutant ran (_no_unknown_gates)
    if not row.runs:
        return "it declares no approval mode, so it never ran"
    exhibited = row.exhibited_cases()
    if exhibited == 0:
        return f"it never behaved differently from the reference on any case ({modes})"
    return (
        f"{gate} never failed on the {exhibited} case(s) where it behaved differently from "
        f"the reference ({modes})"
    )


def _row(
    domain: str,
    mutant: Mutant,
    runs: dict[ApprovalMode, Runs],
    refs: dict[ApprovalMode, Runs],
    case_ids: list[str],
) -> tuple[MutantRow, list[Escape]]:
    mode_runs = tuple(_mode_run(m, runs[m], refs[m], case_ids) for m in MODES if m in runs)
    splits: list[VerdictSplit] = []
    if len(runs) == len(MODES):
        for cid in case_ids:
            e, o = runs["enforce"].get(cid), runs["observe"].get(cid)
            if e is not None and o is not None and e.case_verdict() != o.case_verdict():
                splits.append(VerdictSplit(case_id=cid, enforce=e.verdict(), observe=o.verdict()))
    row = MutantRow(
        name=mutant.name,
        description=mutant.description,
        gates=tuple(mutant.gates),
        runs=mode_runs,
        splits=tuple(splits),
        escaped=(),
    )
    escaped = tuple(g for g in row.gates if row.caught_cases(g) == 0)
    modes = " and ".join(r.mode for r in mode_runs) or "no mode"
    escapes = [
        Escape(
            domain=domain,
            mutant=mutant.name,
            gate=g,
            reason=_escape_reason(row, g, modes),
        )
        for g in escaped
    ]
    if not row.gates:
        escapes.append(
            Escape(
                domain=domain,
                mutant=mutant.name,
                gate="",
                reason="it declares no gate, so nothing is proven to catch it",
            )
        )
    return row.model_copy(update={"escaped": escaped}), escapes


def _false_alarms(domain: str, refs: dict[ApprovalMode, Runs]) -> list[FalseAlarm]:
    return [
        FalseAlarm(
            domain=domain,
            mode=mode,
            case_id=cid,
            outcome=s.outcome,
            reason=s.reason,
            failed_gates=s.failed_gates,
        )
        for mode, runs in refs.items()
        for cid, s in runs.items()
        if s.outcome != "passed" or s.failed_gates
    ]


async def domain_matrix(
    domain: Domain[Any], cases: Sequence[CaseSpec] | None = None
) -> DomainMatrix | None:
    """Run the reference agent and every mutant of ``domain`` and tally the kill matrix.

    The reference runs in every approval mode some mutant declares, each mutant in each of its
    own modes; every run is scripted, one case at a time, over ``cases`` (default: the domain's
    committed cases).

    Returns:
        The matrix, or None when the domain ships no mutants.

    Raises:
        KillMatrixError: When the domain ships mutants but no ``reference`` agent.
        CaseFileError: When the committed case file is missing or invalid.
        FixtureError: When the cases are built from invalid fixtures.
        RosterError: When the domain's roster says other than its agents and mutants.
    """
    from agentic_eval.domains.roster import checked_parts

    agents, mutants = checked_parts(domain)
    if not mutants:
        return None
    reference = agents.get(REFERENCE)
    if reference is None:
        raise KillMatrixError(
            f"{domain.name}: ships {len(mutants)} mutant(s) but no {REFERENCE!r} agent to "
            "compare them with"
        )
    case_list = list(domain.load_cases() if cases is None else cases)
    case_ids = [c.id for c in case_list]
    wanted: set[ApprovalMode] = {m for mutant in mutants for m in mutant.modes}
    modes: tuple[ApprovalMode, ...] = tuple(m for m in MODES if m in wanted)
    specs = domain.task_specs(case_list)  # the domain's turn budget (and each case's own)
    refs: dict[ApprovalMode, Runs] = {m: await _run(specs, REFERENCE, reference, m) for m in modes}
    hard_gates = _static_hard_gates(domain, case_list)
    hard_gates += [g for runs in refs.values() for s in runs.values() for g in s.gates]
    _no_unknown_gates(domain.name, mutants, set(hard_gates))
    rows: list[MutantRow] = []
    escapes: list[Escape] = []
    for mutant in mutants:
        runs: dict[ApprovalMode, Runs] = {
            m: await _run(specs, mutant.name, mutant.agent, m) for m in MODES if m in mutant.modes
        }
        hard_gates += [g for r in runs.values() for s in r.values() for g in s.gates]
        row, missed = _row(domain.name, mutant, runs, refs, case_ids)
        rows.append(row)
        escapes += missed
    gates = tuple(sorted(set(hard_gates)))
    coverage = tuple(
        GateCoverage(gate=g, mutants=tuple(m.name for m in mutants if g in m.gates)) for g in gates
    )
    return DomainMatrix(
        domain=domain.name,
        cases=len(case_list),
        modes=modes,
        hard_gates=gates,
        rows=tuple(rows),
        escapes=tuple(escapes),
        false_alarms=tuple(_false_alarms(domain.name, refs)),
        coverage=coverage,
    )


def _totals(matrices: Sequence[DomainMatrix]) -> Totals:
    rows = [r for d in matrices for r in d.rows]
    declared = sum(len(r.gates) for r in rows)
    escapes = sum(len(d.escapes) for d in matrices)
    samples = sum(d.cases * (len(d.modes) + sum(len(r.runs) for r in d.rows)) for d in matrices)
    return Totals(
        domains=len(matrices),
        mutants=len(rows),
        declared=declared,
        caught=sum(1 for r in rows for g in r.gates if r.caught_cases(g) > 0),
        escapes=escapes,
        false_alarms=sum(len(d.false_alarms) for d in matrices),
        splits=sum(len(r.splits) for r in rows),
        samples=samples,
    )


def kill_matrix(domains: Sequence[Domain[Any]]) -> KillMatrix:
    """The kill matrix of ``domains`` (see the module docstring for every definition).

    Raises:
        KillMatrixError: When a domain ships mutants but no ``reference`` agent.
        CaseFileError: When a committed case file is missing or invalid.
        FixtureError: When cases are built from invalid fixtures.
    """

    async def every() -> list[DomainMatrix | None]:
        return [await domain_matrix(d) for d in domains]

    found = run_sync(every())
    matrices = [m for m in found if m is not None]
    skipped = tuple(d.name for d, m in zip(domains, found, strict=True) if m is None)
    ok = bool(matrices) and not any(d.escapes or d.false_alarms for d in matrices)
    return KillMatrix(domains=tuple(matrices), skipped=skipped, totals=_totals(matrices), ok=ok)
