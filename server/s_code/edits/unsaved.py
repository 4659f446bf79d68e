"""Agent edits that live only in editor buffers, and getting them to disk before something reads
the disk.

An edit of an open buffer goes through ``workspace/applyEdit`` and stays unsaved, while commands
and git read the disk: a test run right after the agent fixed a function would test the old file.
Before ``run_command`` and the git tools, the buffers the agent edited whose text is not on disk
are saved by the editor when the client offers it (``s-code/documents/save``); whatever is still
not on disk is named in the tool's result, so the agent knows what the command did not see.
"""

from __future__ import annotations

import asyncio

from s_code.edits.request import MAX_BYTES
from s_code.protocol.errors import SCodeError
from s_code.session.session import Session
from s_code.workspace.folders import Located

UNSAVED_DESCRIPTION = (
    "Open editor buffers holding this session's edits that are not on disk, where {reader} "
    "read: it saw their older content (present only when there are some; editors that can "
    "save them do so first)."
)


def _on_disk(loc: Located, text: str) -> bool:
    try:
        disk = loc.root.read_parts(loc.parts, MAX_BYTES, field="path")
    except SCodeError:  # gone, too large, no longer a regular file: not what the buffer holds
        return False
    return disk == text.encode("utf-8", "surrogatepass")


async def pending(session: Session) -> list[tuple[str, str]]:
    """``(uri, display path)`` of the buffers the agent edited that differ from the disk. A
    buffer that was closed, or whose text reached the disk, is forgotten."""
    out: list[tuple[str, str]] = []
    for uri, loc in list(session.agent_edited.items()):
        doc = session.overlay.document(loc.abs_paths())
        if doc is None or doc.uri != uri or await asyncio.to_thread(_on_disk, loc, doc.text):
            session.agent_edited.pop(uri, None)
            continue
        out.append((uri, loc.display))
    return out


async def save_before_disk_read(session: Session) -> list[str] | None:
    """Ask the editor to save the buffers holding agent edits; the display paths of those still
    not on disk (None when there are none)."""
    waiting = await pending(session)
    if waiting and session.editor.can_save:
        await session.editor.save([uri for uri, _ in waiting])
        waiting = await pending(session)
    return [display for _, display in waiting] or None
