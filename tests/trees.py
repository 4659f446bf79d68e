"""Workspace trees for the discovery and search tests, and a fixture that opens Folders on them
(closing them afterwards)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from s_code.workspace.folders import Folders


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> content; a path ending in ``/`` is an empty dir)."""
    for rel, content in files.items():
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    return root


@pytest.fixture
def folders_of() -> Iterator[object]:
    opened: list[Folders] = []

    def open_(*roots: tuple[Path, str | None]) -> Folders:
        f = Folders.open([(str(p), name) for p, name in roots])
        opened.append(f)
        return f

    yield open_
    for f in opened:
        f.close()
