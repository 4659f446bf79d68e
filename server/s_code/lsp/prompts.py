"""Asking the user through the editor's own prompt: ``window/showMessageRequest``."""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from s_code.approvals.cards import Card

log = logging.getLogger(__name__)
APPROVE, DENY = "Approve once", "Deny"


class PromptApprover:
    """One question per card; anything but an explicit "Approve once" is a denial."""

    def __init__(self, server: LanguageServer, can_prompt: bool) -> None:
        self.server = server
        self.can_prompt = can_prompt

    async def ask(self, card: Card) -> bool:
        if not self.can_prompt:
            return False
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"s-code: {card.title}?",
            actions=[types.MessageActionItem(title=APPROVE), types.MessageActionItem(title=DENY)],
        )
        try:
            answer = await self.server.window_show_message_request_async(params)
        except Exception as exc:
            log.warning("the approval prompt failed: %s", exc)
            return False
        return answer is not None and getattr(answer, "title", None) == APPROVE


def can_prompt(caps: types.ClientCapabilities) -> bool:
    return caps.window is not None and caps.window.show_message is not None
