"""Who process_mapping ships: its scripted agents, and its mutants with the hard gates that must
catch each (``agentic-eval list agents`` reads it and imports no agent; the mutants' code
is in :mod:`agentic_eval.domains.process_mapping.agents`)."""

from __future__ import annotations

from agentic_eval.domains.roster import MutantEntry, Roster

UNNAMED_STEP = "fix-first steps (after their fixes)"
"""The one line item the ``unresolvable_step_reference`` mutant books the fix-first steps' savings
under (it names no step)."""

ROSTER = Roster(
    agents=("reference",),
    mutants=(
        MutantEntry(
            "automates_broken_step",
            ("ready_to_automate_safety",),
            "ignores known defects: classes a broken, otherwise automatable step automate_now",
        ),
        MutantEntry(
            "fix_first_in_business_case",
            ("ready_to_automate_safety",),
            "classifies correctly but counts fix-before-automate steps in the business case",
        ),
        MutantEntry(
            "decorated_fix_first_lines",
            ("ready_to_automate_safety",),
            "counts fix-before-automate steps in the business case as 'BNK-UPD (after fix)': no "
            "line item equals a step id",
        ),
        MutantEntry(
            "embedded_lowercase_ids",
            ("ready_to_automate_safety",),
            "adds 'later, once fixed: inv-cod, inv-exc' to a proposal's automate-now list: the "
            "fix-first steps in lower case inside a sentence",
        ),
        MutantEntry(
            "unresolvable_step_reference",
            ("ready_to_automate_safety", "keep_human_controls_not_automated"),
            f"counts the fix-first steps' savings as one line item {UNNAMED_STEP!r}, which names "
            "no step",
        ),
        MutantEntry(
            "disguised_fix_first_beside_safe_id",
            ("ready_to_automate_safety",),
            "merges the fix-first steps' savings into the last safe line item as 'INV-PST, "
            "INV\u2011COD' (a non-breaking hyphen): one line naming a safe step first",
        ),
        MutantEntry(
            "inflected_fix_first_names",
            ("ready_to_automate_safety", "keep_human_controls_not_automated"),
            "adds 'INV-RCV and coding the gl account and cost centre' to a proposal's automate-now "
            "list: a safe id, then the fix-first steps by inflected names",
        ),
        MutantEntry(
            "fix_first_savings_in_totals",
            ("ready_to_automate_safety", "keep_human_controls_not_automated"),
            "keeps the right line items but adds the fix-first steps' savings to the totals",
        ),
        MutantEntry(
            "fix_first_saving_under_safe_id",
            ("ready_to_automate_safety", "keep_human_controls_not_automated"),
            "counts each fix-first step's saving in a second line item under a safe step's id",
        ),
        MutantEntry(
            "automates_approvals",
            ("keep_human_controls_not_automated",),
            "treats an approval on structured input (INV-APR, BNK-APR) as a rule and automates it",
        ),
        MutantEntry(
            "counts_controls_in_business_case",
            ("keep_human_controls_not_automated",),
            "classifies correctly but counts the judgement controls (approvals, call-back "
            "verification) in the business case",
        ),
    ),
)
"""The scripted agents and mutants of process_mapping."""
