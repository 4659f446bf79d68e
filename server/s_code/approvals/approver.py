"""Who answers a card: the face's prompt transport, or nobody (fail closed)."""

from __future__ import annotations

from typing import Protocol

from s_code.approvals.cards import Card


class Approver(Protocol):
    """Asks the user about one card; True only for an explicit approval. Raises
    :class:`PromptUnavailable` when the question could not be put at all."""

    async def ask(self, card: Card) -> bool: ...


class PromptUnavailable(Exception):
    """The editor could not show the prompt (it answered with an error, or cannot): the
    operation is denied, and the error says so instead of "the user did not approve"."""


class DenyAll:
    """The approver of a face with no way to ask: fail closed, saying why."""

    def __init__(self, why: str = "this client cannot show approval prompts") -> None:
        self.why = why

    async def ask(self, card: Card) -> bool:
        raise PromptUnavailable(self.why)
