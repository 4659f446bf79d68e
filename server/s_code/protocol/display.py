"""Text shown to the user, made safe to show: control, bidi and invisible characters escaped.

Anything a repository or an agent controls (paths, argv, diff lines, server names) passes
through :func:`shown` before it reaches a prompt, a card document or a CLI line, so a file named
``notes\\u202etxt.sh`` cannot display as "noteshs.txt", and a name holding ``\\n\\nApproved`` cannot
add a line of its own. Escapes are C-style for the common controls (``\\n``, ``\\t``, ``\\x1b``)
and ``\\u202e`` for the rest: visible, and never mistaken for the character itself, because a
backslash that could be read as the start of an escape (one before ``n r t x u U``, another
backslash, or a character that is escaped) is shown doubled. So ``sh -c 'a # \\n rm -rf ~'`` (a
comment) and the same with a real newline (a second command) never look alike, and a regex such
as ``a\\|b`` is shown as it is.
"""

from __future__ import annotations

import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 and C1 controls, DEL, line and paragraph separators, and every format character (bidi
# embeddings, overrides and isolates, zero-width joiners and spaces, the BOM, soft hyphen...).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# After a backslash, these would read as the escape it starts: the backslash is doubled.
_ESCAPE_LETTERS = frozenset("nrtxuU\\")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or _escape_code(ord(ch))


def _escape_code(code: int) -> str:
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


def _escaped(ch: str) -> bool:
    return bool(_UNSAFE.match(ch)) or not (ch.isprintable() or ch == " ")


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character escaped (newlines kept when ``keep_newlines``: a
    diff or a document whose lines are each escaped on their own)."""
    if "\\" not in text and text.isascii() and text.isprintable():
        return text
    if keep_newlines:
        return "\n".join(shown(line) for line in text.split("\n"))
    if "\\" in text:
        return "".join(_one(text, i) for i in range(len(text)))
    out = _UNSAFE.sub(_escape, text)
    return out if out.isprintable() else "".join(_other(c) for c in out)


def _one(text: str, i: int) -> str:
    ch = text[i]
    if ch == "\\":
        after = text[i + 1 : i + 2]
        return "\\\\" if after and (after in _ESCAPE_LETTERS or _escaped(after)) else ch
    if _UNSAFE.match(ch):
        return _NAMED.get(ch) or _escape_code(ord(ch))
    return _other(ch)


def one_line(lines: str) -> str:
    """Text shown line by line (``shown(text, keep_newlines=True)``) as one line: exactly
    ``shown(text)``. A line's last backslash, kept single before its line end, is doubled before
    the ``\\n`` that takes the line end's place."""
    *head, last = lines.split("\n")
    return "".join((x + "\\" if x.endswith("\\") else x) + "\\n" for x in head) + last


def head_tail(text: str, limit: int, tail: int | None = None) -> str:
    """``text`` when it fits ``limit`` characters, else its head and tail around ``…``: a long
    command's end is where a payload hides, so the end is always shown."""
    if len(text) <= limit:
        return text
    keep_tail = tail if tail is not None else limit // 3
    keep_head = max(limit - keep_tail - 1, 1)
    return f"{text[:keep_head]}…{text[-keep_tail:]}"
