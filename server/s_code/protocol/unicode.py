"""Lone UTF-16 surrogates: valid JSON escapes, but not text. Found here, refused by field."""

from __future__ import annotations

import json
from typing import Any


def field_path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "<params>"


def all_encodable(raw: Any) -> bool:
    """One C-speed pass: can every string in ``raw`` be encoded as UTF-8?"""
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    except (TypeError, ValueError):
        return True  # not JSON data: leave it to the model
    return True


def unencodable(value: Any, path: tuple[int | str, ...]) -> tuple[int | str, ...] | None:
    """The path of the first string (or key) that cannot be encoded as UTF-8, if any."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or ("<params>",)
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = unencodable(key, (*path, "<key>")) or unencodable(item, (*path, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = unencodable(item, (*path, i))
            if found is not None:
                return found
    return None
