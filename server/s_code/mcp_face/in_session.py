"""The backend of an attached agent, in the editor's sidecar: the editor's own session.

Calls go through the one dispatch with the agent as the caller, so the editor's prompts, mode,
protected paths, hooks and turns apply; the approver is the editor's (never the agent's own
client: an agent's elicitation answer approves nothing here).
"""

from __future__ import annotations

from typing import Any

from s_code.approvals.caller import Caller
from s_code.mcp_face.definitions import listed
from s_code.session.session import Session
from s_code.tools import dispatch


class SessionBackend:
    def __init__(self, session: Session) -> None:
        self.session = session

    async def tools(self, loaded: set[str]) -> list[dict[str, Any]]:
        return listed(self.session, loaded)

    async def call(self, name: str, arguments: Any, caller: Caller) -> Any:
        return await dispatch.call(self.session, name, arguments, caller=caller)

    async def close(self) -> None:
        return None
