"""Parsing ``git blame --porcelain`` into lines and the commits they come from."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BlameCommit:
    commit: str
    author_name: str = ""
    author_email: str = ""
    author_time: int = 0
    author_tz: str = ""
    summary: str = ""
    boundary: bool = False
    filename: str = ""


@dataclass(frozen=True)
class BlameLine:
    line_number: int
    commit: str
    original_line: int
    text: str


@dataclass
class Blame:
    lines: list[BlameLine] = field(default_factory=list)
    commits: dict[str, BlameCommit] = field(default_factory=dict)


def parse_blame(raw: bytes, max_lines: int) -> tuple[Blame, bool]:
    """Parse porcelain output; returns the blame and whether ``max_lines`` cut it."""
    out = Blame()
    current: BlameCommit | None = None
    pending: tuple[str, int, int] | None = None
    for line in raw.decode("utf-8", "replace").split("\n"):
        if line.startswith("\t"):
            if pending is None:
                continue
            sha, orig, final = pending
            if len(out.lines) == max_lines:
                return out, True
            out.lines.append(BlameLine(final, sha, orig, line[1:]))
            pending = None
            continue
        if pending is None:
            parts = line.split(" ")
            if len(parts) >= 3 and len(parts[0]) in (40, 64) and parts[1].isdigit():
                sha = parts[0]
                pending = (sha, int(parts[1]), int(parts[2]))
                current = out.commits.setdefault(sha, BlameCommit(sha))
            continue
        if current is None:
            continue
        key, _, value = line.partition(" ")
        if key == "author":
            current.author_name = value
        elif key == "author-mail":
            current.author_email = value.removeprefix("<").removesuffix(">")
        elif key == "author-time" and value.isdigit():
            current.author_time = int(value)
        elif key == "author-tz":
            current.author_tz = value
        elif key == "summary":
            current.summary = value
        elif key == "boundary":
            current.boundary = True
        elif key == "filename":
            current.filename = value
    return out, False
