"""Opening a session: what every face does once it knows its workspace and its client.

The LSP adapter, the CLI and the demo all open sessions here: the folders, the state store (a
session still serves reads when it cannot be opened), the typed options, and crash recovery of
the edit journal. The face passes what only it can provide: the editor's buffers, the editor
bridge, the approver and the notifier.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from s_code.approvals.approver import Approver, DenyAll
from s_code.commands.snapshots import restore_interrupted
from s_code.edits.recovery import recover_interrupted
from s_code.hostproc import trees
from s_code.session.locks import CommandGitLock
from s_code.session.options import SessionOptions
from s_code.session.session import EditorBridge, NoEditor, Notify, Session, ToolTable
from s_code.state.store import Store, WorkspaceStore, state_dir
from s_code.workspace.documents import Documents, no_overlay
from s_code.workspace.folders import Folders
from s_code.workspace.protected import ProtectedPaths

log = logging.getLogger(__name__)


def _drop(_method: str, _params: dict[str, Any]) -> None:
    return None


def _open_store(folders: Folders) -> WorkspaceStore | None:
    try:
        return Store.open_default().workspace(folders.primary.real_path)
    except Exception as exc:  # the session still serves reads without persistence
        log.error("could not open the state store: %s", exc)
        return None


def default_tools() -> ToolTable:
    from s_code.tools.builtin import default_registry

    return default_registry()


def open_session(
    folders: list[tuple[str, str | None]],
    options: SessionOptions | None = None,
    *,
    registry: ToolTable | None = None,
    overlay: Documents = no_overlay,
    notify: Notify = _drop,
    editor: EditorBridge | None = None,
    approver: Approver | None = None,
    store: bool = True,
) -> Session:
    """A session on ``folders`` (path, name), its interrupted writes settled."""
    opts = options if options is not None else SessionOptions()
    opened = Folders.open(folders)
    session = Session(
        folders=opened,
        registry=registry if registry is not None else default_tools(),
        store=_open_store(opened) if store else None,
        overlay=overlay,
        notify=notify,
        mode=opts.permission_mode,
        edit_application=opts.edit_application,
        edit_format=opts.edit_format,
        editor=editor if editor is not None else NoEditor(),
        approver=approver if approver is not None else DenyAll(),
        protected=ProtectedPaths(opts.protected_paths),
    )
    if session.store is not None:
        plan = session.store.get("plan")  # update_plan's, kept across a restart
        session.plan = plan if isinstance(plan, dict) else None
    # between sessions too (the CLI's included): files in the user's state directory
    session.lock = CommandGitLock(os.path.join(state_dir(), "locks"))
    recover_interrupted(session)
    restore_interrupted(session)
    try:  # host processes a sidecar killed outright along with their helper left behind
        trees.reap()
    except Exception as exc:
        log.error("could not reap host processes left by an earlier sidecar: %s", exc)
    return session


SESSION_END_S = 10.0


async def end_session(session: Session) -> None:
    """What ends with a session: its SessionEnd hooks run, its terminals are killed (their whole
    trees, waited for)."""
    from s_code.hooks.manager import hooks_for
    from s_code.terminals.manager import existing

    try:
        hooks = hooks_for(session)
        await hooks.refresh(if_changed=True)
        # the client waits for the shutdown reply: at most SESSION_END_S, then the hooks' trees
        # are ended (their threads see the cancellation)
        await asyncio.wait_for(hooks.session_event("SessionEnd"), SESSION_END_S)
    except Exception as exc:
        log.error("SessionEnd hooks failed: %s", exc)
    terminals = existing(session)
    if terminals is not None:
        await terminals.close()
