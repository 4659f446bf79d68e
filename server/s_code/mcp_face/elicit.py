"""Approvals in a standalone session: the agent's own client asks its user (MCP elicitation).

Only where the connection's revision lets the server ask the client (the 2025 revisions'
``elicitation/create``) and the client declared it can; the card's one-line question and its
whole text are the message, and the answer is a choice of ``approve`` or ``deny``. Anything but an
accepted ``approve`` is a denial: declined, cancelled, an unreadable answer, no answer within
:data:`ANSWER_TIMEOUT_S`. Where the client cannot be asked, the call fails closed
(``approval_denied``, ``reason: "no_prompt"``) with a message that says how to get a prompt.
An attached session never comes here: there, only the editor approves.
"""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from s_code.approvals.approver import PromptUnavailable
from s_code.approvals.cards import Card
from s_code.approvals.render import document, message

ANSWER_TIMEOUT_S = 300.0
MAX_TEXT = 6000
HOW = (
    "open this workspace in an editor with s-code (VS Code, Neovim, Emacs: the agent then "
    "attaches to it and the editor asks), or start `s-code mcp` with another --mode"
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Your decision",
            "enum": ["deny", "approve"],
            "enumNames": ["Deny", "Approve once"],
        }
    },
    "required": ["decision"],
}

REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("s_code_mcp_request", default=None)
"""The MCP request being served (``ServerRequestContext``), set by the face for each call."""


class ElicitApprover:
    def __init__(self, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    async def ask(self, card: Card) -> bool:
        ctx = REQUEST.get()
        if ctx is None:
            raise PromptUnavailable(f"no client to ask: {HOW}")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise PromptUnavailable(
                f"this client speaks MCP {ctx.protocol_version}, whose approval rounds s-code "
                f"does not take yet: {HOW}"
            )
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not ctx.session.check_client_capability(wanted):
            raise PromptUnavailable(f"this MCP client cannot show an approval prompt: {HOW}")
        text = f"{message(card)}\n\n{document(card)}"
        if len(text) > MAX_TEXT:
            text = text[: MAX_TEXT - 40] + "\n… (the rest of the card is cut here)"
        try:
            with anyio.fail_after(self.timeout_s):
                answer = await ctx.session.elicit_form(
                    text, SCHEMA, related_request_id=ctx.request_id
                )
        except TimeoutError:
            return False  # no answer in time: a denial
        except MCPError as exc:
            raise PromptUnavailable(
                f"the client could not show the prompt ({exc}): {HOW}"
            ) from None
        content = answer.content if isinstance(answer.content, dict) else {}
        return answer.action == "accept" and content.get("decision") == "approve"
