"""The final state of a browser_ops case as records: what the portal committed and who was told.

:func:`final_state` is the one view of a portal both sides of the ``final_state_matches`` gate
use: the gate applies it to the environment the agent's run leaves, and the answer key applies it
to the environment its careful walk leaves (:func:`.answer_key.careful_walk` drives the same
tools), so the two can differ only in what happened, never in how it is described.

Records (nothing else a tool changes; submissions held before the case are untouched, so in
neither):

- ``submission CLM-3001 #1``: the n-th submission the portal holds of a claim (n counts the
  ones held before the case too, as the confirmation numbers do), with ``order_id``, ``sku``
  (the order line), ``claim_type``, ``amount`` (money: minor units and currency) and
  ``status``. The confirmation number is left out: the portal derives it from the claim
  reference as typed and n, so it says nothing the key does not, and the reported number is
  judged by the field checks;
- ``escalation CLM-3018``: a claim handed to a human, ``status`` ``escalated``.

Ids are in their canonical form (:func:`~agentic_eval.core.identifiers.canonical_id`), so a
claim filed as ``clm-3001`` is the same record as ``CLM-3001``.
"""

from __future__ import annotations

from collections import Counter

from agentic_eval.checks.state import StateRecords
from agentic_eval.core.identifiers import canonical_id, money
from agentic_eval.domains.browser_ops.portal import PortalEnv

__all__ = ["final_state"]


def final_state(env: PortalEnv) -> StateRecords:
    """What the run committed on the portal and escalated, as records."""
    records: StateRecords = {}
    held: Counter[str] = Counter()
    for s in env.submissions:
        claim = canonical_id(s.claim_id)
        held[claim] += 1
        if s.prior:
            continue
        records[f"submission {claim} #{held[claim]}"] = {
            "order_id": canonical_id(s.order_id),
            "sku": canonical_id(s.sku),
            "claim_type": s.claim_type,
            "amount": money(s.amount_cents, env.fixtures.currency),
            "status": "received",
        }
    for e in env.escalations:
        records[f"escalation {canonical_id(e.claim_id)}"] = {"status": "escalated"}
    return records
