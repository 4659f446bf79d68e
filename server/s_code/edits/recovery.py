"""Crash recovery of the edit journal, run when a session opens.

A sidecar killed mid-write leaves pending undo records and temp files; the next session on the
workspace settles them (:func:`s_code.edits.undo.recover`). The common case, nothing pending,
costs one indexed query and loads nothing else of the edit layer.
"""

from __future__ import annotations

import logging

from s_code.session.session import Session

log = logging.getLogger(__name__)


def recover_interrupted(session: Session) -> int:
    """Settle writes a crashed sidecar left half done; the number settled."""
    if session.store is None:
        return 0
    pending = session.store.store.execute(
        "SELECT 1 FROM undo_records WHERE status = 'pending' LIMIT 1"
    )
    if not pending:
        return 0
    from s_code.edits.journal import Journal
    from s_code.edits.undo import recover

    try:
        return recover(session, Journal(session.store))
    except Exception:
        log.exception("crash recovery failed")
        return 0
