"""Undoing a turn, and cleaning up after a crash.

Undo restores each file the turn wrote, newest first, through the same safe paths and checks as
the edit (the editor for an open buffer, else a durable disk write; never a path an edit could not
write now: ``protected_path``), but only when the file is still exactly what the turn left behind:
otherwise it is refused with ``changed_since`` and the user's later work wins. Files the turn
created are removed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from s_code.edits.journal import Journal, UndoRecord
from s_code.hostproc.unsafe_workspace import WriteGuard
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.session.session import Session
from s_code.workspace.documents import sha256_hex
from s_code.workspace.folders import Located
from s_code.workspace.paths import split_relative
from s_code.workspace.root import WorkspaceRoot
from s_code.workspace.writes import read_current, remove_file, remove_temp, write_atomic

log = logging.getLogger(__name__)


def _root(session: Session, real_path: str) -> WorkspaceRoot | None:
    return next((r for r in session.folders.roots if r.real_path == real_path), None)


def _expect(sha: str):  # type: ignore[no-untyped-def]
    def final_check(current: bytes | None) -> None:
        if current is None or sha256_hex(current) != sha:
            raise SCodeError(ErrorKind.STALE_REVISION, "changed while being restored")

    return final_check


def _disk_now(root: WorkspaceRoot, parts: tuple[str, ...]) -> bytes | None:
    try:
        dir_fd = root.open_parts(parts[:-1], os.O_RDONLY | os.O_DIRECTORY)
    except SCodeError:
        return None
    try:
        return read_current(dir_fd, parts[-1])
    finally:
        os.close(dir_fd)


async def _restore(
    session: Session, rec: UndoRecord, root: WorkspaceRoot, guard: WriteGuard
) -> str | None:
    """Restore one record; returns a refusal reason or None. What an edit may not write, undo
    may not either (``protected_path``): the folder or a directory on the way is one no workspace
    may reach, or the path became protected since (a hook now runs it)."""
    parts = split_relative(rec.rel) if rec.rel != "." else ()
    await asyncio.to_thread(guard.check, root, parts, rec.display)
    session.protected.check(parts, rec.display)
    paths = (f"{root.path}/{rec.rel}", f"{root.real_path}/{rec.rel}")
    doc = session.overlay.document(paths)
    if doc is not None:
        current: bytes | None = doc.text.encode("utf-8", "surrogatepass")
    else:
        current = await asyncio.to_thread(_disk_now, root, parts)
    if current is None or sha256_hex(current) != rec.sha_after:
        return "changed_since"
    if rec.created:  # created files are always written to disk; an open buffer stays open
        await asyncio.to_thread(remove_file, root, parts, _expect(rec.sha_after))
        return None
    original = (rec.original or b"").decode("utf-8", "surrogatepass")
    if doc is not None and session.editor.can_apply_edit:
        if not await session.editor.apply_edit(doc, original, f"s-code: undo {rec.display}"):
            return "changed_since"
        session.agent_edited[doc.uri] = Located(root, parts, rec.display)
        return None
    await asyncio.to_thread(
        write_atomic,
        root,
        parts,
        rec.original or b"",
        create=False,
        final_check=_expect(rec.sha_after),
    )
    return None


async def undo_turn(session: Session, journal: Journal, turn_id: str) -> dict[str, Any]:
    if not await asyncio.to_thread(journal.turn_exists, turn_id):
        raise SCodeError(ErrorKind.INVALID_PARAMS, f"no turn {turn_id!r}", field="turnId")
    records = await asyncio.to_thread(journal.records, turn_id)
    guard = await asyncio.to_thread(WriteGuard)
    restored: list[str] = []
    refused: list[dict[str, str]] = []
    for rec in reversed(records):
        root = _root(session, rec.root)
        if root is None:
            refused.append({"path": rec.display, "reason": "folder_not_open"})
            continue
        try:
            reason = await _restore(session, rec, root, guard)
        except SCodeError as err:
            reason = "changed_since" if err.kind is ErrorKind.STALE_REVISION else err.kind.value
        if reason is None:
            await asyncio.to_thread(journal.mark_record_undone, rec.id)
            restored.append(rec.display)
        else:
            refused.append({"path": rec.display, "reason": reason})
    await asyncio.to_thread(journal.mark_undone, turn_id)
    return {"restored": restored, "refused": refused}


def recover(session: Session, journal: Journal) -> int:
    """Clean up after a crash: remove temp files of pending records, settle their status."""
    settled = 0
    for rec in journal.pending():
        root = _root(session, rec.root)
        if root is None:
            continue
        parts = split_relative(rec.rel)
        if rec.temp_name:
            remove_temp(root, parts[:-1], rec.temp_name)
        current = _disk_now(root, parts)
        if rec.via == "disk" and current is not None and sha256_hex(current) == rec.sha_after:
            journal.mark_applied(rec.id)  # the rename happened before the crash
        else:
            journal.drop(rec.id)
        settled += 1
    if settled:
        log.info("settled %d interrupted writes", settled)
    return settled
