"""Run-to-run diff: per case, regressed / improved / still failing / new / removed, and for each
case whose verdict moved, which checks flipped and why.

A case is keyed by (case id, sample). ``passed`` is a pass; ``check_failed`` and ``error`` are
failures; ``transient`` says nothing about the agent, so a case that is transient on either side
is ``inconclusive``, never a regression or an improvement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentic_eval.core.canonical import short_repr
from agentic_eval.core.results import CheckResult
from agentic_eval.core.scorecard import CaseResult
from agentic_eval.history.entry import HistoryEntry
from agentic_eval.history.explain import explain, replay_note

ChangeKind = Literal[
    "regressed", "improved", "still_failing", "new", "removed", "inconclusive", "unchanged"
]
CHANGE_KINDS: tuple[ChangeKind, ...] = (
    "regressed",
    "improved",
    "still_failing",
    "new",
    "removed",
    "inconclusive",
    "unchanged",
)
VERDICT_CHANGES: frozenset[ChangeKind] = frozenset(
    {"regressed", "improved", "new", "removed", "inconclusive"}
)
"""Kinds that mean the case's verdict changed (or appeared, or went)."""


@dataclass(frozen=True)
class CheckFlip:
    """A check that failed on one side and not on the other."""

    name: str
    hard_gate: bool
    before: bool | None
    """Whether it held in the base run (None: not run there)."""
    after: bool | None
    """Whether it held in the head run (None: not run there)."""
    why: str


@dataclass(frozen=True)
class CaseChange:
    """One sample's verdict in both runs."""

    case_id: str
    sample: int
    kind: ChangeKind
    before: CaseResult | None
    after: CaseResult | None
    flips: tuple[CheckFlip, ...]
    expectation_changed: bool
    """The case's expectations (the answer key's case) differ between the runs."""

    @property
    def name(self) -> str:
        """``case`` or ``case@sample``."""
        return self.case_id if self.sample == 0 else f"{self.case_id}@{self.sample}"


@dataclass(frozen=True)
class RunDiff:
    """Two runs of one suite, compared."""

    base: HistoryEntry
    head: HistoryEntry
    cases: tuple[CaseChange, ...]
    """Every sample of either run, sorted by case id then sample."""
    causes: tuple[str, ...]
    """What differs besides the agent's behaviour (fingerprints, configuration), in words."""
    replay: str
    """What the runs being replays means for the diff ('' when neither is a replay)."""

    def of_kind(self, kind: ChangeKind) -> tuple[CaseChange, ...]:
        """The cases of one kind."""
        return tuple(c for c in self.cases if c.kind == kind)

    def counts(self) -> dict[ChangeKind, int]:
        """Cases by kind (every kind present, zeros included)."""
        return {k: len(self.of_kind(k)) for k in CHANGE_KINDS}

    @property
    def regressions(self) -> int:
        """Cases that passed in the base run and failed in the head run."""
        return len(self.of_kind("regressed"))

    @property
    def changed(self) -> tuple[CaseChange, ...]:
        """Cases whose verdict changed, appeared or went."""
        return tuple(c for c in self.cases if c.kind in VERDICT_CHANGES)


def _failing(r: CaseResult) -> bool:
    return r.outcome.kind in ("check_failed", "error")


def _kind(before: CaseResult | None, after: CaseResult | None) -> ChangeKind:
    if before is None:
        return "new"
    if after is None:
        return "removed"
    if "transient" in (before.outcome.kind, after.outcome.kind):
        return "inconclusive"
    if _failing(before):
        return "still_failing" if _failing(after) else "improved"
    return "regressed" if _failing(after) else "unchanged"


def _failed(r: CaseResult) -> bool:
    return r.outcome.kind != "passed"


def _detail(c: CheckResult) -> str:
    if c.message:
        return c.message.removeprefix(f"{c.name}: ")
    if c.expected is not None or c.actual is not None:
        return f"expected {short_repr(c.expected)}, got {short_repr(c.actual)}"
    return "failed"


def check_flips(before: CaseResult | None, after: CaseResult | None) -> tuple[CheckFlip, ...]:
    """Checks failing on exactly one side, in the head run's check order, then the base's.

    A check missing from a side that failed (its answer failed the schema, or it errored, so
    the check never ran) is not a flip: that side's outcome explains it. A new case lists its
    failed checks; a removed case none.
    """
    if after is None:
        return ()
    was = {c.name: c for c in (before.checks if before else ())}
    now = {c.name: c for c in after.checks}
    flips: list[CheckFlip] = []
    for name in dict.fromkeys([*now, *was]):
        b, a = was.get(name), now.get(name)
        if (b is None and before is not None and _failed(before)) or (a is None and _failed(after)):
            continue
        b_failed = b is not None and not b.passed
        a_failed = a is not None and not a.passed
        if b_failed == a_failed:
            continue
        if a is not None and a_failed:
            why = _detail(a) if b is not None else f"new check, fails: {_detail(a)}"
        elif a is not None:
            why = f"holds now (was: {_detail(b)})" if b is not None else "holds now"
        else:
            why = f"not checked any more (was failing: {_detail(b)})" if b is not None else ""
        hard = (a.hard_gate if a is not None else False) or (
            b.hard_gate if b is not None else False
        )
        flips.append(
            CheckFlip(
                name=name,
                hard_gate=hard,
                before=None if b is None else b.passed,
                after=None if a is None else a.passed,
                why=why,
            )
        )
    return tuple(flips)


def explained_by_checks(r: CaseResult) -> bool:
    """Whether the outcome says no more than its failed checks do (``failed: a, b``)."""
    names = ", ".join(dict.fromkeys(c.name for c in r.checks if not c.passed))
    return (
        r.outcome.kind == "check_failed" and bool(names) and r.outcome.reason == f"failed: {names}"
    )


def diff_runs(base: HistoryEntry, head: HistoryEntry) -> RunDiff:
    """Compare two runs of the same suite, case by case.

    Raises:
        ValueError: When the runs belong to different suites.
    """
    if base.suite != head.suite:
        raise ValueError(f"cannot compare a run of {base.suite} with a run of {head.suite}")
    was = {(c.case_id, c.sample): c for c in base.scorecard.cases}
    now = {(c.case_id, c.sample): c for c in head.scorecard.cases}
    b_sha, h_sha = base.fingerprints.case_sha256, head.fingerprints.case_sha256
    cases: list[CaseChange] = []
    for key in sorted(set(was) | set(now)):
        before, after = was.get(key), now.get(key)
        case_id = key[0]
        changed = case_id in b_sha and case_id in h_sha and b_sha[case_id] != h_sha[case_id]
        cases.append(
            CaseChange(
                case_id=case_id,
                sample=key[1],
                kind=_kind(before, after),
                before=before,
                after=after,
                flips=check_flips(before, after),
                expectation_changed=changed,
            )
        )
    return RunDiff(
        base=base,
        head=head,
        cases=tuple(cases),
        causes=explain(base, head),
        replay=replay_note(base, head),
    )
