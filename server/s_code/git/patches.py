"""Splitting ``git diff`` / ``git show`` patch text into per-file sections."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Change = Literal["added", "deleted", "modified", "renamed", "copied", "mode_changed"]

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(text: str) -> str:
    """Undo git's C-style path quoting (``"a/t\\303\\251st"`` → ``a/tést``)."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    body = text[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            digits = body[i + 1 : i + 4]
            if len(digits) == 3 and all(d in "01234567" for d in digits):
                out.append(int(digits, 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _side(token: str, prefix: str) -> str | None:
    path = unquote(token.strip())
    if path == "/dev/null":
        return None
    return path[len(prefix) :] if path.startswith(prefix) else path


@dataclass
class FileDiff:
    path: str
    old_path: str | None
    change: Change
    binary: bool
    additions: int
    deletions: int
    patch: str


def _from_header(header: str) -> tuple[str | None, str | None]:
    """Paths from ``diff --git a/X b/Y`` when no other line names them (same path both sides)."""
    rest = header[len("diff --git ") :]
    if rest.startswith('"'):
        end = rest.index('"', 1)
        while rest[end - 1] == "\\":
            end = rest.index('"', end + 1)
        a, b = rest[: end + 1], rest[end + 2 :]
        return _side(a, "a/"), _side(b, "b/")
    n = (len(rest) - 5) // 2
    if rest[:2] == "a/" and rest[n + 2 : n + 5] == " b/" and rest[2 : n + 2] == rest[n + 5 :]:
        return rest[2 : n + 2], rest[n + 5 :]
    a, _, b = rest.partition(" b/")
    return a.removeprefix("a/"), b


def _section(lines: list[str]) -> FileDiff:
    header = lines[0]
    old: str | None = None
    new: str | None = None
    named = False
    change: Change = "modified"
    binary = False
    adds = dels = 0
    in_hunk = False
    combined = not header.startswith("diff --git ")
    if combined:
        name = unquote(header.split(" ", 2)[2])
        old = new = name
        named = True
    for line in lines[1:]:
        if in_hunk:
            if line.startswith("+"):
                adds += 1
            elif line.startswith("-"):
                dels += 1
            elif line.startswith("@@"):
                pass
            continue
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith("--- "):
            old, named = _side(line[4:], "a/"), True
        elif line.startswith("+++ "):
            new = _side(line[4:], "b/")
        elif line.startswith("rename from "):
            old, change, named = unquote(line[12:]), "renamed", True
        elif line.startswith("rename to "):
            new = unquote(line[10:])
        elif line.startswith("copy from "):
            old, change, named = unquote(line[10:]), "copied", True
        elif line.startswith("copy to "):
            new = unquote(line[8:])
        elif line.startswith("new file mode "):
            change = "added"
        elif line.startswith("deleted file mode "):
            change = "deleted"
        elif line.startswith("new mode ") and change == "modified":
            change = "mode_changed"
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            binary = True
    if not named:
        old, new = _from_header(header)
    if change == "added":
        old = None
    if change == "deleted":
        new = None
    path = new if new is not None else (old or "")
    if change == "mode_changed" and (adds or dels):
        change = "modified"
    return FileDiff(
        path=path,
        old_path=old if change in ("renamed", "copied") else None,
        change=change,
        binary=binary,
        additions=adds,
        deletions=dels,
        patch="\n".join(lines) + "\n",
    )


def _starts_section(line: str) -> bool:
    return line.startswith(("diff --git ", "diff --cc ", "diff --combined "))


def split_patch(raw: bytes) -> list[FileDiff]:
    """The per-file sections of a patch (text before the first ``diff`` line is dropped)."""
    text = raw.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    sections: list[list[str]] = []
    for line in lines:
        if _starts_section(line):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
    return [_section(s) for s in sections]
