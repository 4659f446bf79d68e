"""Revisions and the open-document overlay the editor keeps current."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

REVISION_LENGTH = 16

# Given the absolute spellings of a path, the text of the editor buffer open on it, or None.
Overlay = Callable[[tuple[str, ...]], str | None]


def no_overlay(_paths: tuple[str, ...]) -> str | None:
    return None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def revision_of(sha256: str) -> str:
    """The revision is the first 16 hex characters of the SHA-256 of the file's exact bytes."""
    return sha256[:REVISION_LENGTH]
