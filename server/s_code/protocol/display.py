"""Text shown to the user, made safe to show: control, bidi and invisible characters escaped.

Anything a repository or an agent controls (paths, argv, diff lines, server names) passes
through :func:`shown` before it reaches a prompt, a card document or a CLI line, so a file named
``notes\\u202etxt.sh`` cannot display as "noteshs.txt", and a name holding ``\\n\\nApproved`` cannot
add a line of its own. Escapes are C-style for the common controls (``\\n``, ``\\t``, ``\\x1b``)
and ``\\u202e`` for the rest: visible, and never mistaken for the character itself.
"""

from __future__ import annotations

import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 and C1 controls, DEL, line and paragraph separators, and every format character (bidi
# embeddings, overrides and isolates, zero-width joiners and spaces, the BOM, soft hyphen...).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]"
)


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def _other(ch: str) -> str:
    """A character :data:`_UNSAFE` does not name but Python cannot print (other format,
    private-use, unassigned, surrogate) escaped; anything printable kept."""
    if ch.isprintable() or ch == " ":
        return ch
    code = ord(ch)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character escaped (newlines kept when ``keep_newlines``: a
    diff or a document whose lines are each escaped on their own)."""
    if text.isascii() and text.isprintable():
        return text
    if keep_newlines:
        return "\n".join(shown(line) for line in text.split("\n"))
    out = _UNSAFE.sub(_escape, text)
    return out if out.isprintable() else "".join(_other(c) for c in out)


def head_tail(text: str, limit: int, tail: int | None = None) -> str:
    """``text`` when it fits ``limit`` characters, else its head and tail around ``…``: a long
    command's end is where a payload hides, so the end is always shown."""
    if len(text) <= limit:
        return text
    keep_tail = tail if tail is not None else limit // 3
    keep_head = max(limit - keep_tail - 1, 1)
    return f"{text[:keep_head]}…{text[-keep_tail:]}"
