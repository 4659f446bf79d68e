"""Asking the user in the editor: ``window/showMessageRequest`` or ``s-code/approval/request``.

The question is the card's one-line message; the actions are "Deny", "Show details" and "Approve
once", in that order: a client that preselects the first action (eglot's minibuffer default, a
dialog's default button) denies on a stray Enter. Details open the whole card (its rendered
document) through ``window/showDocument``, or as a message when the client cannot show documents,
and the question is asked again. A client
that declares ``experimental.sCode.approvalCards`` gets the card itself (with its rendering) and
answers ``{decision: "approve" | "deny"}``. ``window/showMessageRequest`` is base LSP: every other
client is asked through it, whatever it declared. Anything but an explicit approval is a denial;
a client that answers the request with an error could not show it, and the denial says so. The
transport only carries questions: the policy decided to ask before any of this runs.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from s_code.approvals.approver import PromptUnavailable
from s_code.approvals.cards import Card
from s_code.approvals.render import document, message, wire
from s_code.protocol import methods

log = logging.getLogger(__name__)
APPROVE, DENY, DETAILS = "Approve once", "Deny", "Show details"
_MAX_DETAILS = 5


class PromptApprover:
    """One question per card. ``pending`` holds the cards being asked about, for
    ``s-code/approval/details``."""

    def __init__(
        self,
        server: LanguageServer,
        can_show_document: bool = False,
        approval_cards: bool = False,
        cards_dir: str | None = None,
    ) -> None:
        self.server = server
        self.can_show_document = can_show_document
        self.approval_cards = approval_cards
        self.cards_dir = cards_dir
        self.pending: dict[str, Card] = {}

    async def ask(self, card: Card) -> bool:
        self.pending[card.id] = card
        try:
            if self.approval_cards:
                return await self._ask_card(card)
            return await self._ask_message(card)
        finally:
            self.pending.pop(card.id, None)

    async def _ask_card(self, card: Card) -> bool:
        try:
            answer = await self.server.protocol.send_request_async(
                methods.APPROVAL_REQUEST, {"card": wire(card)}
            )
        except Exception as exc:
            log.warning("the approval request failed: %s", exc)
            raise PromptUnavailable(f"{methods.APPROVAL_REQUEST} failed: {exc}") from None
        return isinstance(answer, dict) and answer.get("decision") == "approve"

    async def _ask_message(self, card: Card) -> bool:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message(card),
            actions=[types.MessageActionItem(title=t) for t in (DENY, DETAILS, APPROVE)],
        )
        for _ in range(_MAX_DETAILS):
            try:
                answer = await self.server.window_show_message_request_async(params)
            except Exception as exc:
                log.warning("the approval prompt failed: %s", exc)
                raise PromptUnavailable(f"window/showMessageRequest failed: {exc}") from None
            title = getattr(answer, "title", None)
            if title != DETAILS:
                return title == APPROVE
            await self.show_details(card)
        return False

    async def show_details(self, card: Card) -> None:
        text = document(card)
        if self.can_show_document and self.cards_dir is not None:
            path = self._write(card, text)
            try:
                await self.server.window_show_document_async(
                    types.ShowDocumentParams(uri=f"file://{path}", take_focus=True)
                )
                return
            except Exception as exc:
                log.warning("showDocument failed, showing the card as a message: %s", exc)
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=text)
        )

    def _write(self, card: Card, text: str) -> str:
        assert self.cards_dir is not None
        os.makedirs(self.cards_dir, mode=0o700, exist_ok=True)
        path = os.path.join(self.cards_dir, f"{card.id}.md")
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o444)  # a rendered card: read-only in the editor
        os.replace(tmp, path)
        return path

    def details(self, card_id: str) -> dict[str, Any] | None:
        card = self.pending.get(card_id)
        return None if card is None else {"card": wire(card), "text": document(card)}


def can_show_document(caps: types.ClientCapabilities) -> bool:
    show = caps.window.show_document if caps.window is not None else None
    return bool(show is not None and show.support)


def wants_approval_cards(caps: types.ClientCapabilities) -> bool:
    experimental = caps.experimental if isinstance(caps.experimental, dict) else {}
    s_code = experimental.get("sCode")
    return isinstance(s_code, dict) and s_code.get("approvalCards") is True
