"""LspEditor.apply_edit when the editor never answers: a buffer that already holds the edit
(its didChange arrived) counts as applied, so the change keeps its undo record; anything else
is a refusal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.workspace import Workspace

from s_code.lsp import editor
from s_code.lsp.editor import LspEditor
from s_code.workspace.documents import OpenDocument

URI = "file:///ws/a.txt"
OLD, NEW = "one\ntwo\n", "one\nTWO\n"


class SilentEditor:
    """Applies (or not) what it is sent, sends its didChange, and never answers."""

    def __init__(self, becomes: str | None) -> None:
        self.workspace = Workspace(None)
        self.workspace.put_text_document(
            types.TextDocumentItem(uri=URI, language_id="text", version=1, text=OLD)
        )
        self.becomes = becomes

    async def workspace_apply_edit_async(self, params: Any) -> Any:
        if self.becomes is not None:
            self.workspace.update_text_document(
                types.VersionedTextDocumentIdentifier(uri=URI, version=2),
                types.TextDocumentContentChangeWholeDocument(text=self.becomes),
            )
        await asyncio.Event().wait()


@pytest.mark.parametrize(
    ("becomes", "applied"),
    [(NEW, True), (None, False), ("one\ntwo, typed by the user\n", False)],
    ids=["holds-the-edit", "unchanged", "changed-otherwise"],
)
async def test_an_unanswered_apply_edit_counts_only_when_the_buffer_holds_it(
    monkeypatch: pytest.MonkeyPatch, becomes: str | None, applied: bool
) -> None:
    monkeypatch.setattr(editor, "APPLY_EDIT_TIMEOUT", 0.2)
    bridge = LspEditor(SilentEditor(becomes), can_apply_edit=True)  # type: ignore[arg-type]
    assert await bridge.apply_edit(OpenDocument(URI, OLD, 1), NEW, "s-code: a.txt") is applied
