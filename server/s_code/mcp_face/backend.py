"""What the MCP face serves from: a session of its own (standalone) or the editor's (attached).

Both run every call through the one dispatch; the face only decodes, streams and replies.
"""

from __future__ import annotations

from typing import Any, Protocol

from s_code.approvals.caller import Caller


class Backend(Protocol):
    async def tools(self, loaded: set[str]) -> list[dict[str, Any]]:
        """The ``tools/list`` entries: the core profile and the ``loaded`` specialized tools."""
        ...

    async def call(self, name: str, arguments: Any, caller: Caller) -> Any:
        """The tool's wire result; raises ``SCodeError`` for a tool error."""
        ...

    async def close(self) -> None: ...
