"""Approvals in a standalone session: the agent's own client asks its user (MCP elicitation).

Only where the client declared it can (``elicitation``); the card's one-line question and its
whole text are the message, and the answer is a choice of ``approve`` or ``deny``; on a
2026-07-28 connection the same question goes back as the call's ``input_required`` result
(:mod:`s_code.mcp_face.rounds`). Anything but an
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
from s_code.mcp_face.rounds import Rounds

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


ROUNDS: contextvars.ContextVar[Rounds | None] = contextvars.ContextVar(
    "s_code_mcp_rounds", default=None
)
"""A 2026-07-28 call's approval rounds (:mod:`s_code.mcp_face.rounds`), set by the face."""


def prompt_text(card: Card) -> str:
    """What the agent's client shows its user: the one-line question, then the whole card."""
    text = f"{message(card)}\n\n{document(card)}"
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 40] + "\n… (the rest of the card is cut here)"
    return text


def approved(answer: Any) -> bool:
    """An answer approves only as an accepted ``approve`` (anything else is a denial)."""
    if isinstance(answer, dict):
        try:
            answer = types.ElicitResult.model_validate(answer)
        except ValueError:
            return False
    if not isinstance(answer, types.ElicitResult):
        return False
    content = answer.content if isinstance(answer.content, dict) else {}
    return answer.action == "accept" and content.get("decision") == "approve"


class ElicitApprover:
    def __init__(self, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    async def ask(self, card: Card) -> bool:
        ctx = REQUEST.get()
        if ctx is None:
            raise PromptUnavailable(f"no client to ask: {HOW}")
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not ctx.session.check_client_capability(wanted):
            raise PromptUnavailable(f"this MCP client cannot show an approval prompt: {HOW}")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:  # the question goes back as a result
            rounds = ROUNDS.get()
            if rounds is None:
                raise PromptUnavailable(f"no approval round for this call: {HOW}")
            return await rounds.ask(card)
        text = prompt_text(card)
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
        return approved(answer)
