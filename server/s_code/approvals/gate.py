"""The approval gate: the policy decides, the approver asks, the audit log remembers.

``check`` is the one path every operation takes: the policy's decision for (mode, operation);
``allow`` passes (and is logged), ``reject`` fails, ``ask`` shows the card. After an approval the
operation is projected again when it can be (``reproject``); a different card asks again. Each
approval is spent on exactly one operation: there is no memory of earlier answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from s_code.approvals import audit
from s_code.approvals.cards import Card
from s_code.approvals.policy import Operation, decide
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.redaction import Redactor, secret_env_values
from s_code.tools.session import Session

REDACTOR_KEY = "redactor"
MAX_ASKS = 3


def redactor_of(session: Session) -> Redactor:
    """The session's redactor: token rules plus the values of the sidecar's secret variables."""
    redactor = session.state.get(REDACTOR_KEY)
    if redactor is None:
        redactor = session.state[REDACTOR_KEY] = Redactor(secret_env_values())
    assert isinstance(redactor, Redactor)
    return redactor


@dataclass
class Approval:
    card: Card
    decision: str  # "allowed" (by the mode) or "approved" (by the user)
    audit_row: int | None

    def ran(self, session: Session, what: dict[str, object]) -> None:
        audit.finish(session.store, self.audit_row, what)


def _denied(card: Card, why: str) -> SCodeError:
    return SCodeError(ErrorKind.APPROVAL_DENIED, f"{why}: {card.title}", card=card.digest)


async def check(
    session: Session,
    operation: Operation,
    card: Card,
    reproject: Callable[[], Awaitable[Card]] | None = None,
) -> Approval:
    mode = session.permission_mode
    decision = decide(mode, operation)  # type: ignore[arg-type]
    if decision == "allow":
        return Approval(card, "allowed", audit.record(session.store, card, "allowed", mode))
    if decision == "reject":
        audit.record(session.store, card, "rejected", mode)
        raise _denied(card, "not allowed in any mode")
    for _ in range(MAX_ASKS):
        approved = await session.approver.ask(card)
        row = audit.record(session.store, card, "approved" if approved else "denied", mode)
        if not approved:
            raise _denied(card, "the user did not approve")
        if reproject is None:
            return Approval(card, "approved", row)
        again = await reproject()
        if again.digest == card.digest:
            return Approval(again, "approved", row)
        audit.finish(session.store, row, {"not_run": "the operation changed after approval"})
        card = again  # what would run now differs from what was approved: ask about it
    raise _denied(card, "the operation kept changing after approval; it was not run")
