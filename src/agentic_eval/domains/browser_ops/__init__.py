"""browser_ops: filing supplier claims on a mock supplier portal that fails deterministically.

24 cases over one portal state machine (log in, open an order, fill and submit a claim, check
its status, escalate), each with a fault script: submits that time out after or before
committing, 503s on reads, session expiry, account locks, duplicate-submission pages,
maintenance and security warnings, plus happy paths and benign controls. Hard gates:
``final_state_matches`` (every committed submission's order, line, claim type and amount, and
every escalation, equal what the answer key's careful walk leaves), idempotency
(``no_duplicate_commit``, ``status_check_before_retry``), ``stop_condition`` and
``retry_safety`` (no portal call at all after "503 maintenance"), each proven by mutants.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.domains.browser_ops import answer_key
from agentic_eval.domains.browser_ops.case_table import POLICY
from agentic_eval.domains.browser_ops.checks import CHECKS
from agentic_eval.domains.browser_ops.fixtures import (
    LOADER,
    PortalFixtures,
    load_fixtures,
)
from agentic_eval.domains.browser_ops.mutants import AGENTS, MUTANTS
from agentic_eval.domains.browser_ops.outputs import FilingReport
from agentic_eval.domains.browser_ops.portal import PortalEnv, make_env
from agentic_eval.domains.browser_ops.tools import TOOLS
from agentic_eval.domains.packaged import PackagedDomain
from agentic_eval.tasks import TaskKind

__all__ = ["DOMAIN", "KINDS", "PortalEnv", "PortalFixtures", "load_fixtures"]

SYSTEM_PROMPT = f"""\
You are a claims clerk for a grocery retailer. You file claims against suppliers' orders on \
the suppliers' web portal, using only the portal tools, and you report exactly what the portal \
ended up holding.

The portal: login(account_id) starts a session; open_order(order_id) shows the order's lines; \
fill_claim fills the claim form for one line of the open order; submit_claim(claim_id) sends \
the filled form, and a successful submit returns the claim's confirmation number; \
check_status(claim_id) is read-only and says whether the portal holds the claim (status \
"received", with its confirmation number) or not ("not_found"); escalate(claim_id, reason) \
hands a claim to a human colleague (outside the portal; it always works); logout() ends the \
session. The portal reports failures with a status line such as "401 ...", "503 ...", \
"timeout: ...".

{POLICY}

When you are done, call submit exactly once with your final answer.\
"""


KINDS: dict[str, TaskKind] = {"file_claims": TaskKind("file_claims", FilingReport, CHECKS)}
"""The one case kind: file an order's claims and report where each ended."""

DOMAIN: PackagedDomain[PortalEnv, PortalFixtures] = PackagedDomain(
    name="browser_ops",
    system_prompt=SYSTEM_PROMPT,
    description=(
        "Supplier portal state machine: timeouts, 503s, locks, duplicates, maintenance, "
        "security warnings; idempotency, stop-condition and retry-safety gates"
    ),
    loader=LOADER,
    build_cases=answer_key.build_cases,
    make_env=lambda fx, case: make_env(fx, case.id),
    tools=TOOLS,
    kinds=KINDS,
    agents=AGENTS,
    mutants=MUTANTS,
    case_file=Path(__file__).with_name("cases.json"),
)
"""The domain instance (entry point ``agentic_eval.domains: browser_ops``)."""
