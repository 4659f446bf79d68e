"""An approver for tests that run the gate in-process: it approves and keeps every card."""

from __future__ import annotations

from s_code.approvals.cards import Card


class Recorder:
    """An approver that keeps every card and approves."""

    def __init__(self) -> None:
        self.cards: list[Card] = []

    async def ask(self, card: Card) -> bool:
        self.cards.append(card)
        return True
