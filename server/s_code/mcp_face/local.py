"""The standalone backend: a session of its own on ``--workspace``, in ``--mode``.

Approvals go to the agent's own client (:mod:`s_code.mcp_face.elicit`) or fail closed. The
user's host processes (MCP servers, hooks) are read as in the editor: what the user approved
there runs here too, and nothing is approved from here (the agent cannot approve them).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from s_code.approvals.caller import Caller
from s_code.mcp_face.definitions import listed
from s_code.mcp_face.elicit import ElicitApprover
from s_code.session.options import SessionOptions
from s_code.session.session import Session
from s_code.tools import dispatch
from s_code.tools.host import end_session, open_session

log = logging.getLogger(__name__)


class LocalBackend:
    def __init__(self, workspace: str, permission_mode: str) -> None:
        options = SessionOptions.model_validate({"permissionMode": permission_mode})
        self.session: Session = open_session(
            [(workspace, None)], options, approver=ElicitApprover()
        )
        self._hosts: Any = None
        self._started: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Read the host processes in the background (a trusted MCP server starts)."""

        async def hosts() -> None:
            from s_code.tools.hosts import HostProcesses
            from s_code.tools.registry import Registry

            registry = self.session.registry
            assert isinstance(registry, Registry)
            self._hosts = HostProcesses(
                self.session, registry, self.session.folders.primary.real_path
            )
            try:
                await self._hosts.refresh()
            except Exception as exc:
                log.error("host processes could not be read: %s", exc)

        self._started = asyncio.get_running_loop().create_task(hosts())

    async def tools(self, loaded: set[str]) -> list[dict[str, Any]]:
        return listed(self.session, loaded)

    async def call(self, name: str, arguments: Any, caller: Caller) -> Any:
        return await dispatch.call(self.session, name, arguments, caller=caller)

    async def close(self) -> None:
        if self._started is not None and not self._started.done():
            self._started.cancel()
        if self._hosts is not None:
            await self._hosts.close()
        else:
            await end_session(self.session)
        self.session.close()
