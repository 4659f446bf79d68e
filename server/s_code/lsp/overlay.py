"""The open-document overlay, read from pygls' in-memory workspace."""

from __future__ import annotations

import os

from pygls.uris import to_fs_path
from pygls.workspace import Workspace


class BufferOverlay:
    """Maps absolute file paths to the text of the editor buffers open on them."""

    def __init__(self) -> None:
        self.workspace: Workspace | None = None

    def __call__(self, paths: tuple[str, ...]) -> str | None:
        ws = self.workspace
        if ws is None:
            return None
        wanted = {os.path.normpath(p) for p in paths}
        for uri, doc in list(ws.text_documents.items()):
            fs = to_fs_path(uri)
            if fs is not None and os.path.normpath(fs) in wanted:
                return str(doc.source)
        return None
