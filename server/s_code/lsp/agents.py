"""The editor's sidecar serves attached agents (``s-code mcp`` processes) on the agent link.

One listener per workspace folder (:func:`s_code.mcp_face.link.place`), started with the
session. A connection is admitted when its peer runs as this user (``SO_PEERCRED``) and its first
message is ``s-code/agent/attach`` with the token and a workspace inside the editor's folders;
anything else closes it. Each admitted agent is a :class:`~s_code.approvals.caller.Caller` of
its own: its calls run in the editor's session through the one dispatch, so the editor's
prompts, mode, protected paths, hooks and turns apply, and its cards name it; its results and
its calls' output go to it alone; when it goes away its calls are cancelled and its terminals
end.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import secrets
import uuid
from typing import Any

from s_code.approvals.caller import Caller
from s_code.lsp.admission import ADMISSION_BODY_LIMIT, ADMISSION_TIMEOUT, peer_uid
from s_code.mcp_face import link
from s_code.protocol.display import shown as display
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.framing import frame, read_message
from s_code.session.session import Session

log = logging.getLogger(__name__)
MAX_AGENTS = 16


def _error(msg_id: Any, err: SCodeError) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": err.code, "message": err.message, "data": err.to_data()},
    }


def _bad(msg_id: Any, message: str, field: str = "params") -> dict[str, Any]:
    return _error(msg_id, SCodeError(ErrorKind.INVALID_PARAMS, message, field=field))


class Agent:
    """One attached agent's connection."""

    def __init__(self, hub: AgentHub, writer: asyncio.StreamWriter) -> None:
        self.hub = hub
        self.writer = writer
        self.id = "agent-" + uuid.uuid4().hex[:12]
        self.calls: dict[Any, asyncio.Task[None]] = {}
        self.name = ""  # as its last call gave it

    def send(self, payload: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(frame(payload))

    def caller(self, call_id: Any, name: str) -> Caller:
        def notify(method: str, params: dict[str, Any]) -> None:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "method": link.OUTPUT,
                    "params": {"id": call_id, "method": method, "params": params},
                }
            )

        return Caller(self.id, name[:120] or "an MCP client", notify)

    def handle(self, body: bytes) -> None:
        try:
            msg = json.loads(body)
        except (ValueError, RecursionError):
            self.send(_bad(None, "not JSON"))
            return
        if not isinstance(msg, dict):
            self.send(_bad(None, "not a JSON-RPC message"))
            return
        method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params")
        if method == link.CANCEL:
            task = self.calls.get(params.get("id") if isinstance(params, dict) else None)
            if task is not None:
                task.cancel()
            return
        if "id" not in msg or not isinstance(params, dict):
            self.send(_bad(msg_id, "a request with an object of params is expected"))
            return
        if method == link.TOOLS:
            loaded = params.get("loaded", [])
            names = {n for n in loaded if isinstance(n, str)} if isinstance(loaded, list) else set()
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": self.hub.tools(names)})
        elif method == link.LIST:
            others = [
                {"id": a.id, "name": display(a.name)}
                for a in self.hub.agents.values()
                if a is not self and a.name
            ]
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": {"agents": others}})
        elif method == link.CALL:
            if msg_id in self.calls:
                self.send(_bad(msg_id, "a call with this id is running", "id"))
                return
            task = asyncio.get_running_loop().create_task(self._call(msg_id, params))
            self.calls[msg_id] = task
            task.add_done_callback(lambda _t: self.calls.pop(msg_id, None))
        else:
            err = SCodeError(ErrorKind.UNKNOWN_TOOL, f"{method!r} is not served on the agent link")
            self.send(_error(msg_id, err))

    async def _call(self, msg_id: Any, params: dict[str, Any]) -> None:
        name, agent = params.get("name"), params.get("agent")
        if not isinstance(name, str):
            self.send(_bad(msg_id, "name must be a string", "name"))
            return
        caller = self.caller(msg_id, agent if isinstance(agent, str) else "")
        self.name = caller.name
        try:
            result = await self.hub.call(name, params.get("arguments"), caller)
        except asyncio.CancelledError:
            err = SCodeError(ErrorKind.CANCELLED, f"{name} was cancelled")
            self.send(_error(msg_id, err))
            return
        except SCodeError as err:
            self.send(_error(msg_id, err))
            return
        except Exception:
            log.exception("agent call %s failed", name)
            self.send(
                _error(msg_id, SCodeError(ErrorKind.INTERNAL, f"s-code failed to run {name}"))
            )
            return
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def gone(self) -> None:
        """The agent went away: its calls are cancelled, its terminals end."""
        for task in list(self.calls.values()):
            task.cancel()
        if self.calls:
            await asyncio.wait(list(self.calls.values()), timeout=30)
        await self.hub.end(self)


class AgentHub:
    """The listeners of one session, and its attached agents."""

    def __init__(self, session: Session, call: Any, tools: Any) -> None:
        self.session = session
        self.call = call  # (name, arguments, caller) -> wire result
        self.tools = tools  # (loaded names) -> {"tools": [...]}
        self.token = secrets.token_urlsafe(32)
        self.servers: list[tuple[asyncio.Server, link.Place, tuple[int, int]]] = []
        self.agents: dict[str, Agent] = {}
        self.served: list[str] = []  # the folders whose link this session serves
        self.problems: list[str] = []  # why a folder has none (for the editor)

    def folders(self) -> list[str]:
        return [r.real_path for r in self.session.folders.roots]

    async def start(self) -> None:
        for root in self.folders():
            try:
                await self._listen(root)
            except OSError as exc:
                log.warning("agents cannot attach at %s: %s", root, exc)
                self.problems.append(f"agents cannot attach at {root}: {exc}")

    async def _listen(self, root: str) -> None:
        where = link.place(root)
        os.makedirs(os.path.dirname(where.socket), mode=0o700, exist_ok=True)
        os.chmod(os.path.dirname(where.socket), 0o700)
        if os.path.lexists(where.socket):
            if await _alive(where.socket):
                log.warning("another s-code serves agents for %s; this one does not", root)
                self.problems.append(f"another s-code serves agents for {root} at {where.socket}")
                return
            os.unlink(where.socket)
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(
                self._admit, where.socket, limit=ADMISSION_BODY_LIMIT
            )
        finally:
            os.umask(old)
        os.chmod(where.socket, 0o600)
        fd = os.open(
            where.token + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600
        )
        with os.fdopen(fd, "w") as f:
            f.write(self.token)
        os.replace(where.token + ".new", where.token)
        st = os.stat(where.socket)
        self.servers.append((server, where, (st.st_dev, st.st_ino)))
        self.served.append(root)

    async def _admit(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        agent: Agent | None = None
        try:
            uid = peer_uid(writer.get_extra_info("socket"))
            if uid != os.getuid():
                log.warning("an agent of uid %s tried to attach; refused", uid)
                return
            body = await asyncio.wait_for(
                read_message(reader, ADMISSION_BODY_LIMIT), ADMISSION_TIMEOUT
            )
            if body is None:
                return
            agent = Agent(self, writer)
            if not self._attach(agent, body):
                agent = None
                return
            self.agents[agent.id] = agent
            while (body := await read_message(reader)) is not None:
                agent.handle(body)
        except (TimeoutError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            if agent is not None:
                self.agents.pop(agent.id, None)
                await agent.gone()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _attach(self, agent: Agent, body: bytes) -> bool:
        """The first message: ``s-code/agent/attach`` with the token and a workspace inside the
        editor's folders; the reply, or an error and False."""
        try:
            msg = json.loads(body)
        except (ValueError, RecursionError):
            return False
        if not isinstance(msg, dict) or msg.get("method") != link.ATTACH or "id" not in msg:
            return False
        raw = msg.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        given = params.get("token")
        if not isinstance(given, str) or not hmac.compare_digest(
            given.encode("utf-8", "surrogatepass"), self.token.encode()
        ):
            log.warning("an agent presented a wrong token; refused")
            return False
        workspace = params.get("workspace")
        folders = self.folders()
        real = os.path.realpath(workspace) if isinstance(workspace, str) else ""
        if not any(real == f or real.startswith(f + "/") for f in folders):
            err = SCodeError(
                ErrorKind.PATH_ESCAPE,
                f"{workspace!r} is not inside the folders the editor opened",
                field="workspace",
            )
            agent.send(_error(msg["id"], err))
            return False
        if len(self.agents) >= MAX_AGENTS:
            err = SCodeError(ErrorKind.LIMIT_EXCEEDED, f"{MAX_AGENTS} agents are attached")
            agent.send(_error(msg["id"], err))
            return False
        result = {"folders": folders, "mode": self.session.mode, "agentId": agent.id}
        agent.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        return True

    async def end(self, agent: Agent) -> None:
        from s_code.terminals.manager import existing

        terminals = existing(self.session)
        if terminals is not None:
            await terminals.end_owner(agent.id)

    def attached(self) -> list[str]:
        return sorted(self.agents)

    def view(self) -> dict[str, Any]:
        """For the editor (``s-code/agents/list``): the link it serves and who is attached. An
        agent's name is the one its last call gave (empty before its first call), escaped for
        showing (:mod:`s_code.protocol.display`): the agent chose it."""
        return {
            "socket": self.servers[0][1].socket if self.servers else None,
            "folders": list(self.served),
            "agents": [{"id": a.id, "name": display(a.name)} for a in self.agents.values()],
            "problems": list(self.problems),
        }

    async def close(self) -> None:
        for server, where, identity in self.servers:
            server.close()
            with contextlib.suppress(OSError):
                st = os.lstat(where.socket)
                if (st.st_dev, st.st_ino) == identity:  # still ours: no other took the name
                    os.unlink(where.socket)
                    os.unlink(where.token)
        self.servers.clear()
        self.served.clear()
        for agent in list(self.agents.values()):
            agent.writer.close()


async def _alive(path: str) -> bool:
    """Does a server answer at the unix socket ``path``?"""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), 1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True
