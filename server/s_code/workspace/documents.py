"""Revisions, and the editor's open documents as the core sees them (no LSP types here)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

REVISION_LENGTH = 16


@dataclass(frozen=True)
class OpenDocument:
    """An editor buffer: its URI, current text and the version the editor last reported."""

    uri: str
    text: str
    version: int | None


# Given the absolute spellings of a path, the text of the editor buffer open on it, or None.
Overlay = Callable[[tuple[str, ...]], str | None]


class Documents(Protocol):
    def __call__(self, paths: tuple[str, ...]) -> str | None: ...

    def document(self, paths: tuple[str, ...]) -> OpenDocument | None: ...


class _NoDocuments:
    def __call__(self, paths: tuple[str, ...]) -> str | None:
        return None

    def document(self, paths: tuple[str, ...]) -> OpenDocument | None:
        return None


no_overlay = _NoDocuments()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def revision_of(sha256: str) -> str:
    """The revision is the first 16 hex characters of the SHA-256 of the file's exact bytes."""
    return sha256[:REVISION_LENGTH]
