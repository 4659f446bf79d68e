"""The open-buffer overlay: read_file returns what the editor holds, unsaved, not the disk."""

from __future__ import annotations

import hashlib

from lsprotocol import types
from pytest_lsp import LanguageClient

from s_code.protocol import methods
from tests.e2e.support import call


def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="text", version=1, text=text)
        )
    )


async def test_unsaved_buffer_wins_over_disk(client: LanguageClient) -> None:
    path = client.workspace_root / "notes.txt"  # type: ignore[attr-defined]
    disk = await call(client, methods.READ_FILE, {"path": "notes.txt"})
    unsaved = "alpha\nBETA (typed, not saved)\ngamma\ndelta\n"
    _open(client, path.as_uri(), unsaved)
    read = await call(client, methods.READ_FILE, {"path": "notes.txt"})
    assert read["source"] == "buffer"
    assert read["numbered_content"].splitlines()[1] == "     2\tBETA (typed, not saved)"
    assert read["sha256"] == hashlib.sha256(unsaved.encode()).hexdigest()
    assert read["revision"] != disk["revision"]
    assert path.read_text() == "alpha\nbeta\ngamma\n"  # the disk is untouched

    # An incremental change: replace line 4 ("delta") with "omega".
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(3, 0), types.Position(3, 5)), text="omega"
                )
            ],
        )
    )
    changed = await call(client, methods.READ_FILE, {"path": "notes.txt", "start_line": 4})
    assert changed["numbered_content"] == "     4\tomega\n"

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=path.as_uri()))
    )
    closed = await call(client, methods.READ_FILE, {"path": "notes.txt"})
    assert closed["source"] == "disk" and closed["revision"] == disk["revision"]


async def test_new_unsaved_buffer_is_readable(client: LanguageClient) -> None:
    path = client.workspace_root / "draft.md"  # type: ignore[attr-defined]
    _open(client, path.as_uri(), "# not on disk yet\n")
    read = await call(client, methods.READ_FILE, {"path": "draft.md"})
    assert read["source"] == "buffer" and read["line_count"] == 1
    assert not path.exists()
