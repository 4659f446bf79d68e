"""The approval gate: the policy decides, the approver asks, the audit log remembers.

``check`` is the one path every operation takes: the policy's decision for (mode, operation);
``allow`` passes (and is logged), ``reject`` fails, ``ask`` shows the card. After an approval the
operation is projected again when it can be (``reproject``); a different card asks again. Each
approval is spent on exactly one operation: there is no memory of earlier answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from s_code.approvals import audit
from s_code.approvals.approver import Approver, PromptUnavailable
from s_code.approvals.caller import current
from s_code.approvals.cards import Card
from s_code.approvals.policy import Mode, Operation, decide
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.state.store import WorkspaceStore

MAX_ASKS = 3


class Asking(Protocol):
    """What the gate needs of a session: its mode, its approver and its audit store."""

    @property
    def mode(self) -> Mode: ...

    @property
    def approver(self) -> Approver: ...

    @property
    def store(self) -> WorkspaceStore | None: ...


@dataclass
class Approval:
    card: Card
    decision: str  # "allowed" (by the mode) or "approved" (by the user)
    audit_row: int | None
    store: WorkspaceStore | None = None

    def ran(self, what: dict[str, object]) -> None:
        """Record what then ran (paths written, argv and exit code) on the audit row."""
        audit.finish(self.store, self.audit_row, what)


def _asked_by(card: Card) -> Card:
    """The card with the attached agent that asked named on it (the editor's own agent: as is)."""
    caller = current()
    if caller is None or card.requested_by == caller.name:
        return card
    return dataclasses.replace(card, requested_by=caller.name)


def _denied(card: Card, why: str, **data: object) -> SCodeError:
    title = card.shown.title  # an editor may show the error: escaped, as the prompt was
    return SCodeError(ErrorKind.APPROVAL_DENIED, f"{why}: {title}", card=card.digest, **data)


async def check(
    session: Asking,
    operation: Operation,
    card: Card,
    reproject: Callable[[], Awaitable[Card]] | None = None,
) -> Approval:
    mode, store = session.mode, session.store
    card = _asked_by(card)
    decision = decide(mode, operation)
    if decision == "allow":
        return Approval(card, "allowed", audit.record(store, card, "allowed", mode), store)
    if decision == "reject":
        audit.record(store, card, "rejected", mode)
        raise _denied(card, "not allowed in any mode")
    for _ in range(MAX_ASKS):
        try:
            approved = await session.approver.ask(card)
        except PromptUnavailable as exc:
            audit.record(store, card, "unasked", mode)
            raise _denied(
                card, f"the editor could not show the approval prompt ({exc})", reason="no_prompt"
            ) from None
        row = audit.record(store, card, "approved" if approved else "denied", mode)
        if not approved:
            raise _denied(card, "the user did not approve")
        if reproject is None:
            return Approval(card, "approved", row, store)
        again = _asked_by(await reproject())
        if again.digest == card.digest:
            return Approval(again, "approved", row, store)
        audit.finish(store, row, {"not_run": "the operation changed after approval"})
        card = again  # what would run now differs from what was approved: ask about it
    raise _denied(card, "the operation kept changing after approval; it was not run")
