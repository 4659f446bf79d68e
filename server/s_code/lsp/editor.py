"""The editor bridge: agent edits of open buffers go through ``workspace/applyEdit``; a client
that declares ``experimental.sCode.saveDocuments`` saves buffers on ``s-code/documents/save``.

The edit is a versioned ``TextDocumentEdit`` on the document version the server last saw, so an
editor whose buffer moved on refuses it, and the user's undo stack keeps working. Only the changed
lines are replaced.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from s_code.protocol import methods
from s_code.workspace.documents import OpenDocument

log = logging.getLogger(__name__)
APPLY_EDIT_TIMEOUT = 60.0
SAVE_TIMEOUT = 10.0


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def minimal_edit(old: str, new: str, units: Callable[[str], int]) -> types.TextEdit:
    """One TextEdit replacing the changed run of whole lines of ``old`` by ``new``'s."""
    a, b = _lines(old), _lines(new)
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    s = 0
    while s < len(a) - p and s < len(b) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    end_line = len(a) - s
    if end_line == len(a) and a and not a[-1].endswith("\n"):
        end = types.Position(line=len(a) - 1, character=units(a[-1]))
    else:
        end = types.Position(line=end_line, character=0)
    return types.TextEdit(
        range=types.Range(start=types.Position(line=p, character=0), end=end),
        new_text="".join(b[p : len(b) - s]),
    )


class LspEditor:
    def __init__(
        self, server: LanguageServer, can_apply_edit: bool, can_save: bool = False
    ) -> None:
        self.server = server
        self.can_apply_edit = can_apply_edit
        self.can_save = can_save

    async def save(self, uris: list[str]) -> None:
        """Ask the editor to save these buffers; the caller looks at the disk afterwards, so a
        refusal, an error or no answer only leaves them unsaved."""
        try:
            await asyncio.wait_for(
                self.server.protocol.send_request_async(methods.DOCUMENTS_SAVE, {"uris": uris}),
                SAVE_TIMEOUT,
            )
        except Exception as exc:
            log.warning("%s failed: %s", methods.DOCUMENTS_SAVE, exc)

    async def apply_edit(self, doc: OpenDocument, new_text: str, label: str) -> bool:
        codec = self.server.workspace.position_codec
        edit = minimal_edit(doc.text, new_text, codec.client_num_units)
        params = types.ApplyWorkspaceEditParams(
            label=label,
            edit=types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=doc.uri, version=doc.version
                        ),
                        edits=[edit],
                    )
                ]
            ),
        )
        try:
            result = await asyncio.wait_for(
                self.server.workspace_apply_edit_async(params), APPLY_EDIT_TIMEOUT
            )
        except Exception as exc:  # the editor failed or timed out
            if self._shows(doc, new_text):  # ...but its buffer already holds the edit
                log.warning("workspace/applyEdit unanswered (%s), but the buffer holds it", exc)
                return True
            log.warning("workspace/applyEdit failed: %s", exc)
            return False
        applied = bool(getattr(result, "applied", False))
        if not applied:
            log.info(
                "editor refused the edit of %s: %s",
                doc.uri,
                getattr(result, "failure_reason", None),
            )
        return applied

    def _shows(self, doc: OpenDocument, new_text: str) -> bool:
        """The buffer moved past ``doc``'s version to exactly ``new_text``: the editor applied
        the edit (its didChange arrived) even though its answer did not."""
        now = self.server.workspace.text_documents.get(doc.uri)
        version = getattr(now, "version", None)
        if now is None or not isinstance(version, int) or doc.version is None:
            return False
        return version > doc.version and now.source == new_text


def supports_apply_edit(caps: types.ClientCapabilities) -> bool:
    ws = caps.workspace
    if ws is None or not ws.apply_edit:
        return False
    return bool(ws.workspace_edit and ws.workspace_edit.document_changes)


def supports_save(caps: types.ClientCapabilities) -> bool:
    experimental = caps.experimental if isinstance(caps.experimental, dict) else {}
    s_code = experimental.get("sCode")
    return isinstance(s_code, dict) and s_code.get("saveDocuments") is True
