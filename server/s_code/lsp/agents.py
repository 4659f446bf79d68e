"""The editor's sidecar serves attached agents (``s-code mcp`` processes) on the agent link.

One listener per workspace folder (:func:`s_code.mcp_face.link.place`), started with the
session. A connection is admitted when its peer runs as this user (``SO_PEERCRED``) and its first
message (Content-Length framed) carries the token: ``s-code/agent/attach`` with a workspace
inside the editor's folders, after which the agent's MCP stream (its own stdin and stdout handed
over, :mod:`s_code.lsp.handoff`, or else the connection) is served here by the MCP face
(:mod:`s_code.mcp_face.server`, the SDK imported on the first attach, off the event loop) over
the editor's own session; or ``s-code/agent/list`` (``s-code doctor``), answered and closed.
Anything else closes it. Each agent is a :class:`~s_code.approvals.caller.Caller` of its own:
its calls run through the one dispatch, so the editor's prompts, mode, protected paths, hooks
and turns apply, and its cards name it; its results and its calls' output go to it alone; when
it goes away its calls are cancelled and its terminals end.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import importlib
import json
import logging
import os
import secrets
import uuid
from typing import Any, cast

from s_code.lsp.admission import ADMISSION_BODY_LIMIT, ADMISSION_TIMEOUT, peer_pidfd, peer_uid
from s_code.lsp.handoff import received
from s_code.mcp_face import link
from s_code.mcp_face.fdio import Stream, until_ready
from s_code.protocol.display import shown as display
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.framing import frame, read_message
from s_code.session.session import Session

log = logging.getLogger(__name__)
MAX_AGENTS = 8


def _error(msg_id: Any, err: SCodeError) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": err.code, "message": err.message, "data": err.to_data()},
    }


class Agent:
    """One attached agent's connection, and the MCP face that serves it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.id = "agent-" + uuid.uuid4().hex[:12]
        self.face: Any = None  # s_code.mcp_face.server.Face, once it serves

    @property
    def name(self) -> str:
        """The agent's own name (``clientInfo.name``), once it called a tool."""
        return str(getattr(self.face, "name", ""))

    def send(self, payload: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(frame(payload))


class AgentHub:
    """The listeners of one session, and its attached agents."""

    def __init__(self, session: Session) -> None:
        self.session = session
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
            msg = self._admitted(body)
            if msg is None:
                return
            agent = Agent(writer)
            if msg.get("method") == link.LIST:
                others = [
                    {"id": a.id, "name": display(a.name)} for a in self.agents.values() if a.name
                ]
                agent.send({"jsonrpc": "2.0", "id": msg["id"], "result": {"agents": others}})
                agent = None
                return
            handoff = msg["params"].get("handoff") is True
            if handoff:  # the byte with the agent's descriptors is read by handoff.received
                cast(asyncio.Transport, writer.transport).pause_reading()
            if not self._attach(agent, msg, handoff):
                agent = None
                return
            self.agents[agent.id] = agent
            if not handoff:
                await self._serve(agent, reader, writer)
            elif (streams := await received(writer)) is not None:
                await self._serve_handed(agent, streams, reader)
        except (TimeoutError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            if agent is not None:
                self.agents.pop(agent.id, None)
                await self.end(agent)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _admitted(self, body: bytes | None) -> dict[str, Any] | None:
        """The first message, when it is a request of the link carrying the token."""
        try:
            msg = json.loads(body) if body is not None else None
        except (ValueError, RecursionError):
            return None
        if not isinstance(msg, dict) or msg.get("method") not in (link.ATTACH, link.LIST):
            return None
        raw = msg.get("params")
        given = raw.get("token") if isinstance(raw, dict) else None
        if (
            "id" not in msg
            or not isinstance(given, str)
            or not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self.token.encode())
        ):
            log.warning("a peer on the agent link presented no right token; refused")
            return None
        return msg

    def _attach(self, agent: Agent, msg: dict[str, Any], handoff: bool) -> bool:
        """``s-code/agent/attach``: a workspace inside the editor's folders; the reply, or an
        error and False."""
        params = msg["params"]
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
        result = {
            "folders": folders,
            "mode": self.session.mode,
            "agentId": agent.id,
            "handoff": handoff,
        }
        agent.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        return True

    async def _serve(
        self, agent: Agent, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """The rest of the connection is the agent's MCP stream, served over this session."""
        server = await asyncio.to_thread(importlib.import_module, "s_code.mcp_face.server")
        from s_code.mcp_face.in_session import SessionBackend

        agent.face = server.Face(SessionBackend(self.session), agent.id)

        async def read() -> bytes:
            return await reader.read(65536)

        async def write(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        await agent.face.serve_stream(read, write)

    async def _serve_handed(
        self, agent: Agent, streams: tuple[Stream, Stream], reader: asyncio.StreamReader
    ) -> None:
        """The agent's MCP stream on its own stdin and stdout (handed over): served until the
        agent closes its stdin, or its ``s-code mcp`` ends: the process (its pidfd), or the
        connection (what it handed over cannot keep the agent here once it is gone)."""
        stdin, stdout = streams
        pidfd: int | None = None
        waits: list[asyncio.Future[Any]] = []
        try:
            pidfd = peer_pidfd(agent.writer.get_extra_info("socket"))
            server = await asyncio.to_thread(importlib.import_module, "s_code.mcp_face.server")
            from s_code.mcp_face.in_session import SessionBackend

            agent.face = server.Face(SessionBackend(self.session), agent.id)
            waits.append(asyncio.ensure_future(agent.face.serve_stream(stdin.read, stdout.write)))
            cast(asyncio.Transport, agent.writer.transport).resume_reading()
            waits.append(asyncio.ensure_future(_until_closed(reader)))
            if pidfd is not None:
                waits.append(asyncio.ensure_future(until_ready(pidfd)))
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
            stdin.close()
            stdout.close()
            if pidfd is not None:
                os.close(pidfd)

    async def end(self, agent: Agent) -> None:
        from s_code.terminals.manager import existing

        terminals = existing(self.session)
        if terminals is not None:
            await terminals.end_owner(agent.id)

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


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """Until the peer closes the connection (what it sends meanwhile is read and dropped)."""
    while await reader.read(4096):
        pass


async def _alive(path: str) -> bool:
    """Does a server answer at the unix socket ``path``?"""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), 1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True
