"""The snapshot of a running command, kept in the state store until the check after it is done.

A sidecar killed while a command runs (the command dies with it: bubblewrap's
``--die-with-parent``, the exec helper's parent-death signal) cannot check what the command left.
So the snapshot is written before the command starts, and the next session on the workspace puts
back what a row left by a dead sidecar describes (SECURITY.md S23), then drops the row. Only inside
the folders that session opened, and removing nothing: what differs now may be the user's own
work since, so it is set aside (renamed), and the user is told.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time
from typing import Any

from s_code.protocol.display import shown
from s_code.sandbox import watch
from s_code.sandbox.entries import QUARANTINE, Entry
from s_code.session.session import Session
from s_code.state.store import WorkspaceStore
from s_code.workspace.gitdirs import GitDirs

log = logging.getLogger(__name__)


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def _value(v: object) -> object:
    return {"b64": base64.b64encode(v).decode()} if isinstance(v, bytes) else v


def _unvalue(v: Any) -> object:
    return base64.b64decode(v["b64"]) if isinstance(v, dict) else v


# A row without its own deadline: the longest a command may run, and a minute to be killed.
_LONGEST_S = 3600.0 + 60.0


def encode(snap: watch.Snapshot, until: float | None = None) -> bytes:
    data: dict[str, Any] = {
        "entries": {k: [_value(x) for x in e] for k, e in snap.entries.items()},
        "gitdirs": {
            "dirs": sorted(snap.gitdirs.dirs),
            "gitfiles": sorted(snap.gitdirs.gitfiles),
            "layouts": sorted(snap.gitdirs.layouts),
        },
        "extra": list(snap.extra),
    }
    if until is not None:
        data["until"] = until  # after this, nothing the command did can have changed a path
    return json.dumps(data, separators=(",", ":")).encode()


def decode(raw: bytes) -> watch.Snapshot:
    data = json.loads(raw)
    entries: dict[str, Entry] = {
        k: tuple(_unvalue(x) for x in e) for k, e in data["entries"].items()
    }
    g = data["gitdirs"]
    gitdirs = GitDirs(set(g["dirs"]), set(g["gitfiles"]), set(g["layouts"]))
    return watch.Snapshot(entries, gitdirs, tuple(data["extra"]))


def save(
    store: WorkspaceStore | None, root: str, snap: watch.Snapshot, timeout_s: float = 3600.0
) -> int | None:
    if store is None:
        return None
    now = time.time()
    rows = store.store.execute(
        "INSERT INTO command_snapshots (workspace_id, root, pid, boot, started_at, data) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (store.id, root, os.getpid(), _boot_id(), now, encode(snap, now + timeout_s + 60.0)),
    )
    return int(rows[0][0])


def drop(store: WorkspaceStore | None, row: int | None) -> None:
    if store is not None and row is not None:
        store.store.execute("DELETE FROM command_snapshots WHERE id = ?", (row,))


def _dead(pid: int, boot: str) -> bool:
    if boot != _boot_id():
        return True
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def restore_interrupted(session: Session) -> list[str]:
    """Put back what commands of a dead sidecar left changed; the paths reported."""
    store = session.store
    if store is None:
        return []
    rows = store.store.execute(
        "SELECT id, root, pid, boot, started_at, data FROM command_snapshots "
        "WHERE workspace_id = ?",
        (store.id,),
    )
    changed: list[str] = []
    roots = [r.real_path for r in session.folders.roots]
    for row_id, root, pid, boot, started_at, data in rows:
        if not _dead(int(pid), str(boot)):
            continue  # another sidecar's command is running
        ours = any(root == r or root.startswith(r.rstrip("/") + "/") for r in roots)
        if ours and os.path.isdir(root):  # never a directory outside the folders opened
            try:
                raw = bytes(data)
                until = json.loads(raw).get("until", float(started_at) + _LONGEST_S)
                found = watch.changed_and_restore(root, decode(raw), keep=True, since=float(until))
            except Exception:
                log.exception("restoring after an interrupted command failed")
                found = []
            if found:
                log.warning("an interrupted command had changed %s; put back", ", ".join(found))
                session.notify(
                    "window/showMessage",
                    {
                        "type": 2,  # Warning
                        "message": shown(
                            "s-code: a command of an earlier session that ended while it ran "
                            f"had changed protected paths in {root}; they are put back as they "
                            "were before it (what was there instead is set aside as "
                            f"*{QUARANTINE}-*; what changed after it had ended is left as "
                            f"it is): {', '.join(found)}"
                        ),
                    },
                )
            changed += found
        drop(store, int(row_id))
    return changed
