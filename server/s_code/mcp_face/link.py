"""The agent link: how ``s-code mcp`` reaches the editor's sidecar for the same workspace.

The sidecar listens on a unix socket of its own user, one per workspace root, at
``$XDG_RUNTIME_DIR/s-code/agent-<digest of the root's real path>.sock`` (without
``XDG_RUNTIME_DIR``: ``run/`` in s-code's state directory), mode 0600 in a 0700 folder, never
TCP, with a token file beside it (0600). A peer must run as the same uid (``SO_PEERCRED``) and
present the token in its first message (JSON-RPC, Content-Length framed as
:mod:`s_code.protocol.framing` has it):

- ``s-code/agent/attach { token, workspace, handoff? }`` → ``{ folders, mode, agentId,
  handoff }`` (a workspace that is not inside the editor's folders is refused): from then on
  the agent's MCP stream (newline-delimited JSON, as on stdio) is served in the sidecar by the
  MCP face over the editor's session, on the agent's own stdin and stdout handed over
  (``handoff``, :mod:`s_code.lsp.handoff`) or on the connection, with ``s-code mcp`` copying
  the bytes (:mod:`.relay`);
- ``s-code/agent/list { token }`` → ``{ agents: [{ id, name }] }``, and the connection ends
  (``s-code doctor``).

Nothing else is served on it: no mode, no approval, no editor prompt is within an agent's reach.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from typing import Any

ATTACH = "s-code/agent/attach"
LIST = "s-code/agent/list"


def runtime_dir() -> str:
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):
        return os.path.join(base, "s-code")
    from s_code.state.store import state_dir

    return os.path.join(state_dir(), "run")


@dataclass(frozen=True)
class Place:
    socket: str
    token: str


def place(root: str, folder: str | None = None) -> Place:
    """Where the agent link of the workspace root ``root`` lives (in ``folder``, else
    :func:`runtime_dir`)."""
    digest = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape"))
    stem = os.path.join(folder or runtime_dir(), "agent-" + digest.hexdigest()[:20])
    return Place(stem + ".sock", stem + ".token")


class Refused(Exception):
    """A socket or token file that must not be trusted; the message says why in one line."""


def check_private(path: str, kind: str) -> None:
    """``path`` must be ours, not a link, and reachable by no one else (mode 0600, or a 0700
    folder): else Refused."""
    st = os.lstat(path)
    if st.st_uid != os.getuid():
        raise Refused(f"{path} belongs to uid {st.st_uid}, not to you ({os.getuid()}): refused")
    wanted = stat.S_ISSOCK if kind == "socket" else stat.S_ISREG
    if not wanted(st.st_mode):
        raise Refused(f"{path} is not a {kind}: refused")
    if st.st_mode & 0o077:
        raise Refused(f"{path} has mode {stat.S_IMODE(st.st_mode):o}, not 600: refused")
    folder = os.lstat(os.path.dirname(path))
    if folder.st_uid != os.getuid() or folder.st_mode & 0o077:
        raise Refused(f"{os.path.dirname(path)} is not a private folder of yours: refused")


def find(workspace: str) -> tuple[str, Place] | None:
    """The root (the workspace or a folder holding it) whose sidecar serves it, and its link;
    None when no editor serves it."""
    current = os.path.realpath(workspace)
    while True:
        where = place(current)
        if os.path.lexists(where.socket):
            return current, where
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def status(workspace: str) -> dict[str, object]:
    """For ``s-code doctor``: where the link of ``workspace`` is, whether an editor answers on it,
    and which agents are attached (a short synchronous exchange)."""
    import socket

    from s_code.protocol.framing import frame, read_framed

    found = find(workspace)
    report: dict[str, object] = {"runtime_dir": runtime_dir(), "socket": None, "editor": False}
    if found is None:
        return report
    root, where = found
    report.update({"root": root, "socket": where.socket})
    try:
        check_private(where.socket, "socket")
        check_private(where.token, "file")
        with open(where.token, encoding="utf-8") as f:
            token = f.read().strip()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(where.socket)
            asked = {"token": token}
            sock.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": LIST, "params": asked}))
            reply = read_framed(sock)
    except (Refused, OSError) as exc:
        report["problem"] = str(exc)
        return report
    listed: dict[str, Any] = reply if isinstance(reply, dict) else {}
    report["editor"] = "result" in listed
    report["agents"] = listed.get("result", {}).get("agents", [])
    return report
