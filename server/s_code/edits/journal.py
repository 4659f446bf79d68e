"""The edit journal in the state store: turns, undo records and reservations.

A record is written ``pending`` (with the temp file's name) before its file is touched and becomes
``applied`` once the rename is done, so a crash leaves enough behind to clean up on the next start.
Reservations are rows too, so two sidecars on one workspace cannot interleave their batches.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from dataclasses import dataclass
from typing import Any

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.state.store import WorkspaceStore

RESERVATION_TTL = 60.0
_END_TURN = "UPDATE turns SET ended_at = ? WHERE id = ? AND ended_at IS NULL"


@dataclass(frozen=True)
class UndoRecord:
    id: int
    turn_id: str
    root: str
    rel: str
    display: str
    status: str
    via: str
    created: bool
    original: bytes | None
    sha_after: str
    temp_name: str | None  # the write's temp file: crash cleanup looks at it while pending


class Journal:
    def __init__(self, ws: WorkspaceStore) -> None:
        self.ws = ws
        self.store = ws.store

    # -- turns ---------------------------------------------------------------------------------

    def begin_turn(self) -> str:
        turn_id = "t-" + uuid.uuid4().hex[:12]
        self.store.execute(
            "INSERT INTO turns (id, workspace_id, began_at) VALUES (?, ?, ?)",
            (turn_id, self.ws.id, time.time()),
        )
        return turn_id

    def turn_exists(self, turn_id: str) -> bool:
        rows = self.store.execute(
            "SELECT 1 FROM turns WHERE id = ? AND workspace_id = ?", (turn_id, self.ws.id)
        )
        return bool(rows)

    def end_turn(self, turn_id: str) -> None:
        self.store.execute(_END_TURN, (time.time(), turn_id))

    def recent_turns(self, limit: int) -> list[dict[str, Any]]:
        """The newest turns that changed something, newest first, with the files each changed."""
        rows = self.store.execute(
            "SELECT t.id, t.began_at, t.ended_at, t.undone_at, r.display FROM turns t "
            "JOIN undo_records r ON r.turn_id = t.id AND r.status IN ('applied', 'undone') "
            "WHERE t.id IN (SELECT t2.id FROM turns t2 WHERE t2.workspace_id = ? AND EXISTS "
            "(SELECT 1 FROM undo_records r2 WHERE r2.turn_id = t2.id AND r2.status IN "
            "('applied', 'undone')) ORDER BY t2.began_at DESC LIMIT ?) "
            "ORDER BY t.began_at DESC, r.id",
            (self.ws.id, limit),
        )
        turns: dict[str, dict[str, Any]] = {}
        for turn_id, began, ended, undone, display in rows:
            turn = turns.setdefault(
                turn_id,
                {
                    "turnId": turn_id,
                    "beganAt": began,
                    "endedAt": ended,
                    "undone": undone is not None,
                    "files": [],
                },
            )
            if display not in turn["files"]:
                turn["files"].append(display)
        return list(turns.values())

    def mark_undone(self, turn_id: str) -> None:
        self.store.execute("UPDATE turns SET undone_at = ? WHERE id = ?", (time.time(), turn_id))

    # -- records -------------------------------------------------------------------------------

    def add_pending_many(self, rows: list[dict[str, Any]]) -> list[int]:
        def work(conn: sqlite3.Connection) -> list[int]:
            ids = []
            for r in rows:
                cur = conn.execute(
                    "INSERT INTO undo_records (turn_id, root, rel, display, status, via, created, "
                    "original, sha_before, sha_after, temp_name, recorded_at) "
                    "VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
                    (
                        r["turn_id"],
                        r["root"],
                        r["rel"],
                        r["display"],
                        r["via"],
                        int(r["created"]),
                        r["original"],
                        r["sha_before"],
                        r["sha_after"],
                        r["temp_name"],
                        time.time(),
                    ),
                )
                ids.append(int(cur.lastrowid or 0))
            return ids

        result: list[int] = self.store.transaction(work)
        return result

    def finish_batch(
        self, *, applied: list[int], dropped: list[int], end_turn: str | None, owner: str
    ) -> None:
        """After a batch, in one transaction: mark the written files' records applied and
        remove the others, end the turn it opened (if any) and release its reservations."""

        def work(conn: sqlite3.Connection) -> None:
            # Only the status changes, to a value of the same length: SQLite then overwrites
            # the row in place and leaves its overflow pages (the original, after it) alone,
            # a fifth of the WAL volume of rewriting the row.
            conn.executemany(
                "UPDATE undo_records SET status = 'applied' WHERE id = ?",
                [(i,) for i in applied],
            )
            conn.executemany("DELETE FROM undo_records WHERE id = ?", [(i,) for i in dropped])
            if end_turn is not None:
                conn.execute(_END_TURN, (time.time(), end_turn))
            conn.execute(
                "DELETE FROM reservations WHERE workspace_id = ? AND owner = ?", (self.ws.id, owner)
            )

        self.store.transaction(work)

    def mark_applied(self, record_id: int) -> None:
        self.store.execute("UPDATE undo_records SET status = 'applied' WHERE id = ?", (record_id,))

    def drop(self, record_id: int) -> None:
        self.store.execute("DELETE FROM undo_records WHERE id = ?", (record_id,))

    def mark_record_undone(self, record_id: int) -> None:
        self.store.execute("UPDATE undo_records SET status = 'undone' WHERE id = ?", (record_id,))

    def _rows(self, where: str, args: tuple[Any, ...]) -> list[UndoRecord]:
        rows = self.store.execute(
            "SELECT r.id, r.turn_id, r.root, r.rel, r.display, r.status, r.via, r.created, "
            "r.original, r.sha_after, r.temp_name FROM undo_records r JOIN turns t "
            f"ON t.id = r.turn_id WHERE t.workspace_id = ? AND {where} ORDER BY r.id",
            (self.ws.id, *args),
        )
        return [
            UndoRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8], r[9], r[10])
            for r in rows
        ]

    def records(self, turn_id: str) -> list[UndoRecord]:
        return self._rows("r.turn_id = ? AND r.status = 'applied'", (turn_id,))

    def pending(self) -> list[UndoRecord]:
        return self._rows("r.status = 'pending'", ())

    # -- reservations --------------------------------------------------------------------------

    def reserve(self, targets: list[str], owner: str) -> list[str]:
        """Reserve every target or none; returns the targets someone else holds."""
        now = time.time()

        def work(conn: sqlite3.Connection) -> list[str]:
            held = []
            for target in targets:
                row = conn.execute(
                    "SELECT owner, pid, expires_at FROM reservations "
                    "WHERE workspace_id = ? AND target = ?",
                    (self.ws.id, target),
                ).fetchone()
                if row is None or row[0] == owner:
                    continue
                if row[2] < now or not _alive(int(row[1])):
                    conn.execute(
                        "DELETE FROM reservations WHERE workspace_id = ? AND target = ?",
                        (self.ws.id, target),
                    )
                    continue
                held.append(target)
            if held:
                return held
            conn.executemany(
                "INSERT OR REPLACE INTO reservations (workspace_id, target, owner, pid, "
                "expires_at) VALUES (?, ?, ?, ?, ?)",
                [(self.ws.id, t, owner, os.getpid(), now + RESERVATION_TTL) for t in targets],
            )
            return []

        held: list[str] = self.store.transaction(work)
        return held

    def release(self, owner: str) -> None:
        """Drop every reservation of ``owner`` (a batch that stopped before writing)."""
        self.store.execute(
            "DELETE FROM reservations WHERE workspace_id = ? AND owner = ?", (self.ws.id, owner)
        )


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reservation_conflict(paths: list[str]) -> SCodeError:
    return SCodeError(
        ErrorKind.RESERVATION_CONFLICT,
        f"another batch is writing {', '.join(paths[:5])}; try again",
        paths=paths,
    )
