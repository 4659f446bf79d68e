"""Turns: the unit of undo. Begun and ended by the client; edits outside one get their own."""

from __future__ import annotations

import asyncio
from typing import Any

from s_code.edits.engine import journal_of
from s_code.edits.undo import undo_turn
from s_code.protocol.errors import invalid_params
from s_code.session.session import Session


async def begin_turn(session: Session) -> str:
    """A new turn that the session's next edits join."""
    turn = await asyncio.to_thread(journal_of(session).begin_turn)
    session.turn = turn
    return turn


async def end_turn(session: Session, turn: str) -> None:
    journal = journal_of(session)
    if not await asyncio.to_thread(journal.turn_exists, turn):
        raise invalid_params(f"no turn {turn!r}", "turnId")
    await asyncio.to_thread(journal.end_turn, turn)
    if session.turn == turn:
        session.turn = None


async def recent(session: Session, limit: int) -> list[dict[str, Any]]:
    """The turns to offer for undo (kept across restarts), newest first."""
    return await asyncio.to_thread(journal_of(session).recent_turns, limit)


async def undo(session: Session, turn: str) -> dict[str, Any]:
    return await undo_turn(session, journal_of(session), turn)
