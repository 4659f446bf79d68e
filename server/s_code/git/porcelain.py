"""Parsing ``git status --porcelain=v2 -z --branch`` into a branch summary and entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

EntryKind = Literal["changed", "renamed", "copied", "unmerged", "untracked", "ignored"]


@dataclass(frozen=True)
class StatusEntry:
    path: str
    kind: EntryKind
    index: str = "."
    """The staged side (X): ``.`` unchanged, M modified, T type changed, A added, D deleted,
    R renamed, C copied, U unmerged; ``?``/``!`` for untracked/ignored."""
    worktree: str = "."
    """The unstaged side (Y), same letters."""
    orig_path: str | None = None
    score: int | None = None
    """Rename or copy similarity (percent)."""
    submodule: bool = False


@dataclass
class Status:
    head: str | None = None
    """The commit HEAD names (None before the first commit)."""
    branch: str | None = None
    """None when HEAD is detached."""
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    entries: list[StatusEntry] = field(default_factory=list)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_status(raw: bytes) -> Status:
    status = Status()
    records = raw.split(b"\0")
    i = 0
    while i < len(records):
        rec = records[i]
        i += 1
        if not rec:
            continue
        tag = rec[:1]
        if tag == b"#":
            _header(status, _text(rec[2:]))
        elif tag == b"1":
            f = rec.split(b" ", 8)
            xy = _text(f[1])
            status.entries.append(
                StatusEntry(_text(f[8]), "changed", xy[0], xy[1], submodule=f[2] != b"N...")
            )
        elif tag == b"2":
            f = rec.split(b" ", 9)
            xy = _text(f[1])
            orig = _text(records[i]) if i < len(records) else None
            i += 1
            kind: EntryKind = "renamed" if f[8][:1] == b"R" else "copied"
            status.entries.append(
                StatusEntry(
                    _text(f[9]),
                    kind,
                    xy[0],
                    xy[1],
                    orig_path=orig,
                    score=int(f[8][1:] or 0),
                    submodule=f[2] != b"N...",
                )
            )
        elif tag == b"u":
            f = rec.split(b" ", 10)
            xy = _text(f[1])
            status.entries.append(
                StatusEntry(_text(f[10]), "unmerged", xy[0], xy[1], submodule=f[2] != b"N...")
            )
        elif tag == b"?":
            status.entries.append(StatusEntry(_text(rec[2:]), "untracked", "?", "?"))
        elif tag == b"!":
            status.entries.append(StatusEntry(_text(rec[2:]), "ignored", "!", "!"))
    return status


def _header(status: Status, line: str) -> None:
    name, _, value = line.partition(" ")
    if name == "branch.oid":
        status.head = None if value == "(initial)" else value
    elif name == "branch.head":
        status.branch = None if value == "(detached)" else value
    elif name == "branch.upstream":
        status.upstream = value
    elif name == "branch.ab":
        ahead, _, behind = value.partition(" ")
        status.ahead, status.behind = int(ahead.lstrip("+")), abs(int(behind))
