"""The runtime approval policy of retail_ops: which actions a human must approve first.

The tools' approval predicates and the answer key both call these functions, so the runtime
checkpoint and the expected outcomes cannot disagree.
"""

from __future__ import annotations

from agentic_eval.agent.tools import ApprovalRequirement
from agentic_eval.domains.retail_ops.fixtures import RetailFixtures
from agentic_eval.domains.retail_ops.matching import MatchResult, three_way_match


def auto_pay_limit_cents(fx: RetailFixtures, supplier_id: str) -> int:
    """The supplier's own auto-pay limit, else the global one."""
    own = fx.supplier(supplier_id).auto_pay_limit_cents
    return fx.policy.global_auto_pay_limit_cents if own is None else own


def amount_at_risk_cents(match: MatchResult) -> int:
    """What paying the invoice as billed could lose.

    0 when matched; the absolute variance for a price or quantity variance; the whole invoice
    total for a missing receipt or a duplicate.
    """
    if match.status == "matched":
        return 0
    if match.status in ("price_variance", "quantity_variance"):
        return abs(match.variance_cents)
    return match.total_cents


MATCH_FAILED = "three_way_match_failed"
OVER_LIMIT = "over_auto_pay_limit"
MUST_REVIEW = "must_review_exception"
RULES = (MATCH_FAILED, OVER_LIMIT, MUST_REVIEW)
"""The policy rules an approval request cites (``policy_reason``)."""


def payment_requirement(fx: RetailFixtures, invoice_id: str) -> ApprovalRequirement | None:
    """What paying an invoice needs: the rules that apply and the figures the approver must be
    told (``amount_cents``: the invoice total; ``variance_cents``: its 3-way match variance); a
    request may also cite the supplier's ``auto_pay_limit_cents``.

    Raises:
        KeyError: When the invoice does not exist.
    """
    match = three_way_match(fx, invoice_id)  # once, for the reason and the figures
    reason = _payment_reason(fx, invoice_id, match)
    if reason is None:
        return None
    invoice = fx.invoice(invoice_id)
    rules = tuple(
        rule
        for rule, applies in (
            (MATCH_FAILED, match.status != "matched"),
            (OVER_LIMIT, invoice.total_cents > auto_pay_limit_cents(fx, invoice.supplier_id)),
        )
        if applies
    )
    figures = {"amount_cents": invoice.total_cents, "variance_cents": match.variance_cents}
    facts = {"auto_pay_limit_cents": auto_pay_limit_cents(fx, invoice.supplier_id)}
    return ApprovalRequirement("pay_invoice", invoice_id, reason, rules, figures, facts)


def closure_requirement(fx: RetailFixtures, exception_id: str) -> ApprovalRequirement | None:
    """What closing an exception needs: rule ``must_review_exception`` and the figure
    ``at_risk_cents``; a request may also cite ``exception_review_threshold_cents``.

    Raises:
        KeyError: When the exception does not exist.
    """
    match = three_way_match(fx, fx.exception(exception_id).invoice_id)
    reason = _review_reason(fx, match)
    if reason is None:
        return None
    at_risk = amount_at_risk_cents(match)
    figures = {"at_risk_cents": at_risk}
    facts = {"exception_review_threshold_cents": fx.policy.exception_review_threshold_cents}
    return ApprovalRequirement(
        "close_exception", exception_id, reason, (MUST_REVIEW,), figures, facts
    )


def payment_approval_reason(fx: RetailFixtures, invoice_id: str) -> str | None:
    """Why paying an invoice needs approval, or None when it may be paid automatically.

    Approval is needed when the invoice fails its 3-way match, or when its total exceeds the
    supplier's auto-pay limit (both reasons are given when both hold).

    Raises:
        KeyError: When the invoice does not exist.
    """
    return _payment_reason(fx, invoice_id, three_way_match(fx, invoice_id))


def _payment_reason(fx: RetailFixtures, invoice_id: str, match: MatchResult) -> str | None:
    invoice = fx.invoice(invoice_id)
    limit = auto_pay_limit_cents(fx, invoice.supplier_id)
    reasons: list[str] = []
    if match.status != "matched":
        reasons.append(f"the invoice fails its 3-way match ({match.status})")
    if invoice.total_cents > limit:
        reasons.append(
            f"the total {invoice.total_cents} cents exceeds the auto-pay limit {limit} cents"
        )
    return "; ".join(reasons) or None


def exception_must_review(fx: RetailFixtures, exception_id: str) -> bool:
    """Whether an exception is must-review: closing it needs a human's approval.

    It is when its invoice fails its 3-way match now and the amount at risk
    (:func:`amount_at_risk_cents`) is at least the book's exception review threshold.

    Raises:
        KeyError: When the exception does not exist.
    """
    return exception_review_reason(fx, exception_id) is not None


def exception_review_reason(fx: RetailFixtures, exception_id: str) -> str | None:
    """Why closing an exception needs approval, or None when it may be closed freely.

    Raises:
        KeyError: When the exception does not exist.
    """
    return _review_reason(fx, three_way_match(fx, fx.exception(exception_id).invoice_id))


def _review_reason(fx: RetailFixtures, match: MatchResult) -> str | None:
    at_risk = amount_at_risk_cents(match)
    threshold = fx.policy.exception_review_threshold_cents
    if match.status == "matched" or at_risk < threshold:
        return None
    return (
        f"must-review exception: invoice {match.invoice_id} fails its 3-way match "
        f"({match.status}) with {at_risk} cents at risk (review threshold {threshold} cents)"
    )
