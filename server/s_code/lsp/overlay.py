"""The open-document overlay, read from pygls' in-memory workspace."""

from __future__ import annotations

import os

from pygls.uris import to_fs_path
from pygls.workspace import Workspace

from s_code.workspace.documents import OpenDocument


class BufferOverlay:
    """Maps absolute file paths to the text of the editor buffers open on them."""

    def __init__(self) -> None:
        self.workspace: Workspace | None = None

    def document(self, paths: tuple[str, ...]) -> OpenDocument | None:
        ws = self.workspace
        if ws is None:
            return None
        wanted = {os.path.normpath(p) for p in paths}
        for uri, doc in list(ws.text_documents.items()):
            fs = to_fs_path(uri)
            if fs is not None and os.path.normpath(fs) in wanted:
                return OpenDocument(uri, str(doc.source), doc.version)
        return None

    def __call__(self, paths: tuple[str, ...]) -> str | None:
        doc = self.document(paths)
        return None if doc is None else doc.text
