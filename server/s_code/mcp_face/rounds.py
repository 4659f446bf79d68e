"""Approvals on a 2026-07-28 connection: the question goes back as the call's result.

That revision has no server-to-client request: a server that needs the user's answer returns an
``input_required`` result carrying the question and an opaque ``requestState``, and the client
calls the tool again with the answer (``inputResponses``). Here the call keeps running in its
task while the question is out: :meth:`Rounds.ask` (what the standalone approver calls) parks it
on a future, the face returns the question with a fresh random state, and the retry that carries
that state answers the future and waits on the same task. A state is good for one answer, to the
same tool with the same arguments, within :data:`ANSWER_TIMEOUT_S`; an answer without one (a
client approving a call it was never asked about) counts for nothing; no answer in time is a
denial.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from s_code.approvals.cards import Card

ANSWER_TIMEOUT_S = 300.0


def call_digest(name: str, arguments: Any) -> str:
    text = json.dumps([name, arguments], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Rounds:
    """One tool call's questions, as its task asks them."""

    digest: str
    asked: asyncio.Queue[tuple[Card, asyncio.Future[bool]]] = field(default_factory=asyncio.Queue)

    async def ask(self, card: Card) -> bool:
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        await self.asked.put((card, answer))
        return await answer


@dataclass
class Pending:
    work: asyncio.Future[Any]
    rounds: Rounds
    answer: asyncio.Future[bool]
    expiry: asyncio.TimerHandle


class Ledger:
    """The questions out on one connection, by state."""

    def __init__(self) -> None:
        self.pending: dict[str, Pending] = {}

    def park(self, work: asyncio.Future[Any], rounds: Rounds, answer: asyncio.Future[bool]) -> str:
        state = "s-code-" + secrets.token_urlsafe(24)
        loop = asyncio.get_running_loop()
        expiry = loop.call_later(ANSWER_TIMEOUT_S, self._expire, state)
        self.pending[state] = Pending(work, rounds, answer, expiry)
        return state

    def _expire(self, state: str) -> None:
        found = self.pending.pop(state, None)
        if found is not None and not found.answer.done():
            found.answer.set_result(False)  # no answer in time: a denial

    def take(self, state: str | None, digest: str) -> Pending | None:
        """The question ``state`` names, once, when it was asked of this very call."""
        found = self.pending.get(state) if isinstance(state, str) else None
        if found is None or found.rounds.digest != digest:
            return None
        del self.pending[state]  # type: ignore[arg-type]
        found.expiry.cancel()
        return found

    def close(self) -> None:
        for state in list(self.pending):
            self._expire(state)
